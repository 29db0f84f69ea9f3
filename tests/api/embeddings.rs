//! Embeddings through the API with the real MiniLM models: hybrid semantic
//! search, the boot download from a mirror on 127.0.0.1, model changes with
//! validation, rollback and revert, and the re-embed sweep.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, shared_model, spawn_app_with, TestApp};
use crate::model_server::ModelServer;

const Q8: &str = "all-minilm-l6-v2-q8_0.gguf";
const F16: &str = "all-minilm-l6-v2-f16.gguf";
const Q8_SHA256: &str = "5f3eb40585ffd5a467cd4c2d8072def5f33a40151cd30ba2f6982e027d697a2d";

async fn wait_for(app: &TestApp, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let status = app.get_json("/api/memory/embedding-status").await;
        if ok(&status) {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {status}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn ready_and_swept(app: &TestApp) -> Value {
    // Readiness starts a sweep, so "not running" right after ready can be the
    // moment before it began: wait for its end state instead.
    wait_for(app, "model ready and sweep done", |s| {
        s["model_state"] == "ready"
            && matches!(s["reembed"]["step"].as_str(), Some("done" | "failed"))
    })
    .await
}

fn post(app: &TestApp, path: &str, body: Value) -> reqwest::RequestBuilder {
    app.request(Method::POST, path).json(&body)
}

#[actix_web::test]
async fn semantic_search_ranks_by_meaning_once_the_model_is_ready() {
    let Some(model) = shared_model(Q8) else {
        return;
    };
    let app = spawn_app_with(|s| s.memory.embed_model_path = model.display().to_string()).await;
    let status = ready_and_swept(&app).await;
    assert_eq!(status["model_id"], "all-minilm-l6-v2-q8_0");
    assert_eq!(status["model_dim"], 384);
    assert_eq!(status["setup_step"], "done");
    assert_eq!(status["enabled"], true);
    assert_eq!(status["provider"], "ollama");
    // A Q8_0 file is computed as stored; the kernels are the features of
    // the CPU backend module ggml picked for this processor.
    assert_eq!(status["model_weights"], "stored");
    let kernels = status["cpu_kernels"].as_str().unwrap_or_default();
    assert!(!kernels.is_empty(), "{status}");

    for (key, value) in [
        (
            "pref.pet",
            "has a kitten that naps in the sun by the window",
        ),
        ("user.job", "works as a trader on the stock exchange"),
        ("project.site", "the marketing website is built with Astro"),
    ] {
        let r = app.put_semantic(json!({"key": key, "value": value})).await;
        assert_eq!(r.status(), 200);
    }
    // Lessons get their vector from the lesson writer, not here.
    app.put_semantic(json!({"key": "lesson.abc", "value": "always run the tests"}))
        .await;
    let stats = app.get_json("/api/memory/stats").await;
    assert_eq!(stats["semantic"]["embedded"], 3);
    assert_eq!(stats["retrieval"], "hybrid");
    // No word in common with the best answer: only the vectors can find it.
    let found = app
        .get_json("/api/memory/semantic?q=cat%20sleeping%20near%20a%20window")
        .await;
    assert_eq!(found["entries"][0]["key"], "pref.pet", "{found}");
    let found = app
        .get_json("/api/memory/semantic?q=shares%20and%20equities")
        .await;
    assert_eq!(found["entries"][0]["key"], "user.job", "{found}");
    let preview = app.get_json("/api/memory/context-preview?q=feline").await;
    assert!(preview["semantic"]
        .as_str()
        .unwrap()
        .starts_with("[Semantic Memory]\npref.pet:"));
    // A changed value replaces its vector; the row stays embedded.
    app.put_semantic(json!({"key": "pref.pet", "value": "owns a parrot that talks"}))
        .await;
    assert_eq!(
        app.get_json("/api/memory/stats").await["semantic"]["embedded"],
        3
    );
    let found = app.get_json("/api/memory/semantic?q=bird").await;
    assert_eq!(found["entries"][0]["key"], "pref.pet");
}

#[actix_web::test]
async fn model_changes_validate_apply_roll_back_and_revert() {
    let (Some(q8), Some(f16)) = (shared_model(Q8), shared_model(F16)) else {
        return;
    };
    let app = spawn_app_with(|s| s.memory.embed_model_path = q8.display().to_string()).await;
    ready_and_swept(&app).await;
    for i in 0..12 {
        app.put_semantic(json!({"key": format!("user.fact{i}"), "value": format!("fact number {i} about the user")}))
            .await;
    }
    assert_eq!(
        app.get_json("/api/memory/stats").await["semantic"]["embedded"],
        12
    );

    // validate_only checks the file and leaves the live model alone.
    let r = post(
        &app,
        "/api/memory/embedding-model",
        json!({"path": f16, "validate_only": true}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["model"]["size_bytes"], 46_226_592);
    assert_eq!(
        app.get_json("/api/memory/embedding-status").await["model_id"],
        "all-minilm-l6-v2-q8_0"
    );
    for (path, why) in [
        (app.home_path().join("missing.gguf"), "missing"),
        (
            write_file(app.home_path(), "small.gguf", b"GGUF tiny"),
            "too small",
        ),
        (
            write_file(app.home_path(), "text.gguf", &vec![b'x'; 2 << 20]),
            "not GGUF",
        ),
    ] {
        let r = post(
            &app,
            "/api/memory/embedding-model",
            json!({"path": path, "validate_only": true}),
        )
        .send()
        .await
        .unwrap();
        let message = assert_error(r, 422, "invalid_model").await;
        assert!(!message.is_empty(), "{why}");
    }

    // Apply the F16 file: new space, every row re-embedded.
    let r = post(&app, "/api/memory/embedding-model", json!({"path": f16}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let status = ready_and_swept(&app).await;
    assert_eq!(status["model_id"], "all-minilm-l6-v2-f16");
    assert_eq!(status["reembed"]["step"], "done");
    let stats = app.get_json("/api/memory/stats").await;
    assert_eq!(stats["semantic"]["embedded"], 12);
    assert_eq!(stats["embedding_space"]["model_id"], "all-minilm-l6-v2-f16");
    let config = read_config(app.home_path());
    assert_eq!(
        config["memory"]["embed_model_path"],
        f16.display().to_string()
    );

    // A corrupt GGUF: rejected, rolled back, the F16 model still serves and
    // config still names it.
    let mut corrupt = b"GGUF".to_vec();
    corrupt.extend(std::iter::repeat_n(7u8, 2 << 20));
    let corrupt = write_file(app.home_path(), "corrupt.gguf", &corrupt);
    let r = post(
        &app,
        "/api/memory/embedding-model",
        json!({"path": corrupt}),
    )
    .send()
    .await
    .unwrap();
    assert_error(r, 422, "model_rejected").await;
    let status = ready_and_swept(&app).await;
    assert_eq!(status["model_id"], "all-minilm-l6-v2-f16");
    assert_eq!(
        read_config(app.home_path())["memory"]["embed_model_path"],
        f16.display().to_string()
    );
    assert_eq!(
        app.get_json("/api/memory/stats").await["semantic"]["embedded"],
        12
    );
    let found = app
        .get_json("/api/memory/semantic?q=fact%20number%207")
        .await;
    assert_eq!(found["entries"][0]["key"], "user.fact7");

    // An empty path reverts to the default download target.
    let default = app.home_path().join("models/qwen3-embedding-0.6b.gguf");
    std::fs::create_dir_all(default.parent().unwrap()).unwrap();
    std::fs::copy(&q8, &default).unwrap();
    let r = post(&app, "/api/memory/embedding-model", json!({"path": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let status = ready_and_swept(&app).await;
    assert_eq!(status["model_id"], "qwen3-embedding-0.6b");
    assert_eq!(
        read_config(app.home_path())["memory"]["embed_model_path"],
        ""
    );
    assert_eq!(
        app.get_json("/api/memory/stats").await["semantic"]["embedded"],
        12
    );
}

#[actix_web::test]
async fn rows_written_before_the_model_are_backfilled() {
    let Some(q8) = shared_model(Q8) else { return };
    let app = spawn_app_with(|_| {}).await;
    for i in 0..5 {
        app.put_semantic(json!({"key": format!("pref.k{i}"), "value": format!("value {i}")}))
            .await;
    }
    let stats = app.get_json("/api/memory/stats").await;
    assert_eq!(
        (
            stats["semantic"]["embedded"].as_u64(),
            stats["retrieval"].as_str()
        ),
        (Some(0), Some("keyword"))
    );
    let r = post(&app, "/api/memory/embedding-model", json!({"path": q8}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let status = ready_and_swept(&app).await;
    assert_eq!(status["reembed"]["total"], 5);
    assert_eq!(status["reembed"]["done"], 5);
    assert_eq!(
        app.get_json("/api/memory/stats").await["semantic"]["embedded"],
        5
    );
}

#[actix_web::test]
async fn boot_downloads_the_model_from_its_mirror_then_serves_vectors() {
    let Some(q8) = shared_model(Q8) else { return };
    let server = ModelServer::start(q8);
    let url = server.url.clone();
    let app = spawn_app_with(move |s| {
        s.memory.embed_model_path = String::new();
        s.memory.embed_model_url = url;
        s.memory.embed_model_sha256 = Q8_SHA256.to_owned();
    })
    .await;
    let status = ready_and_swept(&app).await;
    assert_eq!(status["download_step"], "ready");
    assert_eq!(status["bytes_downloaded"], 25_285_408);
    assert_eq!(status["setup_step"], "done");
    assert!(app.home_path().join("models/model.gguf").exists());
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);
    // Enabling again adopts the installed model: no second download.
    let r: Value = post(&app, "/api/memory/enable-embeddings", json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["ok"], true);
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);
}

#[actix_web::test]
async fn enable_adopts_a_download_waiting_to_retry_and_retries_now() {
    let Some(q8) = shared_model(Q8) else { return };
    let server = ModelServer::start_failing_first(q8, 1);
    let url = server.url.clone();
    let app = spawn_app_with(move |s| {
        s.memory.embed_model_path = String::new();
        s.memory.embed_model_url = url;
        s.memory.embed_model_sha256 = Q8_SHA256.to_owned();
    })
    .await;
    // The boot download's first attempt fails; the next waits out a
    // 60-second backoff.
    wait_for(&app, "the retry wait", |s| {
        s["download_step"] == "waiting_retry"
    })
    .await;
    let r = post(&app, "/api/memory/enable-embeddings", json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202, "adopted, never 409");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["ok"], true, "{body}");
    assert_eq!(body["download"], "retry_started", "{body}");
    assert_eq!(body["setup_step"], "downloading", "{body}");
    // The retry ran at once, well before the backoff would have ended.
    let status = ready_and_swept(&app).await;
    assert_eq!(status["download_step"], "ready");
    assert_eq!(status["download_attempt"], 2);
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
}

#[actix_web::test]
async fn disable_is_gone_and_enable_without_a_model_reports_why() {
    let app = spawn_app_with(|_| {}).await;
    let r = post(&app, "/api/memory/disable-embeddings", json!({}))
        .send()
        .await
        .unwrap();
    assert_error(r, 410, "gone").await;
    // The configured file does not exist and is not a download target.
    let r = post(&app, "/api/memory/enable-embeddings", json!({}))
        .send()
        .await
        .unwrap();
    assert_error(r, 422, "model_missing").await;
    let status = wait_for(&app, "the load to fail", |s| s["model_state"] == "failed").await;
    assert_eq!(status["server_healthy"], false);
    assert_eq!(status["setup_step"], "error");
    assert!(
        status["error"].as_str().unwrap().contains("no-model.gguf"),
        "{status}"
    );
    let r = post(&app, "/api/memory/embedding-model", json!({"pathh": "x"}))
        .send()
        .await
        .unwrap();
    assert_error(r, 422, "invalid_body").await;
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn read_config(home: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(home.join("config.json")).unwrap_or("{}".into()))
        .unwrap()
}

#[actix_web::test]
async fn the_cli_searches_by_meaning_in_a_home_whose_space_is_recorded() {
    let Some(q8) = shared_model(Q8) else { return };
    let model = q8.display().to_string();
    let app = spawn_app_with(|s| s.memory.embed_model_path = model).await;
    ready_and_swept(&app).await;
    app.put_semantic(json!({"key": "pref.pet", "value": "has a kitten that naps in the sun"}))
        .await;
    app.put_semantic(json!({"key": "user.job", "value": "works as a stock trader"}))
        .await;
    let home = app.stop().await;
    let out = std::process::Command::new(crate::helpers::binary())
        .args(["memory", "search", "cat sleeping by a window", "--json"])
        .env("KIROCREW_HOME", home.path())
        .env("KIROCREW_EMBED_MODEL_PATH", &q8)
        .env("KIROCREW_SKIP_MODEL_DOWNLOAD", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found[0]["key"], "pref.pet", "{found}");
    // A CLI write in the recorded space stores its vector too.
    let out = std::process::Command::new(crate::helpers::binary())
        .args(["memory", "set", "user.city", "lives in Lisbon"])
        .env("KIROCREW_HOME", home.path())
        .env("KIROCREW_EMBED_MODEL_PATH", &q8)
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = std::process::Command::new(crate::helpers::binary())
        .args(["memory", "stats"])
        .env("KIROCREW_HOME", home.path())
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["semantic"]["embedded"], 3);
}

/// Rows a write leaves without a vector while the model serves (here a
/// bulk import, whose embedding is always left to the sweep) get one
/// within seconds: the daemon's catch-up sweep, not the next restart.
#[actix_web::test]
async fn rows_written_without_a_vector_are_embedded_soon_after() {
    let Some(model) = shared_model(Q8) else {
        return;
    };
    let app = spawn_app_with(|s| s.memory.embed_model_path = model.display().to_string()).await;
    ready_and_swept(&app).await;
    let doc = json!({
        "format": "kirocrew-memory-export",
        "version": 2,
        "exported_at": "2026-12-07T06:00:00Z",
        "semantic": [
            {"key": "pref.shell", "value": "fish", "confidence": 1.0},
            {"key": "user.city", "value": "lives in Lisbon near the river", "confidence": 1.0},
        ],
    });
    let r = post(&app, "/api/memory/import", doc).send().await.unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stats = app.get_json("/api/memory/stats").await;
        if stats["semantic"]["embedded"] == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "never embedded: {stats}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // By meaning, with no word in common: the vector is really there.
    let found = app
        .get_json("/api/memory/semantic?q=which%20town%20does%20the%20user%20live%20in")
        .await;
    assert_eq!(found["entries"][0]["key"], "user.city", "{found}");
}
