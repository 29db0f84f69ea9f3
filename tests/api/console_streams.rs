//! The console's live streams (audit, security, log), a stalled
//! subscriber, shutdown and the idle timeout, with a real websocket client.

use std::time::Duration;

use serde_json::json;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::console::{authed, connect, event_where, frame, request};
use crate::helpers::{spawn_app, spawn_app_with};

#[actix_rt::test]
async fn audit_and_security_streams_are_live() {
    let app = spawn_app().await;
    let mut ws = authed(&app).await;
    assert_eq!(
        request(&mut ws, 1, "subscribe", json!({"stream": "audit"})).await["ok"],
        true
    );
    assert_eq!(
        request(&mut ws, 2, "subscribe", json!({"stream": "security"})).await["ok"],
        true
    );
    let r = app
        .put_semantic(json!({"key": "pref.live", "value": "yes"}))
        .await;
    assert_eq!(r.status(), 200);
    let row = event_where(&mut ws, "audit", |d| d["key"] == "pref.live").await;
    assert_eq!(row["event_type"], "create");
    // An auth failure elsewhere shows on the security stream.
    let refused = app
        .client
        .get(format!("{}/api/memory/stats", app.base))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let ev = event_where(&mut ws, "security", |d| d["category"] == "auth_failure").await;
    assert_eq!(ev["outcome"], "deny");
    let un = request(&mut ws, 3, "unsubscribe", json!({"stream": "audit"})).await;
    assert_eq!(un["result"]["was_subscribed"], true);
}

#[actix_rt::test]
async fn log_stream_follows_tracing_at_its_level() {
    kirocrew::telemetry::init(false, "warn");
    let app = spawn_app().await;
    let mut ws = authed(&app).await;
    let sub = request(
        &mut ws,
        1,
        "subscribe",
        json!({"stream": "log", "level": "info"}),
    )
    .await;
    assert_eq!(sub["result"]["level"], "info", "{sub}");
    // Every request writes an info access-log line.
    app.get("/api/memory/stats").await;
    let line = event_where(&mut ws, "log", |d| {
        d["message"]
            .as_str()
            .is_some_and(|m| m.contains("/api/memory/stats"))
    })
    .await;
    assert_eq!(line["level"], "info");
    let bad = request(
        &mut ws,
        2,
        "subscribe",
        json!({"stream": "log", "level": "trace"}),
    )
    .await;
    assert_eq!(bad["error"]["code"], "invalid_argument");
}

#[actix_rt::test]
async fn a_stalled_subscriber_never_blocks_writers_and_is_told_what_it_missed() {
    let app = spawn_app().await;
    let mut stalled = authed(&app).await;
    assert_eq!(
        request(&mut stalled, 1, "subscribe", json!({"stream": "audit"})).await["ok"],
        true
    );
    // It reads nothing while the writes run; every write still succeeds.
    let writes = 300;
    for i in 0..writes {
        let r = app
            .put_semantic(json!({"key": format!("pref.k{i}"), "value": i}))
            .await;
        assert_eq!(r.status(), 200);
    }
    // Then it reads: each write is either delivered or counted as missed.
    let (mut got, mut missed) = (0u64, 0u64);
    while got + missed < writes {
        let f = frame(&mut stalled).await.unwrap();
        match f["type"].as_str() {
            Some("event") => got += 1,
            Some("lagged") => missed += f["missed"].as_u64().unwrap(),
            _ => {}
        }
    }
    assert_eq!(got + missed, writes);
}

#[actix_rt::test]
async fn shutdown_closes_sessions_with_a_reason_and_the_daemon_stops_cleanly() {
    let app = spawn_app().await;
    let mut ws = authed(&app).await;
    let stopping = actix_rt::spawn(app.stop());
    let (code, reason) = frame(&mut ws)
        .await
        .expect_err("closed")
        .expect("close frame");
    assert_eq!(
        (code, reason.as_str()),
        (CloseCode::Away, "daemon shutting down")
    );
    stopping.await.expect("stopped");
}

#[actix_rt::test]
async fn a_silent_client_is_closed_after_the_idle_timeout() {
    let app = spawn_app_with(|s| s.server.console_idle_secs = 10).await;
    let mut ws = connect(&app, Some(&app.token), None).await.unwrap();
    // Not reading means not answering pings either.
    tokio::time::sleep(Duration::from_secs(16)).await;
    let end = loop {
        match frame(&mut ws).await {
            Ok(_) => continue,
            Err(end) => break end,
        }
    };
    assert_eq!(end.map(|(_, r)| r), Some("idle timeout".to_owned()));
}
