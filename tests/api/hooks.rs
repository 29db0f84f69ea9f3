//! The hook endpoints as the gateway uses them: tool-call decisions from
//! config rules and script hooks, message hooks, live config edits through
//! `PUT /api/hooks`, the test endpoint, and every decision in the security
//! log.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, spawn_app_with, TestApp};
use kirocrew_actors::hooks::{AutoReply, ContextRule, Transform};

async fn post(app: &TestApp, path: &str, body: Value) -> Value {
    let r = app
        .request(Method::POST, path)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "POST {path} {body}");
    r.json().await.unwrap()
}

async fn put(app: &TestApp, body: Value) -> reqwest::Response {
    app.request(Method::PUT, "/api/hooks")
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// The security events of `category` in the daemon's log, waiting
/// (bounded) for `at_least` of them.
async fn events_of(app: &TestApp, category: &str, at_least: usize) -> Vec<Value> {
    for _ in 0..50 {
        let path = format!("/api/security/events?category={category}");
        let events = app.get_json(&path).await["events"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if events.len() >= at_least {
            return events;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("fewer than {at_least} {category} events");
}

#[actix_web::test]
async fn config_rules_decide_tool_calls_and_shape_messages() {
    let app = spawn_app_with(|s| {
        s.hooks.auto_approve_tools = vec!["fs_read*".into(), "fs_read_secrets".into()];
        s.hooks.auto_deny_tools = vec!["*secrets*".into()];
        s.hooks.auto_replies = vec![AutoReply {
            pattern: "ping".into(),
            reply: "pong".into(),
        }];
        s.hooks.transforms = vec![Transform {
            pattern: "urgent*".into(),
            prefix: "[PRIORITY]".into(),
        }];
        s.hooks.context_rules = vec![ContextRule {
            keywords: vec!["deploy".into()],
            context: "Deploys go through CI.".into(),
        }];
    })
    .await;
    let allow = post(
        &app,
        "/api/hooks/tool-call",
        json!({"tool_name": "fs_read_file", "input": {"path": "/tmp/x"}}),
    )
    .await;
    assert_eq!(allow["decision"], "allow");
    assert_eq!(allow["matched"], json!(["auto_approve_tools:fs_read*"]));
    let deny = post(
        &app,
        "/api/hooks/tool-call",
        json!({"tool_name": "fs_read_secrets"}),
    )
    .await;
    assert_eq!(deny["decision"], "deny", "deny overrides approve");
    let ask = post(&app, "/api/hooks/tool-call", json!({"tool_name": "shell"})).await;
    assert_eq!(ask["decision"], "ask");

    let reply = post(
        &app,
        "/api/hooks/message",
        json!({"text": "PING", "session_key": "s1"}),
    )
    .await;
    assert_eq!(reply["auto_reply"], "pong");
    let shaped = post(
        &app,
        "/api/hooks/message",
        json!({"text": "urgent: deploy now"}),
    )
    .await;
    assert!(shaped.get("auto_reply").is_none());
    assert_eq!(shaped["text"], "[PRIORITY]\nurgent: deploy now");
    assert_eq!(shaped["context"], json!(["Deploys go through CI."]));
    let plain = post(&app, "/api/hooks/message", json!({"text": "hello"})).await;
    assert_eq!(plain["text"], "hello");
    assert_eq!(plain["context"], json!([]));

    // Three tool decisions and two message decisions ("hello" fired
    // nothing), newest first.
    let events = events_of(&app, "hook_decision", 5).await;
    assert_eq!(events.len(), 5, "{events:#?}");
    assert_eq!(events[0]["outcome"], "modified");
    assert_eq!(events[1]["outcome"], "auto_reply");
    assert_eq!(events[2]["detail"]["tool"], "shell");
    assert_eq!(events[3]["outcome"], "deny");
    assert_eq!(events[4]["outcome"], "allow");

    for (path, body, code) in [
        (
            "/api/hooks/tool-call",
            json!({"tool_name": ""}),
            "invalid_hook_request",
        ),
        (
            "/api/hooks/tool-call",
            json!({"tool_name": "a\nb"}),
            "invalid_hook_request",
        ),
        ("/api/hooks/tool-call", json!({"tool": "x"}), "invalid_body"),
        (
            "/api/hooks/message",
            json!({"text": "x".repeat(100_001)}),
            "invalid_hook_request",
        ),
    ] {
        let r = app
            .request(Method::POST, path)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        assert!(
            status == 422 || status == 400 || status == 413,
            "{path}: {status}"
        );
        if status == 422 {
            assert_error(r, 422, code).await;
        }
    }
}

#[actix_web::test]
async fn script_hooks_edited_live_decide_and_can_be_tested() {
    let app = spawn_app_with(|s| s.hooks.remote_scripts = true).await;
    let dir = app.home_path().to_path_buf();
    let guard = dir.join("guard.sh");
    std::fs::write(
        &guard,
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n  *push*--force*) echo 'no force pushes' >&2; exit 2;;\nesac\nprintf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'\n",
    )
    .unwrap();
    let hooks_json = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("sh {}", guard.display()), "timeout": 5}
        ]}],
        "UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "echo 'Freeze: no deploys today.'"},
            {"type": "prompt", "prompt": "judge it"}
        ]}]
    }});
    let r = put(&app, json!({"hooks_json": hooks_json})).await;
    assert_eq!(r.status(), 200);
    let saved: Value = r.json().await.unwrap();
    assert_eq!(saved["warnings"].as_array().unwrap().len(), 1, "{saved}");
    assert_eq!(saved["scripts"].as_array().unwrap().len(), 2);

    let push = post(
        &app,
        "/api/hooks/tool-call",
        json!({"tool_name": "Bash", "input": {"command": "git push --force"}}),
    )
    .await;
    assert_eq!(push["decision"], "deny");
    assert_eq!(push["reason"], "no force pushes");
    let status = post(
        &app,
        "/api/hooks/tool-call",
        json!({"tool_name": "Bash", "input": {"command": "git status"}}),
    )
    .await;
    assert_eq!(status["decision"], "allow");
    let other = post(&app, "/api/hooks/tool-call", json!({"tool_name": "Read"})).await;
    assert_eq!(other["decision"], "ask", "the matcher is Bash only");
    assert_eq!(other["scripts"], json!([]));
    let msg = post(&app, "/api/hooks/message", json!({"text": "ship it"})).await;
    assert_eq!(msg["context"], json!(["Freeze: no deploys today."]));

    // Config rules edited live: a deny pattern now wins before any script.
    let r = put(&app, json!({"rules": {"auto_deny_tools": ["Bash"]}})).await;
    assert_eq!(r.status(), 200);
    let denied = post(
        &app,
        "/api/hooks/tool-call",
        json!({"tool_name": "Bash", "input": {"command": "ls"}}),
    )
    .await;
    assert_eq!(denied["decision"], "deny");
    assert_eq!(denied["scripts"], json!([]));
    let listing = app.get_json("/api/hooks").await;
    assert_eq!(listing["rules"]["auto_deny_tools"], json!(["Bash"]));
    assert_eq!(listing["hooks_json"], hooks_json);
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    assert_eq!(config["hooks"]["auto_deny_tools"], json!(["Bash"]));

    // The test endpoint runs one hook with a sample event.
    let tested = post(
        &app,
        "/api/hooks/test",
        json!({"event": "PreToolUse", "index": 0}),
    )
    .await;
    assert_eq!(tested["outcome"]["exit_code"], 0);
    assert_eq!(tested["verdict"]["permission"], "allow");
    let r = app
        .request(Method::POST, "/api/hooks/test")
        .json(&json!({"event": "PreToolUse", "index": 5}))
        .send()
        .await
        .unwrap();
    assert_error(r, 404, "hook_not_found").await;

    // Bad edits change nothing.
    for body in [
        json!({}),
        json!({"rules": {"auto_deny_tools": [""]}}),
        json!({"rules": {"auto_replys": []}}),
        json!({"rules": {"script_timeout_secs": 0}}),
        json!({"hooks_json": {"PreToolUse": []}}),
    ] {
        let r = put(&app, body.clone()).await;
        assert_eq!(r.status(), 422, "{body}");
    }
    let after = app.get_json("/api/hooks").await;
    assert_eq!(after["rules"], listing["rules"]);
    assert_eq!(after["hooks_json"], hooks_json);
}

