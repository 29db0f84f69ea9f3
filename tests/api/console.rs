//! The operator console (`/api/console`) with a real websocket client
//! (tokio-tungstenite), and `kirocrew console` against the real daemon.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::helpers::{binary, spawn_app, spawn_app_with, TestApp};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Generous: a loaded 2-core machine runs the whole suite at once.
const WAIT: Duration = Duration::from_secs(60);

async fn connect(
    app: &TestApp,
    token: Option<&str>,
    origin: Option<&str>,
) -> Result<Ws, tungstenite::Error> {
    let mut request = format!("ws://127.0.0.1:{}/api/console", app.port)
        .into_client_request()
        .unwrap();
    if let Some(token) = token {
        let value = format!("Bearer {token}").parse().unwrap();
        request.headers_mut().insert("Authorization", value);
    }
    if let Some(origin) = origin {
        request.headers_mut().insert("Origin", origin.parse().unwrap());
    }
    tokio_tungstenite::connect_async(request).await.map(|(ws, _)| ws)
}

/// The next text frame as JSON, or `Err(close frame)`.
async fn frame(ws: &mut Ws) -> Result<Value, Option<(CloseCode, String)>> {
    loop {
        let next = tokio::time::timeout(WAIT, ws.next()).await.expect("a frame in time");
        match next {
            Some(Ok(Message::Text(t))) => return Ok(serde_json::from_str(t.as_str()).unwrap()),
            Some(Ok(Message::Close(c))) => {
                return Err(c.map(|c| (c.code, c.reason.as_str().to_owned())));
            }
            Some(Ok(_)) => {}
            None | Some(Err(_)) => return Err(None),
        }
    }
}

async fn send(ws: &mut Ws, value: Value) {
    ws.send(Message::text(value.to_string())).await.unwrap();
}

/// Sends a request and returns its response frame (skipping events).
async fn request(ws: &mut Ws, id: u64, cmd: &str, args: Value) -> Value {
    send(ws, json!({"id": id, "cmd": cmd, "args": args})).await;
    loop {
        let f = frame(ws).await.expect("connection open");
        if f["type"] == "response" && f["id"] == id {
            return f;
        }
    }
}

async fn authed(app: &TestApp) -> Ws {
    let mut ws = connect(app, Some(&app.token), None).await.expect("upgrade");
    let hello = frame(&mut ws).await.expect("hello");
    assert_eq!(hello["type"], "hello");
    ws
}

/// Waits for an event of `stream` whose data satisfies `want`.
async fn event_where(ws: &mut Ws, stream: &str, want: impl Fn(&Value) -> bool) -> Value {
    loop {
        let f = frame(ws).await.expect("connection open");
        if f["type"] == "event" && f["stream"] == stream && want(&f["data"]) {
            return f["data"].clone();
        }
    }
}

#[actix_rt::test]
async fn header_token_gets_hello_and_runs_cli_commands() {
    let app = spawn_app().await;
    let mut ws = connect(&app, Some(&app.token), None).await.expect("upgrade");
    let hello = frame(&mut ws).await.unwrap();
    assert_eq!(hello["protocol"], 1);
    assert!(hello["commands"].as_array().unwrap().contains(&json!("memory search")));

    let set = request(&mut ws, 1, "memory set", json!({"key": "pref.deploy", "value": "blue-green deploys"})).await;
    assert_eq!(set["ok"], true, "{set}");
    let found = request(&mut ws, 2, "memory search", json!({"query": "deploy", "limit": 5, "json": true})).await;
    assert_eq!(found["ok"], true, "{found}");
    assert_eq!(found["result"]["data"][0]["entry"]["key"], "pref.deploy", "{found}");
    // The write went through the store's writer: audited like any other.
    let audit = request(&mut ws, 3, "memory audit", json!({"json": true})).await;
    assert_eq!(audit["result"]["data"][0]["key"], "pref.deploy", "{audit}");
    let lesson = request(&mut ws, 4, "learn add", json!({"rule": "always run the tests"})).await;
    assert_eq!(lesson["ok"], true, "{lesson}");
    let lessons = app.get_json("/api/lessons").await;
    assert_eq!(lessons["lessons"][0]["rule"], "always run the tests");
    for (id, cmd) in [(5, "doctor"), (6, "embedding status"), (7, "skills budget"), (8, "hooks list")] {
        let r = request(&mut ws, id, cmd, json!({})).await;
        assert_eq!(r["ok"], true, "{cmd}: {r}");
    }
    let got = request(&mut ws, 9, "config get", json!({"key": "memory.history_max_days"})).await;
    assert_eq!(got["result"]["output"].as_str().unwrap().trim(), "30", "{got}");
}

