//! Transport-level findings (issue 10, item 8), over raw TCP: a body sent
//! at a trickle gets a 408 and the connection closes; a request head over
//! actix's buffer gets a 431 the client can read, not a reset.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::{spawn_app, spawn_app_with, TestApp};

/// Upper bound for every exchange here; far above what the server needs.
const BOUND: Duration = Duration::from_secs(20);

/// Sends `head`, then feeds `trickle` one byte every 100 ms (bounded),
/// and returns everything the server sent until it closed the connection.
async fn exchange(app: &TestApp, head: String, trickle: &'static [u8]) -> String {
    let stream = TcpStream::connect(("127.0.0.1", app.port)).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    // Written while the response is read: a server that stops reading
    // early must not block the test.
    let feeder = actix_rt::spawn(async move {
        if writer.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for byte in trickle {
            if writer.write_all(&[*byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Never finish the body: keep the write half open.
        tokio::time::sleep(BOUND).await;
    });
    let mut response = Vec::new();
    let read = tokio::time::timeout(BOUND, reader.read_to_end(&mut response)).await;
    feeder.abort();
    let got = String::from_utf8_lossy(&response).into_owned();
    read.unwrap_or_else(|_| panic!("the server did not close the connection; got {got:.300}"))
        .unwrap_or_else(|e| panic!("not a clean close ({e}); got {got:.300}"));
    got
}

fn assert_status_and_code(response: &str, status: &str, code: &str) {
    assert!(
        response.starts_with(&format!("HTTP/1.1 {status}")),
        "{response}"
    );
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    let body: serde_json::Value = serde_json::from_str(body).expect(response);
    assert_eq!(body["error"]["code"], code, "{response}");
}

/// 200 bytes of a lesson that never completes.
const SLOW_BODY: &[u8] = br#"{"rule": "this body arrives one byte at a time and never ends .........................................................................................................................."#;

#[actix_web::test]
async fn a_trickled_body_gets_408_and_the_connection_closes() {
    let app = spawn_app_with(|s| s.server.body_timeout_secs = 1).await;
    let head = |framing: &str| {
        format!(
            "POST /api/lessons HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\n{framing}\r\n",
            app.port, app.token
        )
    };
    let response = exchange(&app, head("Content-Length: 1000\r\n"), SLOW_BODY).await;
    assert_status_and_code(&response, "408", "request_timeout");
    // Chunked: actix would keep draining a chunked body nobody reads.
    let response = exchange(&app, head("Transfer-Encoding: chunked\r\n"), b"ff\r\n").await;
    assert_status_and_code(&response, "408", "request_timeout");
    assert_eq!(
        app.get_json("/api/lessons").await["lessons"],
        serde_json::json!([])
    );
}

#[actix_web::test]
async fn a_slow_body_within_the_deadline_is_accepted() {
    let app = spawn_app().await;
    let body = br#"{"rule": "slow but fine"}"#;
    let head = format!(
        "POST /api/lessons HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        app.port,
        app.token,
        body.len()
    );
    let response = exchange(&app, head, body).await;
    assert!(response.starts_with("HTTP/1.1 201"), "{response}");
}

#[actix_web::test]
async fn an_oversized_request_head_gets_431_not_a_reset() {
    let app = spawn_app().await;
    let host = format!("Host: 127.0.0.1:{}\r\n", app.port);
    // One huge header (over actix's 128 KiB head buffer), and too many
    // small ones (over its 96-header limit).
    let huge = format!("X-Big: {}\r\n", "a".repeat(300 * 1024));
    let many: String = (0..120).map(|i| format!("X-H{i}: v\r\n")).collect();
    for headers in [huge, many] {
        let head = format!("GET /healthz HTTP/1.1\r\n{host}{headers}\r\n");
        let response = exchange(&app, head, b"").await;
        assert!(response.starts_with("HTTP/1.1 431"), "{response:.200}");
    }
    // The server is unharmed.
    let r = app
        .client
        .get(format!("{}/healthz", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

/// Issue 42: a request whose absolute-form target names another host was
/// served. It is refused like a foreign Host header; one naming this
/// server is served.
#[actix_web::test]
async fn an_absolute_form_target_must_name_this_server() {
    let app = spawn_app().await;
    let head = |target: &str| {
        format!(
            "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
            app.port, app.token
        )
    };
    let foreign = exchange(&app, head("http://evil.example/api/memory/stats"), b"").await;
    assert_status_and_code(&foreign, "403", "host_not_allowed");
    let own = format!("http://127.0.0.1:{}/api/memory/stats", app.port);
    let served = exchange(&app, head(&own), b"").await;
    assert!(served.starts_with("HTTP/1.1 200"), "{served:.300}");
}
