//! The `/api` guard: bearer token and Host header; probes stay open.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_error, spawn_app, spawn_app_with};

#[actix_web::test]
async fn api_requires_the_bearer_token() {
    let app = spawn_app().await;
    let url = format!("{}/api/memory/semantic", app.base);
    let r = app.client.get(&url).send().await.unwrap();
    assert_eq!(r.headers()["www-authenticate"], "Bearer");
    assert_error(r, 401, "unauthorized").await;
    let r = app
        .client
        .get(&url)
        .bearer_auth("wrong-token")
        .send()
        .await
        .unwrap();
    assert_error(r, 401, "unauthorized").await;
    let r = app
        .client
        .get(&url)
        .header("authorization", format!("Basic {}", app.token))
        .send()
        .await
        .unwrap();
    assert_error(r, 401, "unauthorized").await;
    // A write without a token stores nothing.
    let r = app
        .client
        .put(&url)
        .json(&json!({"key": "pref.a", "value": 1}))
        .send()
        .await
        .unwrap();
    assert_error(r, 401, "unauthorized").await;
    assert_eq!(
        app.get_json("/api/memory/semantic").await["entries"],
        json!([])
    );
    // Unknown /api paths do not reveal anything without a token either.
    let r = app
        .client
        .get(format!("{}/api/whatever", app.base))
        .send()
        .await
        .unwrap();
    assert_error(r, 401, "unauthorized").await;
}

#[actix_web::test]
async fn token_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let app = spawn_app().await;
    let meta = std::fs::metadata(app.home_path().join("api-token")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let on_disk = std::fs::read_to_string(app.home_path().join("api-token")).unwrap();
    assert_eq!(on_disk.trim(), app.token);
    assert_eq!(app.token.len(), 64);
}

#[actix_web::test]
async fn foreign_host_headers_are_refused() {
    let app = spawn_app().await;
    for host in [
        "evil.example",
        &format!("evil.example:{}", app.port),
        "127.0.0.1:1",
    ] {
        let r = app
            .request(Method::GET, "/api/memory/stats")
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_error(r, 403, "host_not_allowed").await;
    }
    for host in [
        format!("localhost:{}", app.port),
        format!("127.0.0.1:{}", app.port),
    ] {
        let r = app
            .request(Method::GET, "/api/memory/stats")
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
}

#[actix_web::test]
async fn probes_need_no_auth() {
    let app = spawn_app().await;
    let r = app
        .client
        .get(format!("{}/healthz", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = app
        .client
        .get(format!("{}/readyz", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["status"], "ready");
    let r = app
        .client
        .post(format!("{}/healthz", app.base))
        .send()
        .await
        .unwrap();
    assert_error(r, 405, "method_not_allowed").await;
}

#[actix_web::test]
async fn loopback_trust_skips_only_the_token() {
    let app = spawn_app_with(|s| s.auth.loopback_trusted = true).await;
    let r = app
        .client
        .get(format!("{}/api/memory/stats", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = app
        .client
        .get(format!("{}/api/memory/stats", app.base))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_error(r, 403, "host_not_allowed").await;
}

#[actix_web::test]
async fn dashboard_page_is_served() {
    let app = spawn_app().await;
    let r = app
        .client
        .get(format!("{}/", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let page = r.text().await.unwrap();
    for endpoint in [
        "/api/memory/semantic",
        "/api/lessons",
        "/api/memory/episodic/search",
        "/api/memory/events",
        "/api/memory/embedding-status",
        "/api/memory/enable-embeddings",
        "/api/memory/embedding-model",
    ] {
        assert!(page.contains(endpoint), "the page uses {endpoint}");
    }
}
