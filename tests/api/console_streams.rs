//! The console's live streams (audit, security, log), a stalled
//! subscriber, shutdown and the idle timeout, with a real websocket client.

use std::time::Duration;

use serde_json::json;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::console::{authed, close_frame, event_where, frame, request};
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
    let (code, reason) = close_frame(&mut ws).await;
    assert_eq!(
        (code, reason.as_str()),
        (CloseCode::Away, "daemon shutting down")
    );
    stopping.await.expect("stopped");
}

#[actix_rt::test]
async fn a_silent_client_is_closed_after_the_idle_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_app_with(|s| s.server.console_idle_secs = 10).await;
    // A client that sends nothing after its upgrade request, not even
    // pongs: a websocket library would answer pings, so this one is a bare
    // socket that only reads, until the daemon closes it.
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", app.port))
        .await
        .unwrap();
    let upgrade = format!(
        "GET /api/console HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\nAuthorization: Bearer {}\r\n\r\n",
        app.port, app.token
    );
    tcp.write_all(upgrade.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(120), tcp.read_to_end(&mut bytes))
        .await
        .expect("the daemon closes a silent session")
        .expect("read");
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 101"), "{text}");
    // A close frame (opcode 0x8, FIN) carrying the reason.
    let at = bytes
        .windows(12)
        .position(|w| w == b"idle timeout")
        .expect("the close reason");
    let close = bytes[..at].iter().rposition(|b| *b == 0x88);
    assert!(
        close.is_some_and(|i| at - i == 4),
        "close frame before the reason: {bytes:?}"
    );
}
