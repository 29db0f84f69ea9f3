//! The default consolidation model through the daemon (issue 14): the
//! boot download from a server on 127.0.0.1 (sha256-pinned, installed as
//! `models/consolidation-chat.gguf`), the model loading, a run with it and
//! the `consolidated` audit event of the daemon's default
//! `after_consolidation` step; a wrong pin refused with nothing installed,
//! the status reporting why, and messages still recorded meanwhile.

use std::time::Duration;

use serde_json::Value;

use crate::consolidation::{run_until_consolidated, say};
use crate::helpers::{assert_error, shared_model, spawn_app_with, TestApp};
use crate::model_server::ModelServer;

const CHAT_MODEL: &str = "smollm2-135m-instruct-q4_1.gguf";
const CHAT_MODEL_BYTES: u64 = 98_362_432;

/// Polls `model` in the consolidation status until `ok` holds.
async fn model_until(app: &TestApp, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..3_000 {
        let model = app.get_json("/api/memory/consolidation").await["model"].clone();
        if ok(&model) {
            return model;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the consolidation model never reached {what}");
}

#[actix_web::test]
async fn the_default_chat_model_is_downloaded_loaded_and_consolidates() {
    let Some(gguf) = shared_model(CHAT_MODEL) else {
        return;
    };
    let server = ModelServer::start(gguf);
    let url = server.url.clone();
    let app = spawn_app_with(move |s| {
        s.consolidation.chat_model_download = true;
        // A mirror: verified against the built-in pin.
        s.consolidation.chat_model_url = url;
    })
    .await;
    let model = model_until(&app, "ready", |m| m["state"] == "ready").await;
    assert_eq!(model["backend"], "llama_cpp");
    assert_eq!(model["model"], "consolidation-chat.gguf");
    assert_eq!(model["download"]["step"], "ready", "{model}");
    assert_eq!(model["download"]["bytes_downloaded"], CHAT_MODEL_BYTES);
    let installed = app.home_path().join("models/consolidation-chat.gguf");
    assert_eq!(
        std::fs::metadata(&installed).unwrap().len(),
        CHAT_MODEL_BYTES
    );
    assert_eq!(server.requests.load(std::sync::atomic::Ordering::SeqCst), 1);

    say(
        &app,
        "dl:1",
        "user",
        "I always want answers in British English.",
    )
    .await;
    say(
        &app,
        "dl:1",
        "assistant",
        "Understood, British English from now on.",
    )
    .await;
    let s = run_until_consolidated(&app, "dl:1").await;
    assert_eq!(s["unconsolidated"], 0, "{s}");
    // The daemon's default after_consolidation step left its audit event.
    let events = app.get_json("/api/memory/events?limit=100").await;
    let consolidated = events["events"]
        .as_array()
        .and_then(|all| all.iter().find(|e| e["event_type"] == "consolidated"))
        .cloned();
    let event = consolidated.unwrap_or_else(|| panic!("no consolidated event in {events}"));
    assert_eq!(event["key"], "dl:1");
    assert_eq!(event["source"], "consolidation");
    app.stop().await;
}

#[actix_web::test]
async fn a_wrong_pin_is_refused_nothing_is_installed_and_messages_still_land() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-the-model.gguf");
    std::fs::write(&file, vec![7u8; 2 * 1024 * 1024]).unwrap();
    let server = ModelServer::start(file);
    let url = server.url.clone();
    let app = spawn_app_with(move |s| {
        s.consolidation.chat_model_download = true;
        s.consolidation.chat_model_url = url;
    })
    .await;
    // The bytes do not hash to the built-in pin: refused, retried later.
    let model = model_until(&app, "a refused download", |m| {
        m["download"]["step"] == "waiting_retry"
            && m["download"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("checksum mismatch"))
    })
    .await;
    assert_eq!(model["state"], "downloading", "{model}");
    assert!(model["error"]
        .as_str()
        .is_some_and(|e| e.contains("checksum mismatch")));
    assert!(!app
        .home_path()
        .join("models/consolidation-chat.gguf")
        .exists());

    // Messages are recorded; a forced run is refused while the model
    // downloads (409, not a 202 that is then dropped) and moves nothing.
    say(&app, "pin:1", "user", "I like tea.").await;
    let response = app
        .request(reqwest::Method::POST, "/api/memory/consolidation/pin:1/run")
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_error(response, 409, "model_loading").await;
    let status = app.get_json("/api/memory/consolidation").await;
    let s = status["sessions"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["session"] == "pin:1"))
        .cloned()
        .expect("the session is listed");
    assert_eq!(s["unconsolidated"], 1, "{s}");
    assert!(s["running"].as_array().is_some_and(Vec::is_empty), "{s}");
    app.stop().await;
}
