//! Every class of bad input gets its documented status and stable code, and
//! leaves the stored data exactly as it was. Never a 500.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_error, spawn_app, TestApp};

async fn put_raw(app: &TestApp, body: impl Into<reqwest::Body>) -> reqwest::Response {
    app.request(Method::PUT, "/api/memory/semantic")
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
}

#[actix_web::test]
async fn bad_bodies_are_rejected_without_touching_data() {
    let app = spawn_app().await;
    app.put_semantic(json!({"key": "pref.seed", "value": "kept"}))
        .await;
    let before = app.snapshot().await;

    // Unparseable JSON: 400.
    for raw in [
        "{not json",
        "{\"key\": \"pref.a\", \"value\": ",
        "",
        "{\"key\": \"pref.a\", \"value\": 1, \"confidence\": NaN}",
    ] {
        assert_error(put_raw(&app, raw).await, 400, "malformed_json").await;
    }
    // Parseable JSON of the wrong shape: 422.
    for body in [
        json!({"key": 42, "value": 1}),
        json!({"value": 1}),
        json!({"key": "pref.a"}),
        json!({"key": "pref.a", "value": 1, "confidence": "0.9"}),
        json!({"key": "pref.a", "value": 1, "extra": true}),
        json!(["pref.a", 1]),
    ] {
        assert_error(app.put_semantic(body).await, 422, "invalid_body").await;
    }
    // Oversized body: 413.
    let huge = format!(
        "{{\"key\": \"pref.a\", \"value\": \"{}\"}}",
        "x".repeat(1_100_000)
    );
    assert_error(put_raw(&app, huge).await, 413, "payload_too_large").await;

    assert_eq!(app.snapshot().await, before);
}

#[actix_web::test]
async fn validation_rules_each_have_a_code() {
    let app = spawn_app().await;
    app.put_semantic(json!({"key": "pref.seed", "value": "kept"}))
        .await;
    let before = app.snapshot().await;

    let cases = [
        (
            json!({"key": "pref.a", "value": 1, "confidence": -0.1}),
            "invalid_confidence",
        ),
        (
            json!({"key": "pref.a", "value": 1, "confidence": 1.0001}),
            "invalid_confidence",
        ),
        (
            json!({"key": "pref.a", "value": 1, "confidence": 0.79, "source": "consolidation"}),
            "confidence_below_threshold",
        ),
        (
            json!({"key": "pref.a", "value": 1, "source": "consolidation"}),
            "invalid_confidence",
        ),
        (json!({"key": "pref.a", "value": null}), "invalid_value"),
        (
            json!({"key": "pref.a", "value": 1, "confidence": 1.0, "source": "User Explicit"}),
            "invalid_source",
        ),
        (json!({"key": "team.a", "value": 1}), "key_not_allowed"),
        (
            json!({"key": "pref.a", "value": "x".repeat(4095)}),
            "value_too_large",
        ),
        (
            json!({"key": "pref.seed", "value": "x".repeat(4095)}),
            "value_too_large",
        ),
    ];
    for (body, code) in cases {
        assert_error(app.put_semantic(body.clone()).await, 422, code).await;
    }
    for key in [
        "Pref.a",
        "pref.",
        "pref",
        "pref.a-b",
        "pref.a b",
        "pref.thème",
        "pref.日本",
        "pref.a_",
        ".pref.a",
        "",
        "pref.🚀",
    ] {
        let r = app.put_semantic(json!({"key": key, "value": 1})).await;
        let code = if key == "pref" {
            "key_not_allowed"
        } else {
            "invalid_key"
        };
        assert_error(r, 422, code).await;
    }
    let long_key = format!("pref.{}", "a".repeat(96));
    assert_eq!(long_key.len(), 101);
    assert_error(
        app.put_semantic(json!({"key": long_key, "value": 1})).await,
        422,
        "invalid_key",
    )
    .await;

    assert_eq!(app.snapshot().await, before);

    // The boundaries themselves are accepted.
    let key_100 = format!("pref.{}", "a".repeat(95));
    assert_eq!(
        app.put_semantic(json!({"key": key_100, "value": 1}))
            .await
            .status(),
        200
    );
    let value_4096 = "x".repeat(4094);
    assert_eq!(
        app.put_semantic(json!({"key": "pref.big", "value": value_4096}))
            .await
            .status(),
        200
    );
    assert_eq!(
        app.put_semantic(
            json!({"key": "pref.gate", "value": 1, "confidence": 0.8, "source": "consolidation"})
        )
        .await
        .status(),
        200
    );
}

#[actix_web::test]
async fn bad_queries_paths_and_methods() {
    let app = spawn_app().await;
    app.put_semantic(json!({"key": "pref.seed", "value": "kept"}))
        .await;
    let before = app.snapshot().await;

    assert_error(
        app.get("/api/memory/semantic?limit=abc").await,
        400,
        "invalid_query",
    )
    .await;
    assert_error(
        app.get("/api/memory/semantic?limit=-1").await,
        400,
        "invalid_query",
    )
    .await;
    assert_error(
        app.get("/api/memory/semantic?bogus=1").await,
        400,
        "invalid_query",
    )
    .await;
    assert_error(
        app.get("/api/memory/semantic?limit=0").await,
        422,
        "invalid_limit",
    )
    .await;
    assert_error(
        app.get("/api/memory/events?limit=100000").await,
        422,
        "invalid_limit",
    )
    .await;
    assert_error(
        app.get("/api/memory/nothing-here").await,
        404,
        "route_not_found",
    )
    .await;
    assert_error(app.get("/not-api").await, 404, "route_not_found").await;
    assert_error(
        app.get("/api/memory/semantic/pref.missing").await,
        404,
        "not_found",
    )
    .await;
    let r = app
        .request(Method::DELETE, "/api/memory/semantic/pref.%E2%9C%93")
        .send()
        .await
        .unwrap();
    assert_error(r, 404, "not_found").await;
    let r = app
        .request(Method::POST, "/api/memory/semantic")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_error(r, 405, "method_not_allowed").await;
    let r = app
        .request(Method::DELETE, "/api/memory/stats")
        .send()
        .await
        .unwrap();
    assert_error(r, 405, "method_not_allowed").await;
    let r = app
        .request(Method::POST, "/api/memory/import")
        .header("content-type", "application/json")
        .body("[1,2]")
        .send()
        .await
        .unwrap();
    assert_error(r, 422, "invalid_export").await;
    let r = app
        .request(Method::POST, "/api/memory/import")
        .header("content-type", "application/json")
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_error(r, 400, "malformed_json").await;

    assert_eq!(app.snapshot().await, before);
}
