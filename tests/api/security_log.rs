//! The security event log seen from outside: refused requests land in it,
//! the dashboard reads it back filtered, and the file is private.

use std::os::unix::fs::PermissionsExt;

use reqwest::Method;
use serde_json::Value;

use crate::helpers::{assert_error, spawn_app};

#[actix_web::test]
async fn auth_failures_are_security_events_the_dashboard_can_list() {
    let app = spawn_app().await;
    let url = format!("{}/api/lessons", app.base);
    let r = app
        .client
        .get(&url)
        .bearer_auth("not-the-token")
        .send()
        .await
        .unwrap();
    assert_error(r, 401, "unauthorized").await;
    let r = app
        .client
        .post(&url)
        .header("origin", "http://evil.example")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_error(r, 403, "origin_forbidden").await;

    // Recorded without waiting on the request path: poll briefly.
    let mut events = Value::Null;
    for _ in 0..50 {
        events = app
            .get_json("/api/security/events?category=auth_failure")
            .await["events"]
            .clone();
        if events.as_array().is_some_and(|e| e.len() >= 2) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let events = events.as_array().cloned().unwrap_or_default();
    assert_eq!(events.len(), 2, "{events:?}");
    // Newest first: the forged origin, then the bad token.
    assert_eq!(events[0]["detail"]["code"], "origin_forbidden");
    assert_eq!(events[1]["detail"]["code"], "unauthorized");
    assert_eq!(events[1]["detail"]["path"], "/api/lessons");
    assert_eq!(events[1]["outcome"], "deny");
    assert_eq!(events[1]["actor"], "http");
    assert!(events[1]["ts"].as_str().is_some_and(|t| t.ends_with('Z')));

    let other = app
        .get_json("/api/security/events?category=hook_decision")
        .await;
    assert_eq!(other["events"], serde_json::json!([]));
    for bad in ["category=", "category=a%20b", "category=x/y", "limit=0"] {
        let r = app
            .request(Method::GET, &format!("/api/security/events?{bad}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422, "{bad}");
    }
    let file = app.home_path().join("security-events.jsonl");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}