#[actix_web::test]
async fn an_edit_of_hooks_json_on_disk_is_picked_up_and_a_broken_one_keeps_the_last_good() {
    let app = spawn_app_with(|_| {}).await;
    let file = app.home_path().join("hooks.json");
    std::fs::write(
        &file,
        r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "exit 2"}]}]}}"#,
    )
    .unwrap();
    let v = post(&app, "/api/hooks/tool-call", json!({"tool_name": "Write"})).await;
    assert_eq!(v["decision"], "deny");
    std::fs::write(&file, "{ not json").unwrap();
    let v = post(&app, "/api/hooks/tool-call", json!({"tool_name": "Write"})).await;
    assert_eq!(v["decision"], "deny", "the last good hooks stay in force");
    let listing = app.get_json("/api/hooks").await;
    assert!(listing["load_errors"][0]
        .as_str()
        .unwrap()
        .starts_with("hooks.json"));
}

#[test]
fn the_cli_lists_and_tests_hooks() {
    use crate::cli::{run_cli, stderr, stdout};
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.json"),
        r#"{"hooks": {"auto_deny_tools": ["rm_*"], "context_rules": [{"keywords": ["deploy"], "context": "CI only"}]}}"#,
    )
    .unwrap();
    std::fs::write(
        home.path().join("hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash|Write", "hooks": [
            {"type": "command", "command": "echo \"$KIROCREW_HOOK_EVENT\" >&2; exit 2", "timeout": 5},
            {"type": "http", "url": "http://127.0.0.1:9/x"}]}]}}"#,
    )
    .unwrap();
    let out = run_cli(home.path(), &["hooks", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("auto_deny_tools:    rm_*"), "{text}");
    assert!(text.contains("context     deploy -> \"CI only\""), "{text}");
    assert!(
        text.contains("PreToolUse#0  matcher \"Bash|Write\"  timeout 5s"),
        "{text}"
    );
    assert!(
        text.contains("warning: hooks.PreToolUse[0].hooks[1]: handler type \"http\""),
        "{text}"
    );

    let out = run_cli(home.path(), &["hooks", "test", "PreToolUse", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["outcome"]["exit_code"], 2);
    assert_eq!(report["verdict"]["permission"], "deny");
    assert_eq!(report["verdict"]["reason"], "PreToolUse");

    let out = run_cli(home.path(), &["hooks", "test", "Stop"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no script hook #0 for event Stop"),
        "{}",
        stderr(&out)
    );
    let out = run_cli(
        home.path(),
        &["hooks", "test", "PreToolUse", "--payload", "{nope"],
    );
    assert_eq!(out.status.code(), Some(1));
}

#[actix_web::test]
async fn user_kiro_hooks_are_merged_and_validated() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("guard.sh");
    std::fs::write(&good, "#!/bin/sh\n").unwrap();
    let good = good.canonicalize().unwrap().display().to_string();
    let g = good.clone();
    let app = spawn_app_with(move |s| {
        s.agent.kiro_hooks = json!({"preToolUse": [
            {"matcher": "*", "command": g, "extra": 1},
            {"matcher": "*", "command": g},
            {"command": "/etc/shadow"},
            {"command": "relative.sh"},
        ]});
    })
    .await;
    let listing = app.get_json("/api/hooks").await;
    assert_eq!(
        listing["kiro_hooks"]["hooks"],
        json!({"preToolUse": [{"matcher": "*", "command": good}]})
    );
    assert_eq!(
        listing["kiro_hooks"]["warnings"].as_array().unwrap().len(),
        3,
        "{listing}"
    );
}

#[actix_web::test]
async fn script_hooks_are_installed_at_the_machine_and_every_change_and_test_is_recorded() {
    use kirocrew_actors::hooks::command_hash;
    let app = spawn_app_with(|_| {}).await;
    let token_file = app.home_path().join("api-token");
    let attack = format!("id; env; cat {}", token_file.display());
    let hooks_json =
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": attack}]}]}});

    // Over REST, with the token: refused, nothing written, and recorded.
    let r = put(&app, json!({"hooks_json": hooks_json})).await;
    assert_error(r, 403, "remote_scripts_disabled").await;
    assert!(!app.home_path().join("hooks.json").exists());
    let refused = events_of(&app, "hook_script_change", 1).await;
    assert_eq!(refused[0]["outcome"], "refused");
    assert_eq!(refused[0]["actor"], "http");
    // Nor can the switch be turned on over REST; rules without it keep it.
    let r = put(&app, json!({"rules": {"remote_scripts": true}})).await;
    assert_error(r, 403, "remote_scripts_locked").await;
    let r = put(&app, json!({"rules": {"auto_deny_tools": ["rm_*"]}})).await;
    assert_eq!(r.status(), 200);
    let listing = app.get_json("/api/hooks").await;
    assert_eq!(listing["rules"]["remote_scripts"], false);
    let r = put(&app, json!({"hooks_json": hooks_json})).await;
    assert_error(r, 403, "remote_scripts_disabled").await;
    let r = app
        .request(Method::POST, "/api/hooks/test")
        .json(&json!({"event": "Stop"}))
        .send()
        .await
        .unwrap();
    assert_error(r, 404, "hook_not_found").await;

    // At the machine: hooks.json edited on disk is a recorded change, named
    // by the command's hash, never by the command line.
    let guard = "echo checked >&2";
    std::fs::write(
        app.home_path().join("hooks.json"),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": guard}]}]}})
            .to_string(),
    )
    .unwrap();
    let listing = app.get_json("/api/hooks").await;
    assert_eq!(listing["scripts"].as_array().unwrap().len(), 1);
    let changes = events_of(&app, "hook_script_change", 2).await;
    let change = changes
        .iter()
        .find(|e| e["outcome"] == "changed")
        .expect("the edit on disk is recorded");
    assert_eq!(change["actor"], "hooks.json");
    assert_eq!(
        change["detail"]["added"][0]["command_hash"],
        command_hash(guard)
    );
    assert!(!change.to_string().contains("checked"));

    // Every test run is recorded: REST here, the CLI on the same home.
    let report = post(&app, "/api/hooks/test", json!({"event": "Stop"})).await;
    assert_eq!(report["outcome"]["exit_code"], 0);
    let out = crate::cli::run_cli(app.home_path(), &["hooks", "test", "Stop"]);
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    let tests = events_of(&app, "hook_script_test", 2).await;
    for actor in ["http", "cli"] {
        let run = tests
            .iter()
            .find(|e| e["actor"] == actor)
            .unwrap_or_else(|| panic!("no test run by {actor}: {tests:?}"));
        assert_eq!(run["detail"]["command_hash"], command_hash(guard));
    }
    app.stop().await;
}

/// Issue 41: the test endpoint's answer says which sandbox layers held,
/// and a hook run through it cannot read the API token; `hooks.sandbox`
/// cannot be loosened over REST.
#[actix_web::test]
async fn the_hook_test_reports_the_sandbox_and_the_token_stays_hidden() {
    let app = spawn_app_with(|_| {}).await;
    let token_file = app.home_path().join("api-token");
    let token = std::fs::read_to_string(&token_file).unwrap();
    assert!(!token.trim().is_empty());
    let attack = format!("cat {}; echo read-done", token_file.display());
    std::fs::write(
        app.home_path().join("hooks.json"),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": attack}]}]}})
            .to_string(),
    )
    .unwrap();
    let report = post(&app, "/api/hooks/test", json!({"event": "Stop"})).await;
    let sandbox = &report["outcome"]["sandbox"];
    assert_eq!(sandbox["mode"], "best_effort", "{report}");
    assert_eq!(sandbox["refused"], false);
    let layers = &sandbox["layers"];
    for layer in [
        "env",
        "network",
        "filesystem",
        "secrets_hidden",
        "cpu",
        "memory",
        "processes",
        "file_size",
    ] {
        assert!(layers[layer].is_boolean(), "{layer}: {sandbox}");
    }
    let stdout = report["outcome"]["stdout"].as_str().unwrap();
    assert!(stdout.contains("read-done"), "{report}");
    if layers["secrets_hidden"] == true {
        assert!(!stdout.contains(token.trim()), "the token leaked: {report}");
    } else {
        let missing = sandbox["missing"].as_array().unwrap();
        assert!(missing.contains(&json!("secrets_hidden")), "{sandbox}");
    }
    let r = put(&app, json!({"rules": {"sandbox": "off"}})).await;
    assert_error(r, 403, "sandbox_locked").await;
    let r = put(&app, json!({"rules": {"auto_deny_tools": ["rm_*"]}})).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        app.get_json("/api/hooks").await["rules"]["sandbox"],
        "best_effort"
    );
    app.stop().await;
}
