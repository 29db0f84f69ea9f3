//! The real binary never computes with an unproven CPU module: a module
//! set whose best entry dies with SIGILL (a stub compiled here) leaves the
//! daemon serving embeddings on the next module, `doctor` and the
//! embedding status say why, and the verdict is cached in the data home.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::cli::{stderr, stdout};
use crate::helpers::{binary, shared_model};
use crate::lifecycle::{log_of, start_daemon, Daemon};

const PIN_ENV: &str = "KIROCREW_GGML_CPU_MODULE";
const DIR_ENV: &str = "KIROCREW_GGML_BACKENDS_DIR";

/// A "module" that ggml would rank first and that dies when loaded, the
/// way a module built for instructions the CPU lacks does.
const CRASHY_C: &str = r#"
#include <signal.h>
int ggml_backend_score(void) { return 1 << 30; }
void *ggml_backend_init(void) { raise(SIGILL); return 0; }
"#;

/// The build's own module directory.
fn built_modules() -> PathBuf {
    let out = Command::new(binary())
        .args(["doctor", "--backends-dir"])
        .output()
        .expect("run kirocrew");
    assert!(out.status.success(), "{}", stderr(&out));
    PathBuf::from(stdout(&out).trim())
}

/// A module directory: copies of the real modules (if `real`) plus
/// `libggml-cpu-crashy.so`.
fn module_dir(real: bool) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    if real {
        for entry in std::fs::read_dir(built_modules()).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("libggml-cpu-") && name.ends_with(".so") {
                std::fs::copy(entry.path(), dir.path().join(&name)).unwrap();
            }
        }
    }
    let source = dir.path().join("crashy.c");
    std::fs::write(&source, CRASHY_C).unwrap();
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.path().join("libggml-cpu-crashy.so"))
        .arg(&source)
        .output()
        .expect("a C compiler (the llama.cpp build needs one too)");
    assert!(out.status.success(), "cc: {}", stderr(&out));
    std::fs::remove_file(source).unwrap();
    dir
}

fn cli(home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new(binary());
    command
        .args(args)
        .env("KIROCREW_HOME", home)
        .env("KIROCREW_SKIP_MODEL_DOWNLOAD", "1")
        .env_remove(PIN_ENV)
        .env_remove("KIROCREW_LOG");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("run kirocrew")
}

fn line<'a>(report: &'a str, start: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?} in:\n{report}"))
}

