//! The real binary: SIGTERM/SIGINT stop it cleanly with nothing lost, it
//! speaks the sd_notify protocol, and the CLI works beside a running daemon.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::process::{Child, Command};

use crate::cli::{run_cli, stderr, stdout};
use crate::helpers::binary;

/// The real binary serving a temporary home (also used by `security.rs`).
pub(crate) struct Daemon {
    child: Child,
    pub(crate) home: TempDir,
    pub(crate) base: String,
    pub(crate) token: String,
    pub(crate) client: reqwest::Client,
}

pub(crate) async fn start_daemon(home: TempDir, env: &[(&str, &str)]) -> Daemon {
    let log = std::fs::File::create(home.path().join("serve.log")).unwrap();
    let mut command = Command::new(binary());
    command
        .args(["serve", "--port", "0"])
        .env("KIROCREW_HOME", home.path())
        // Tests never reach outside the machine.
        .env("KIROCREW_SKIP_MODEL_DOWNLOAD", "1")
        .env_remove("NOTIFY_SOCKET")
        .env_remove("WATCHDOG_USEC")
        .env_remove("WATCHDOG_PID")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true);
    for (k, v) in env {
        command.env(k, v);
    }
    let child = command.spawn().expect("spawn daemon");
    let record = home.path().join("daemon.json");
    let mut port = None;
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(&record) {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                port = v["port"].as_u64();
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let port = port.unwrap_or_else(|| panic!("daemon did not start: {}", log_of(home.path())));
    let token = std::fs::read_to_string(home.path().join("api-token")).unwrap();
    Daemon {
        child,
        base: format!("http://127.0.0.1:{port}"),
        token: token.trim().to_owned(),
        home,
        client: reqwest::Client::new(),
    }
}

pub(crate) fn log_of(home: &Path) -> String {
    std::fs::read_to_string(home.join("serve.log")).unwrap_or_default()
}

impl Daemon {
    pub(crate) fn put(&self, body: Value) -> reqwest::RequestBuilder {
        self.client
            .put(format!("{}/api/memory/semantic", self.base))
            .bearer_auth(&self.token)
            .json(&body)
    }

