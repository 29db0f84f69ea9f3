//! `spawn_app()` and friends.

use std::path::{Path, PathBuf};

use kirocrew::config::{self, Settings};
use kirocrew::home::DataHome;
use kirocrew::startup::Application;
use reqwest::{Method, Response};
use serde_json::Value;
use tempfile::TempDir;
use tokio::sync::oneshot;

/// A running in-process server.
pub(crate) struct TestApp {
    pub base: String,
    pub port: u16,
    pub token: String,
    pub home: TempDir,
    pub client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<actix_rt::task::JoinHandle<anyhow::Result<()>>>,
}

/// Starts the app on port 0 in a fresh temporary home.
pub(crate) async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Starts the app with adjusted settings.
pub(crate) async fn spawn_app_with(tweak: impl FnOnce(&mut Settings)) -> TestApp {
    spawn_app_in(tempfile::tempdir().expect("tempdir"), tweak).await
}

/// The shared test models, if present (CI has them: there a missing one
/// fails the test).
pub(crate) fn shared_model(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/models")
        .join(name);
    required_asset(path, "../shared beside the checkout")
}

/// Starts the app in an existing home (restart tests). Unless `tweak` says
/// otherwise the embedding model points at a file that does not exist (the
/// app runs keyword-only and never tries to download anything), the
/// default consolidation model is not downloaded either, and
/// `memory.migrated` is true (no boot-time migration).
pub(crate) async fn spawn_app_in(home: TempDir, tweak: impl FnOnce(&mut Settings)) -> TestApp {
    let mut settings = config::load(home.path(), Vec::new())
        .expect("config")
        .settings;
    settings.server.port = 0;
    settings.server.workers = 1;
    settings.memory.embed_model_path = home.path().join("no-model.gguf").display().to_string();
    // Tests never reach outside 127.0.0.1: the download tests point it at
    // a local server and switch it back on.
    settings.consolidation.chat_model_download = false;
    // No boot-time Markdown migration (and its audit event) unless a test
    // asks for it: tests compare audit trails.
    settings.memory.migrated = true;
    tweak(&mut settings);
    let data_home = DataHome::resolve(Some(home.path().to_path_buf())).expect("home");
    let app = Application::build(data_home, settings)
        .await
        .expect("build app");
    let port = app.address().port();
    let token = app.token().to_owned();
    let (tx, rx) = oneshot::channel::<()>();
    let task = actix_rt::spawn(app.run_until_stopped(async move {
        let _ = rx.await;
    }));
    TestApp {
        base: format!("http://127.0.0.1:{port}"),
        port,
        token,
        home,
        client: reqwest::Client::new(),
        shutdown: Some(tx),
        task: Some(task),
    }
}

impl TestApp {
    /// An authorized request to `path`.
    pub(crate) fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    pub(crate) async fn get(&self, path: &str) -> Response {
        self.request(Method::GET, path).send().await.expect("send")
    }

    pub(crate) async fn get_json(&self, path: &str) -> Value {
        let response = self.get(path).await;
        assert_eq!(response.status(), 200, "GET {path}");
        response.json().await.expect("json")
    }

    /// POSTs `body` to `path` and answers the JSON of a 200.
    pub(crate) async fn post_json(&self, path: &str, body: Value) -> Value {
        let response = self
            .request(Method::POST, path)
            .json(&body)
            .send()
            .await
            .expect("send");
        let status = response.status();
        let text = response.text().await.expect("body");
        assert_eq!(status, 200, "POST {path}: {text}");
        serde_json::from_str(&text).expect("json")
    }

    pub(crate) async fn put_semantic(&self, body: Value) -> Response {
        self.request(Method::PUT, "/api/memory/semantic")
            .json(&body)
            .send()
            .await
            .expect("send")
    }

    /// Everything observable about stored memory: the export (minus its
    /// timestamp) and the audit trail.
    pub(crate) async fn snapshot(&self) -> (Value, Value) {
        let mut export = self.get_json("/api/memory/export").await;
        export
            .as_object_mut()
            .expect("object")
            .remove("exported_at");
        let events = self.get_json("/api/memory/events?limit=10000").await;
        (export, events)
    }

    pub(crate) fn home_path(&self) -> &Path {
        self.home.path()
    }

    /// Stops gracefully and returns the home for a restart.
    pub(crate) async fn stop(mut self) -> TempDir {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("join").expect("clean stop");
        }
        self.home
    }
}

/// Asserts an error response has `status` and `code`, and returns its message.
pub(crate) async fn assert_error(response: Response, status: u16, code: &str) -> String {
    let got = response.status().as_u16();
    let body: Value = response.json().await.expect("error body is JSON");
    assert_eq!(got, status, "status for {body}");
    assert_eq!(body["error"]["code"], code, "code in {body}");
    body["error"]["message"]
        .as_str()
        .expect("message")
        .to_owned()
}

/// Whether this run is CI's (`CI=true`): there every asset a test needs is
/// present, so a missing one fails the test instead of skipping it.
pub(crate) fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `path` if it exists. Otherwise `None` with the reason printed, or, in
/// CI, a failed test naming what is missing (`why` says what installs it).
pub(crate) fn required_asset(path: PathBuf, why: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    if in_ci() {
        panic!("CI=true but {} is absent ({why})", path.display());
    }
    eprintln!("skipped: {} is absent ({why})", path.display());
    None
}

/// The compiled `kirocrew` binary.
pub(crate) fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kirocrew"))
}