#[actix_rt::test]
async fn bad_requests_get_stable_codes_and_the_session_goes_on() {
    let app = spawn_app().await;
    let mut ws = authed(&app).await;
    let cases = [
        (json!({"id": 1, "cmd": "memory fly"}), "unknown_command"),
        (json!({"id": 2, "cmd": "serve"}), "command_not_allowed"),
        (json!({"id": 3, "cmd": "memory search", "args": {}}), "invalid_argument"),
        (json!({"id": 4, "cmd": "memory list", "args": {"colour": 1}}), "unknown_argument"),
        (json!({"id": 5, "cmd": "memory set", "args": {"key": "BAD KEY", "value": "x"}}), "invalid_key"),
        (json!({"id": 6, "cmd": "subscribe", "args": {"stream": "gossip"}}), "unknown_stream"),
        (json!({"id": 7, "cmd": "learn remove", "args": {"key": "lesson.nope"}}), "not_found"),
    ];
    for (req, code) in cases {
        send(&mut ws, req.clone()).await;
        let f = frame(&mut ws).await.unwrap();
        assert_eq!((f["ok"].clone(), f["error"]["code"].clone()), (json!(false), json!(code)), "{req} → {f}");
        assert!(!f["error"]["message"].as_str().unwrap().is_empty());
    }
    ws.send(Message::text("not json")).await.unwrap();
    assert_eq!(frame(&mut ws).await.unwrap()["error"]["code"], "invalid_json");
    let ok = request(&mut ws, 9, "memory stats", json!({})).await;
    assert_eq!(ok["ok"], true);
}