async fn wait_for_model(daemon: &Daemon, state: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = daemon.get_json("/api/memory/embedding-status").await;
        if status["model_state"] == state {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "model not {state}: {status}\n{}",
            log_of(daemon.home.path())
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The module computing, checked: verified, and after the stub.
fn check_fallback(status: &Value, cached: bool) -> String {
    let cpu = &status["cpu_module"];
    assert_eq!(cpu["verification"], "verified", "{cpu}");
    let first = &cpu["candidates"][0];
    assert_eq!(first["module"], "crashy", "{cpu}");
    assert_eq!(first["verdict"], "crashed", "{cpu}");
    assert_eq!(first["cached"], cached, "{cpu}");
    let detail = first["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("SIGILL"), "{detail}");
    let chosen = cpu["module"].as_str().expect("a module").to_owned();
    assert_ne!(chosen, "crashy");
    let winner = cpu["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["module"] == chosen.as_str())
        .expect("the winner is a candidate");
    assert_eq!(winner["verdict"], "ok", "{cpu}");
    assert_eq!(winner["cached"], cached, "{cpu}");
    assert!(
        cpu["fallback"]
            .as_str()
            .unwrap_or_default()
            .contains("crashy"),
        "{cpu}"
    );
    for ty in ["q8_0", "f32"] {
        assert!(
            cpu["types"].as_array().unwrap().iter().any(|t| t == ty),
            "the model's {ty} verified: {cpu}"
        );
    }
    chosen
}

#[actix_web::test]
async fn a_crashing_best_module_is_skipped_and_the_daemon_serves_on_the_next() {
    let Some(model) = shared_model("all-minilm-l6-v2-q8_0.gguf") else {
        return;
    };
    let modules = module_dir(true);
    let env = [
        (DIR_ENV, modules.path().to_str().unwrap()),
        ("KIROCREW_EMBED_MODEL_PATH", model.to_str().unwrap()),
    ];
    let daemon = start_daemon(tempfile::tempdir().unwrap(), &env).await;
    let status = wait_for_model(&daemon, "ready").await;
    let chosen = check_fallback(&status, false);

    // It embeds: a search with no word in common finds by meaning.
    for (key, value) in [
        (
            "pref.pet",
            "has a kitten that naps in the sun by the window",
        ),
        ("user.job", "works as a trader on the stock exchange"),
    ] {
        let r = daemon
            .put(json!({"key": key, "value": value}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    // A write embeds at once unless the model is busy with its start-up
    // work (calibration, the space's backfill); then the backfill sweep
    // embeds it moments later (seen once in a loaded full run).
    let mut stats = Value::Null;
    for _ in 0..150 {
        stats = daemon.get_json("/api/memory/stats").await;
        if stats["semantic"]["embedded"] == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(stats["semantic"]["embedded"], 2, "{stats}");
    let found = daemon
        .get_json("/api/memory/semantic?q=cat%20sleeping%20near%20a%20window")
        .await;
    assert_eq!(found["entries"][0]["key"], "pref.pet", "{found}");

    // The verdict is in the data home, per module file and CPU.
    let cache: Value = serde_json::from_str(
        &std::fs::read_to_string(daemon.home.path().join("cpu-kernels.json")).unwrap(),
    )
    .unwrap();
    let crashy = cache["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["module"] == "libggml-cpu-crashy.so")
        .expect("the stub's verdict is cached");
    assert_eq!(crashy["types"]["q8_0"]["verdict"], "crashed", "{crashy}");
    assert_eq!(crashy["types"]["q8_0"]["signal"], "SIGILL", "{crashy}");
    assert_eq!(crashy["blake3"].as_str().unwrap_or_default().len(), 64);

    // doctor makes the same choice, from the cache, and says why.
    let out = cli(daemon.home.path(), &env, &["doctor"]);
    let report = stdout(&out);
    assert!(out.status.success(), "{report}");
    assert!(
        line(&report, "warn  cpu module: crashy crashed").contains("(cached verdict)"),
        "{report}"
    );
    let ok = line(&report, "ok    cpu module:");
    assert!(
        ok.contains(&format!("{chosen}, verified on this CPU for ")),
        "{ok}"
    );
    assert!(ok.contains("(cached verdict)"), "{ok}");

    // The next start needs no child: every verdict comes from the cache.
    let home = daemon.stop_with(Signal::SIGTERM).await;
    let daemon = start_daemon(home, &env).await;
    let status = wait_for_model(&daemon, "ready").await;
    assert_eq!(check_fallback(&status, true), chosen);
    daemon.stop_with(Signal::SIGTERM).await;
}

#[actix_web::test]
async fn with_no_module_passing_the_daemon_runs_keyword_only() {
    let Some(model) = shared_model("all-minilm-l6-v2-q8_0.gguf") else {
        return;
    };
    let modules = module_dir(false);
    let env = [
        (DIR_ENV, modules.path().to_str().unwrap()),
        ("KIROCREW_EMBED_MODEL_PATH", model.to_str().unwrap()),
    ];
    let daemon = start_daemon(tempfile::tempdir().unwrap(), &env).await;
    let status = wait_for_model(&daemon, "failed").await;
    // (`error` itself names the disabled download first in tests.)
    let error = status["cpu_module"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("no llama.cpp CPU module passed verification"),
        "{error}"
    );
    assert!(error.contains("crashy: crashed"), "{error}");
    assert_eq!(status["cpu_module"]["module"], Value::Null, "{status}");
    assert!(log_of(daemon.home.path()).contains("no llama.cpp CPU module passed verification"));
    let r = daemon
        .put(json!({"key": "user.name", "value": "Ada"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "memory still works");
    let found = daemon.get_json("/api/memory/semantic?q=Ada").await;
    assert_eq!(found["entries"][0]["key"], "user.name", "{found}");
    daemon.stop_with(Signal::SIGTERM).await;
}

#[test]
fn a_pinned_module_is_verified_and_an_unknown_pin_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let modules = module_dir(true);
    let dir = modules.path().to_str().unwrap();

    // x64 runs on every x86-64 CPU.
    let out = cli(
        home.path(),
        &[(DIR_ENV, dir), (PIN_ENV, "x64")],
        &["doctor"],
    );
    let report = stdout(&out);
    assert!(out.status.success(), "{report}");
    let ok = line(&report, "ok    cpu module:");
    assert!(ok.contains("x64, verified on this CPU"), "{ok}");
    assert!(ok.contains(&format!("pinned by {PIN_ENV}")), "{ok}");
    assert!(line(&report, "ok    llama.cpp:").contains(dir), "{report}");

    let out = cli(
        home.path(),
        &[(DIR_ENV, dir), (PIN_ENV, "icelak")],
        &["doctor"],
    );
    assert!(!out.status.success());
    let fail = line(&stdout(&out), "FAIL  llama.cpp:").to_owned();
    assert!(fail.contains(&format!("{PIN_ENV}=icelak")), "{fail}");
    assert!(
        fail.contains("available:") && fail.contains("x64"),
        "{fail}"
    );

    // A daemon refuses to start with it, saying the same.
    let out = cli(
        home.path(),
        &[(DIR_ENV, dir), (PIN_ENV, "icelak")],
        &["serve", "--port", "0"],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no such llama.cpp CPU module"),
        "{}",
        stderr(&out)
    );

    // Pinned, the stub is still probed: a clear failure, not a crash.
    let out = cli(
        home.path(),
        &[(DIR_ENV, dir), (PIN_ENV, "crashy")],
        &["doctor"],
    );
    assert!(!out.status.success());
    let report = stdout(&out);
    let fail = line(&report, "FAIL  llama.cpp:");
    assert!(
        fail.contains("the pinned CPU module crashy failed verification"),
        "{fail}"
    );
    assert!(fail.contains("SIGILL"), "{fail}");
    assert!(
        line(&report, "ok    memory.db").starts_with("ok"),
        "doctor went on: {report}"
    );
}