    pub(crate) async fn get_json(&self, path: &str) -> Value {
        self.client
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    pub(crate) async fn stop_with(mut self, signal: Signal) -> TempDir {
        let pid = Pid::from_raw(self.child.id().expect("pid") as i32);
        kill(pid, signal).unwrap();
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("daemon stops within 30 s")
            .unwrap();
        assert!(
            status.success(),
            "exit status {status:?}: {}",
            log_of(self.home.path())
        );
        self.home
    }
}

#[actix_web::test]
async fn sigterm_exits_zero_and_loses_nothing() {
    let daemon = start_daemon(tempfile::tempdir().unwrap(), &[]).await;
    // A burst of writes still in flight when the signal arrives.
    let mut tasks = Vec::new();
    for i in 0..40 {
        let request = daemon.put(json!({"key": format!("pref.k{i}"), "value": i}));
        tasks.push(actix_rt::spawn(async move {
            request.send().await.map(|r| r.status().as_u16()).ok()
        }));
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let home = daemon.stop_with(Signal::SIGTERM).await;
    let mut acknowledged = Vec::new();
    for (i, task) in tasks.into_iter().enumerate() {
        if task.await.unwrap() == Some(200) {
            acknowledged.push(format!("pref.k{i}"));
        }
    }
    assert!(log_of(home.path()).contains("stopped cleanly"));
    assert!(!home.path().join("daemon.json").exists());
    let wal = home.path().join("memory.db-wal");
    assert!(
        !wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0,
        "WAL checkpointed"
    );

    let out = run_cli(
        home.path(),
        &["memory", "list", "--json", "--limit", "1000"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let stored: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    for key in &acknowledged {
        assert!(
            stored.iter().any(|e| e["key"] == key.as_str()),
            "{key} acknowledged but lost"
        );
    }
}

#[actix_web::test]
async fn sigint_also_stops_gracefully_and_data_survives_restart() {
    let daemon = start_daemon(tempfile::tempdir().unwrap(), &[]).await;
    let r = daemon
        .put(json!({"key": "user.name", "value": "Ada"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let home = daemon.stop_with(Signal::SIGINT).await;
    let daemon = start_daemon(home, &[]).await;
    let entry = daemon.get_json("/api/memory/semantic/user.name").await;
    assert_eq!(entry["value"], "Ada");
    daemon.stop_with(Signal::SIGTERM).await;
}

#[actix_web::test]
async fn speaks_sd_notify_ready_watchdog_stopping() {
    let home = tempfile::tempdir().unwrap();
    let socket_path = home.path().join("notify.sock");
    let socket = tokio::net::UnixDatagram::bind(&socket_path).unwrap();
    let daemon = start_daemon(
        home,
        &[
            ("NOTIFY_SOCKET", socket_path.to_str().unwrap()),
            ("WATCHDOG_USEC", "200000"),
        ],
    )
    .await;
    let mut seen = Vec::new();
    let mut buf = vec![0u8; 4096];
    while !(seen.iter().any(|m: &String| m.contains("READY=1"))
        && seen.iter().filter(|m| m.contains("WATCHDOG=1")).count() >= 2)
    {
        let n = tokio::time::timeout(Duration::from_secs(10), socket.recv(&mut buf))
            .await
            .expect("notification within 10 s")
            .unwrap();
        seen.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    assert!(
        seen.iter()
            .any(|m| m.contains("STATUS=listening on http://127.0.0.1:")),
        "{seen:?}"
    );
    daemon.stop_with(Signal::SIGTERM).await;
    let mut stopping = false;
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(2), socket.recv(&mut buf)).await
    {
        stopping |= String::from_utf8_lossy(&buf[..n]).contains("STOPPING=1");
    }
    assert!(stopping, "STOPPING=1 sent on shutdown");
}

#[actix_web::test]
async fn cli_and_daemon_share_the_database() {
    let daemon = start_daemon(tempfile::tempdir().unwrap(), &[]).await;
    let out = run_cli(
        daemon.home.path(),
        &["memory", "set", "user.cli", "from the cli"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let entry = daemon.get_json("/api/memory/semantic/user.cli").await;
    assert_eq!(entry["value"], "from the cli");
    let r = daemon
        .put(json!({"key": "user.api", "value": "from the api"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let out = run_cli(daemon.home.path(), &["memory", "list", "--json"]);
    let listed: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(listed.len(), 2);
    // doctor sees the running daemon.
    let out = run_cli(daemon.home.path(), &["doctor"]);
    assert!(stdout(&out).contains("running, pid"), "{}", stdout(&out));
    daemon.stop_with(Signal::SIGTERM).await;
}

#[actix_web::test]
async fn the_model_path_env_pins_the_model() {
    let (Some(q8), Some(f16)) = (
        crate::helpers::shared_model("all-minilm-l6-v2-q8_0.gguf"),
        crate::helpers::shared_model("all-minilm-l6-v2-f16.gguf"),
    ) else {
        return;
    };
    let daemon = start_daemon(
        tempfile::tempdir().unwrap(),
        &[("KIROCREW_EMBED_MODEL_PATH", q8.to_str().unwrap())],
    )
    .await;
    let r = daemon
        .client
        .post(format!("{}/api/memory/embedding-model", daemon.base))
        .bearer_auth(&daemon.token)
        .json(&json!({"path": f16}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "env_override_active");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let status = daemon.get_json("/api/memory/embedding-status").await;
        if status["model_state"] == "ready" {
            assert_eq!(status["model_id"], "all-minilm-l6-v2-q8_0");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    daemon.stop_with(Signal::SIGTERM).await;
}
