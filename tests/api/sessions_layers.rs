//! Session start end to end, for what needs more than one layer or the
//! chat model: cross-layer supersession (a lesson over a semantic fact, a
//! semantic fact over a preferences.md line) and the thread history
//! compressed by the real local chat model (head and tail verbatim around
//! its summary), with the truncation fallback when no model serves.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{shared_model, spawn_app, spawn_app_in, spawn_app_with};
use crate::sessions::{assert_receipt_adds_up as assert_adds_up, post, section};

#[actix_web::test]
async fn a_higher_layer_leaves_out_what_it_contradicts_below() {
    let home = tempfile::tempdir().unwrap();
    let memory = home.path().join("workspace/memory");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(
        memory.join("preferences.md"),
        "- Editor: vim\n- Dark mode everywhere\n",
    )
    .unwrap();
    let app = spawn_app_in(home, |s| s.memory.migrated = true).await;
    app.put_semantic(json!({"key": "pref.editor", "value": "emacs", "source": "user_explicit", "confidence": 1.0}))
        .await;
    app.put_semantic(json!({"key": "pref.package_manager", "value": "npm", "source": "consolidation", "confidence": 0.9}))
        .await;
    post(
        &app,
        "/api/lessons",
        json!({"rule": "Use pnpm as the package manager", "negative": "npm"}),
    )
    .await;

    let built = post(
        &app,
        "/api/sessions/s1/start",
        json!({"message": "which editor and package manager do I use?"}),
    )
    .await;
    assert_adds_up(&built);
    let context = built["context"].as_str().unwrap();
    assert!(
        context.contains("Use pnpm as the package manager"),
        "{context}"
    );
    assert!(context.contains("pref.editor: emacs"), "{context}");
    assert!(
        !context.contains("pref.package_manager: npm"),
        "the lesson outranks the fact: {context}"
    );
    assert!(
        !context.contains("Editor: vim"),
        "the fact outranks the preference line: {context}"
    );
    assert!(context.contains("Dark mode everywhere"), "{context}");

    let semantic = section(&built, "semantic").unwrap();
    let npm = semantic["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "pref.package_manager")
        .unwrap();
    assert_eq!(npm["dropped"], "superseded", "{npm}");
    assert!(npm["superseded_by"]
        .as_str()
        .unwrap()
        .starts_with("Use pnpm"));
    let prefs = section(&built, "preferences").unwrap();
    let line = &prefs["items"][0];
    assert_eq!(line["kind"], "markdown_line");
    assert_eq!(line["dropped"], "superseded");
    assert_eq!(line["superseded_by"], "pref.editor");
    app.stop().await;
}

/// 20 messages of 2,500 chars: 50,000 chars, over the 34,650 truncation
/// budget and the 44,550 compressed cap.
fn long_history() -> Value {
    let messages: Vec<Value> = (1..=20)
        .map(|i| {
            let role = if i % 2 == 1 { "user" } else { "assistant" };
            let topic = format!("Message {i}: we discussed the database migration step {i}. ");
            json!({"role": role, "text": topic.repeat(2_500 / topic.len() + 1)})
        })
        .collect();
    Value::Array(messages)
}

#[actix_web::test]
async fn without_a_chat_model_a_long_history_is_truncated_and_says_why() {
    let app = spawn_app().await;
    let built = post(
        &app,
        "/api/sessions/t1/start",
        json!({"message": "go on", "thread_history": long_history()}),
    )
    .await;
    assert_adds_up(&built);
    let receipt = &built["receipt"]["thread_history"];
    assert_eq!(receipt["method"], "truncated", "{receipt}");
    assert!(
        receipt["compression"]
            .as_str()
            .unwrap()
            .starts_with("unavailable"),
        "{receipt}"
    );
    let history = section(&built, "thread_history").unwrap();
    assert_eq!(history["cap"], 34_650);
    assert!(history["chars"].as_u64().unwrap() <= 34_650);
    let context = built["context"].as_str().unwrap();
    assert!(context.contains("Message 20:") && !context.contains("Message 1:"));

    let short = post(
        &app,
        "/api/sessions/t2/start",
        json!({"message": "go on", "thread_history": [{"role": "user", "text": "hello"}]}),
    )
    .await;
    assert_eq!(short["receipt"]["thread_history"]["method"], "verbatim");
    app.stop().await;
}

#[actix_web::test]
async fn the_local_chat_model_compresses_the_middle_of_a_long_thread() {
    let Some(model) = shared_model("smollm2-135m-instruct-q4_1.gguf") else {
        return;
    };
    let app = spawn_app_with(move |s| {
        s.consolidation.chat_model_path = model.display().to_string();
        s.context.history_compress_deadline_ms = 60_000;
    })
    .await;
    let body = json!({"message": "go on", "thread_history": long_history()});
    // The model loads on first use; until then the history is truncated.
    let started = Instant::now();
    let built = loop {
        let built = post(&app, "/api/sessions/t1/start", body.clone()).await;
        let receipt = &built["receipt"]["thread_history"];
        if receipt["method"] == "compressed" {
            break built;
        }
        assert_eq!(receipt["method"], "truncated", "{receipt}");
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "never compressed: {receipt}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_adds_up(&built);
    let history = section(&built, "thread_history").unwrap();
    assert_eq!(history["cap"], 44_550);
    assert!(history["chars"].as_u64().unwrap() <= 44_550, "{history}");
    let context = built["context"].as_str().unwrap();
    assert!(context.starts_with("[THREAD CONVERSATION HISTORY]\n"));
    // Head and tail verbatim, the middle summarised.
    assert!(context.contains("user: Message 1:") && context.contains("assistant: Message 2:"));
    assert!(context.contains("assistant: Message 20:"));
    assert!(context.contains("[summary of messages 3–"), "{context}");
    let items = history["items"].as_array().unwrap();
    assert_eq!(items.len(), 20);
    assert!(items.iter().all(|i| i["included"] == true));
    assert_eq!(items[3]["score"]["compressed"], true);

    // The same thread again: the summary comes from the cache.
    let again = post(&app, "/api/sessions/t1/start", body).await;
    assert_eq!(again["receipt"]["thread_history"]["method"], "compressed");
    assert_eq!(
        section(&again, "thread_history").unwrap()["chars"],
        history["chars"]
    );
    app.stop().await;
}
