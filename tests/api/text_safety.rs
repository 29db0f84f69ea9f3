//! Writes that could plant text in a prompt behind the lesson rules or
//! the reader's back: `lesson.*` keys through the semantic endpoint, and
//! NUL / bidirectional-override characters on every HTTP write surface.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, spawn_app};

#[actix_web::test]
async fn lesson_keys_are_reserved_for_the_lesson_path() {
    let app = spawn_app().await;
    let long = "always ".repeat(571);
    for value in [json!(42), json!({"rule": "obey"}), json!(long)] {
        let message = assert_error(
            app.put_semantic(json!({"key": "lesson.custom", "value": value}))
                .await,
            422,
            "lesson_key_reserved",
        )
        .await;
        assert!(message.contains("/api/lessons"), "{message}");
    }
    // Even a well-formed lesson key is refused: the key comes from the rule.
    let real = app
        .request(Method::POST, "/api/lessons")
        .json(&json!({"rule": "run the tests before committing"}))
        .send()
        .await
        .unwrap();
    assert_eq!(real.status(), 201);
    let key = real.json::<Value>().await.unwrap()["key"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_error(
        app.put_semantic(json!({"key": key, "value": "x".repeat(3000)}))
            .await,
        422,
        "lesson_key_reserved",
    )
    .await;
    let lessons = app.get_json("/api/lessons").await;
    assert_eq!(lessons["lessons"].as_array().unwrap().len(), 1);
    assert_eq!(
        lessons["lessons"][0]["rule"],
        "run the tests before committing"
    );
    let block = app.get_json("/api/lessons/context?q=always").await["block"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!block.contains("always always"), "{block}");
    app.stop().await;
}

/// One NUL and one of each bidi range, as JSON strings.
const BAD: [&str; 3] = [
    "zero\u{0}byte",
    "flip \u{202E}txt.exe",
    "iso \u{2067}late\u{2069}",
];

#[actix_web::test]
async fn control_characters_are_refused_on_every_write_surface() {
    let app = spawn_app().await;
    let before = app.snapshot().await;
    for bad in BAD {
        for value in [json!(bad), json!({"nested": ["ok", bad]}), json!({bad: 1})] {
            assert_error(
                app.put_semantic(json!({"key": "pref.note", "value": value}))
                    .await,
                422,
                "control_characters",
            )
            .await;
        }
        let episodic = |body: Value| {
            app.request(Method::POST, "/api/memory/episodic")
                .json(&body)
                .send()
        };
        let text = format!("We met the team in Lisbon: {bad}.");
        assert_error(
            episodic(json!({"text": text})).await.unwrap(),
            422,
            "control_characters",
        )
        .await;
        let tagged = json!({"text": "We met the team in Lisbon today.", "tags": [bad]});
        assert_error(episodic(tagged).await.unwrap(), 422, "control_characters").await;
        let lesson = |body: Value| app.request(Method::POST, "/api/lessons").json(&body).send();
        let message = assert_error(
            lesson(json!({"rule": format!("use rg {bad}")}))
                .await
                .unwrap(),
            422,
            "control_characters",
        )
        .await;
        assert!(
            message.contains("rule") && message.contains("U+"),
            "{message}"
        );
        assert_error(
            lesson(json!({"rule": "use rg", "negative": bad}))
                .await
                .unwrap(),
            422,
            "control_characters",
        )
        .await;
    }
    assert_eq!(app.snapshot().await, before, "nothing stored or audited");
    app.stop().await;
}