#[actix_rt::test]
async fn first_frame_token_and_nothing_before_it() {
    let app = spawn_app().await;
    // Right token in the first frame.
    let mut ws = connect(&app, None, Some(&app.base)).await.expect("upgrade");
    send(&mut ws, json!({"id": "a", "cmd": "auth", "args": {"token": app.token}})).await;
    assert_eq!(frame(&mut ws).await.unwrap()["type"], "hello");
    assert_eq!(frame(&mut ws).await.unwrap()["result"]["authenticated"], true);

    // A command before the token: closed, unanswered.
    let mut ws = connect(&app, None, None).await.expect("upgrade");
    send(&mut ws, json!({"id": 1, "cmd": "memory stats"})).await;
    let closed = frame(&mut ws).await.expect_err("closed");
    assert_eq!(closed.map(|c| c.0), Some(CloseCode::Policy));

    // A wrong token: closed, unanswered, and a security event.
    let mut ws = connect(&app, None, None).await.expect("upgrade");
    send(&mut ws, json!({"cmd": "auth", "args": {"token": "wrong"}})).await;
    let (code, reason) = frame(&mut ws).await.expect_err("closed").expect("close frame");
    assert_eq!((code, reason.as_str()), (CloseCode::Policy, "invalid token"));
    let mut found = false;
    for _ in 0..600 {
        let events = app.get_json("/api/security/events?category=auth_failure").await;
        if events["events"].as_array().unwrap().iter().any(|e| e["actor"] == "console") {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(found, "the refused console token is a security event");
}

#[actix_rt::test]
async fn the_upgrade_checks_token_origin_and_session_limit() {
    let app = spawn_app_with(|s| s.server.console_max_sessions = 1).await;
    let status = |e: tungstenite::Error| match e {
        tungstenite::Error::Http(r) => r.status().as_u16(),
        other => panic!("{other}"),
    };
    assert_eq!(status(connect(&app, Some("wrong"), None).await.unwrap_err()), 401);
    let evil = connect(&app, Some(&app.token), Some("http://evil.example")).await.unwrap_err();
    assert_eq!(status(evil), 403);
    let first = authed(&app).await;
    let busy = connect(&app, Some(&app.token), None).await.unwrap_err();
    let tungstenite::Error::Http(r) = busy else { panic!() };
    assert_eq!(r.status().as_u16(), 409);
    let body: Value = serde_json::from_slice(r.body().as_deref().unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "console_busy");
    // A closed session frees its place.
    drop(first);
    let mut admitted = false;
    for _ in 0..600 {
        if connect(&app, Some(&app.token), None).await.is_ok() {
            admitted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(admitted);
}

#[actix_rt::test]
async fn audit_and_security_streams_are_live() {
    let app = spawn_app().await;
    let mut ws = authed(&app).await;
    assert_eq!(request(&mut ws, 1, "subscribe", json!({"stream": "audit"})).await["ok"], true);
    assert_eq!(request(&mut ws, 2, "subscribe", json!({"stream": "security"})).await["ok"], true);
    let r = app.put_semantic(json!({"key": "pref.live", "value": "yes"})).await;
    assert_eq!(r.status(), 200);
    let row = event_where(&mut ws, "audit", |d| d["key"] == "pref.live").await;
    assert_eq!(row["event_type"], "create");
    // An auth failure elsewhere shows on the security stream.
    let refused = app.client.get(format!("{}/api/memory/stats", app.base)).bearer_auth("nope").send().await.unwrap();
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
    let sub = request(&mut ws, 1, "subscribe", json!({"stream": "log", "level": "info"})).await;
    assert_eq!(sub["result"]["level"], "info", "{sub}");
    // Every request writes an info access-log line.
    app.get("/api/memory/stats").await;
    let line = event_where(&mut ws, "log", |d| d["message"].as_str().is_some_and(|m| m.contains("/api/memory/stats"))).await;
    assert_eq!(line["level"], "info");
    let bad = request(&mut ws, 2, "subscribe", json!({"stream": "log", "level": "trace"})).await;
    assert_eq!(bad["error"]["code"], "invalid_argument");
}

#[actix_rt::test]
async fn a_stalled_subscriber_never_blocks_writers_and_is_told_what_it_missed() {
    let app = spawn_app().await;
    let mut stalled = authed(&app).await;
    assert_eq!(request(&mut stalled, 1, "subscribe", json!({"stream": "audit"})).await["ok"], true);
    // It reads nothing while the writes run; every write still succeeds.
    let writes = 300;
    for i in 0..writes {
        let r = app.put_semantic(json!({"key": format!("pref.k{i}"), "value": i})).await;
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
    let (code, reason) = frame(&mut ws).await.expect_err("closed").expect("close frame");
    assert_eq!((code, reason.as_str()), (CloseCode::Away, "daemon shutting down"));
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

async fn run_console(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(binary())
        .arg("console")
        .args(args)
        .env("KIROCREW_HOME", home)
        .env_remove("KIROCREW_LOG")
        .output()
        .await
        .expect("run kirocrew console")
}

#[actix_rt::test]
async fn kirocrew_console_exec_prints_what_the_cli_prints() {
    let app = spawn_app().await;
    let r = app.put_semantic(json!({"key": "pref.editor", "value": "helix"})).await;
    assert_eq!(r.status(), 200);
    let out = run_console(app.home_path(), &["--exec", "memory list"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let via_console = String::from_utf8_lossy(&out.stdout).into_owned();
    let direct = tokio::process::Command::new(binary())
        .args(["memory", "list"])
        .env("KIROCREW_HOME", app.home_path())
        .env("KIROCREW_SKIP_MODEL_DOWNLOAD", "1")
        .output()
        .await
        .unwrap();
    assert_eq!(via_console, String::from_utf8_lossy(&direct.stdout), "console and CLI agree");
    assert!(via_console.contains("pref.editor"));
    let bad = run_console(app.home_path(), &["--exec", "memory delete pref.nothing"]).await;
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not_found"), "{}", String::from_utf8_lossy(&bad.stderr));

    // A wrong token: a clear message, exit 1.
    std::fs::write(app.home_path().join("api-token"), "wrong-token\n").unwrap();
    let refused = run_console(app.home_path(), &["--exec", "memory stats"]).await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("refused the API token"));
    std::fs::write(app.home_path().join("api-token"), &app.token).unwrap();
    let _ = app.request(Method::GET, "/api/memory/stats").send().await;
}

#[actix_rt::test]
async fn kirocrew_console_without_a_daemon_says_so() {
    let home = tempfile::tempdir().unwrap();
    let out = run_console(home.path(), &["--exec", "memory stats"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no kirocrew daemon is running"));
}
