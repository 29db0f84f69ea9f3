//! `kirocrew config get|set` and the layering of config.json and KIROCREW_*.

use std::process::Command;

use crate::cli::{run_cli, stderr, stdout};
use crate::helpers::binary;

#[test]
fn set_validates_and_writes_config_json() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let out = run_cli(h, &["config", "set", "memory.history_idle_hours", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(h.join("config.json")).unwrap()).unwrap();
    assert_eq!(file["memory"]["history_idle_hours"], 2);
    let out = run_cli(h, &["config", "get", "memory.history_idle_hours"]);
    assert_eq!(stdout(&out).trim(), "2");

    let before = std::fs::read(h.join("config.json")).unwrap();
    for (args, message) in [
        (
            vec!["config", "set", "memory.nope", "1"],
            "unknown config key",
        ),
        (
            vec!["config", "set", "memory.history_idle_hours", "soon"],
            "must be a number",
        ),
        (
            vec!["config", "set", "memory.history_idle_hours", "-3"],
            "positive",
        ),
        (vec!["config", "set", "server.port", "70000"], "server.port"),
        (
            vec!["config", "set", "auth.loopback_trusted", "maybe"],
            "boolean",
        ),
        (vec!["config", "set", "memory", "1"], "section"),
        (vec!["config", "get", "memory.nope"], "unknown config key"),
    ] {
        let out = run_cli(h, &args);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(
        std::fs::read(h.join("config.json")).unwrap(),
        before,
        "file untouched"
    );
    let out = run_cli(h, &["config", "set", "memory.extra_prefixes", "team,org"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&run_cli(h, &["config", "get", "memory.extra_prefixes"]))
            .split_whitespace()
            .collect::<String>(),
        "[\"team\",\"org\"]"
    );
}

#[test]
fn environment_overrides_the_file() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    assert!(run_cli(h, &["config", "set", "server.port", "9001"])
        .status
        .success());
    let out = Command::new(binary())
        .args(["config", "get", "server.port"])
        .env("KIROCREW_HOME", h)
        .env("KIROCREW_SKIP_MODEL_DOWNLOAD", "1")
        .env("KIROCREW_SERVER__PORT", "9002")
        .output()
        .unwrap();
    assert_eq!(stdout(&out).trim(), "9002");
    let out = Command::new(binary())
        .args(["config", "get", "server.port"])
        .env("KIROCREW_HOME", h)
        .env("KIROCREW_SKIP_MODEL_DOWNLOAD", "1")
        .env("KIROCREW_SERVER__PROT", "9002")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("KIROCREW_SERVER__PROT"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn serve_refuses_a_broken_config_clearly() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.json"),
        "{\"server\": {\"port\": \"eighty\"}}",
    )
    .unwrap();
    let out = run_cli(home.path(), &["serve", "--port", "0"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("server.port must be an integer"),
        "{}",
        stderr(&out)
    );
    assert!(
        !home.path().join("memory.db").exists(),
        "nothing was created"
    );
}
