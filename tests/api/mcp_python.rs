//! The MCP server driven by a second, independent client: the official MCP
//! Python SDK (PyPI `mcp`, `tests/mcp_python/client.py`), over Streamable
//! HTTP and over stdio through the real `kirocrew mcp`, with ordinary
//! English questions. `make test` installs the SDK into a cached venv and
//! names its interpreter in `KIROCREW_MCP_PYTHON`.

use std::path::PathBuf;
use std::process::Command;

use crate::helpers::{binary, required_asset, spawn_app, TestApp};
use crate::mcp::add_skill;

fn python() -> Option<PathBuf> {
    let path = std::env::var_os("KIROCREW_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/kirocrew/mcp-venv/bin/python"));
    required_asset(path, "make test installs the MCP Python SDK into a venv")
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/client.py")
}

/// Runs the client off the runtime thread (the daemon serves on it).
async fn run_client(python: PathBuf, args: Vec<String>) {
    let out = actix_web::rt::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script())
            .args(&args)
            .output()
            .expect("run the Python MCP client")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python SDK client failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}

/// A daemon with the `deploy-check` skill, and the client run against it
/// with `args(app)`.
async fn drive(args: impl FnOnce(&TestApp) -> Vec<String>) {
    let Some(python) = python() else { return };
    let app = spawn_app().await;
    add_skill(&app).await;
    run_client(python, args(&app)).await;
    app.stop().await;
}

#[actix_web::test]
async fn the_python_sdk_uses_every_tool_over_http() {
    drive(|app| {
        vec![
            "http".into(),
            format!("{}/mcp", app.base),
            app.token.clone(),
        ]
    })
    .await;
}

#[actix_web::test]
async fn the_python_sdk_uses_every_tool_over_stdio() {
    drive(|app| {
        vec![
            "stdio".into(),
            binary().display().to_string(),
            app.home_path().display().to_string(),
        ]
    })
    .await;
}
