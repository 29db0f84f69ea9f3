//! `kirocrew consolidation status [--json] | run SESSION` (issue 14): the
//! real binary talking to a daemon started in this process (found through
//! its daemon.json and token), and a clear error with a non-zero exit when
//! no daemon runs.

use std::path::PathBuf;
use std::process::Output;

use serde_json::{json, Value};

use crate::chat_server::{is_history, Reply};
use crate::cli::{run_cli, stderr, stdout};
use crate::consolidation::{say, settled, spawn_with_endpoint};
use crate::helpers::TestApp;

/// Runs the CLI off the actix thread (the daemon's actors live on it).
async fn cli(app: &TestApp, args: &[&str]) -> Output {
    let home: PathBuf = app.home_path().to_path_buf();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    actix_rt::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_cli(&home, &args)
    })
    .await
    .expect("cli task")
}

fn answer(request: &Value) -> Reply {
    if is_history(request) {
        Reply::Answer(
            json!({"history": "Talked about tea.", "episodic": [], "lessons": []}).to_string(),
        )
    } else {
        Reply::Answer(json!({"semantic": []}).to_string())
    }
}

#[actix_rt::test]
async fn status_and_run_talk_to_the_running_daemon() {
    let (_server, app) = spawn_with_endpoint(answer).await;
    say(&app, "cli:1", "user", "I drink green tea every morning.").await;
    say(&app, "cli:1", "assistant", "Noted.").await;

    let out = cli(&app, &["consolidation", "status", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let status: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(status["model"]["backend"], "openai_compatible");
    assert_eq!(status["sessions"][0]["session"], "cli:1");
    assert_eq!(status["sessions"][0]["unconsolidated"], 2);

    let out = cli(&app, &["consolidation", "run", "cli:1"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("cli:1: started prefs and history"),
        "{}",
        stdout(&out)
    );
    let mut s = settled(&app, "cli:1").await;
    for _ in 0..300 {
        if s["unconsolidated"] == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        s = settled(&app, "cli:1").await;
    }
    assert_eq!(s["unconsolidated"], 0, "{s}");

    let out = cli(&app, &["consolidation", "status"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("model: openai_compatible test-model (configured)"),
        "{text}"
    );
    assert!(text.contains("cli:1: 0 unconsolidated"), "{text}");

    // An unknown session: the API's stable code, exit 1.
    let out = cli(&app, &["consolidation", "run", "nobody"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("session_not_found"),
        "{}",
        stderr(&out)
    );
    app.stop().await;
}

#[test]
fn without_a_daemon_both_commands_fail_clearly() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["consolidation", "status"][..],
        &["consolidation", "run", "web:1"][..],
    ] {
        let out = run_cli(home.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&out).contains("no kirocrew daemon is running"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}
