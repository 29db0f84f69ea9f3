//! `kirocrew console` (the real binary) against the real daemon.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{binary, spawn_app};

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
    let r = app
        .put_semantic(json!({"key": "pref.editor", "value": "helix"}))
        .await;
    assert_eq!(r.status(), 200);
    let out = run_console(app.home_path(), &["--exec", "memory list"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let via_console = String::from_utf8_lossy(&out.stdout).into_owned();
    let direct = tokio::process::Command::new(binary())
        .args(["memory", "list"])
        .env("KIROCREW_HOME", app.home_path())
        .env("KIROCREW_SKIP_MODEL_DOWNLOAD", "1")
        .output()
        .await
        .unwrap();
    assert_eq!(
        via_console,
        String::from_utf8_lossy(&direct.stdout),
        "console and CLI agree"
    );
    assert!(via_console.contains("pref.editor"));
    let bad = run_console(app.home_path(), &["--exec", "memory delete pref.nothing"]).await;
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("not_found"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );

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
