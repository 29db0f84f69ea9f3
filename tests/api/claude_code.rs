//! The Claude Code integration, driven the way Claude Code drives it: the
//! real `kirocrew hook claude-code` binary fed hook payloads on stdin (the
//! corpus fragments of Claude Code's documented input, merged with its
//! common fields, plus unknown extra fields that must be ignored) against
//! a running daemon; the daemon-down paths; `install` / `uninstall` on
//! settings files with unrelated entries.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

use crate::helpers::{binary, spawn_app_with, TestApp};
use kirocrew_actors::hooks::AutoReply;

fn corpus(name: &str) -> Option<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/hooks")
        .join(name);
    let path = crate::helpers::required_asset(path, "../shared beside the checkout")?;
    let text = std::fs::read_to_string(&path).expect("corpus file readable");
    Some(serde_json::from_str(&text).expect("corpus file is JSON"))
}

/// A complete payload: the common fields, the event fragment, our session
/// and transcript, and a field no Claude Code version sends.
pub(crate) fn payload(fragment: &str, session: &str, transcript: Option<&Path>) -> Option<Value> {
    let mut doc = corpus("stdin--common-fields.json")?;
    let fields = doc.as_object_mut().unwrap();
    for (k, v) in corpus(fragment)?.as_object().unwrap() {
        fields.insert(k.clone(), v.clone());
    }
    fields.insert("session_id".into(), json!(session));
    match transcript {
        Some(t) => fields.insert("transcript_path".into(), json!(t)),
        None => fields.remove("transcript_path"),
    };
    fields.insert("some_future_field".into(), json!({"nested": [1, 2, 3]}));
    Some(doc)
}

fn hook_in(home: &Path, input: &str) -> Output {
    let mut child = Command::new(binary())
        .arg("--home")
        .arg(home)
        .args(["hook", "claude-code"])
        .env_remove("KIROCREW_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hook adapter");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs the adapter off the test's runtime thread (the daemon under test
/// serves on that thread).
pub(crate) async fn hook(home: &Path, input: Value) -> (Output, Option<Value>) {
    let home = home.to_path_buf();
    let out = actix_web::rt::task::spawn_blocking(move || hook_in(&home, &input.to_string()))
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let answer = (!stdout.is_empty()).then(|| {
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}"))
    });
    (out, answer)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) async fn daemon() -> TestApp {
    spawn_app_with(|s| {
        s.hooks.auto_deny_tools = vec!["Bash(rm*".into(), "*--force*".into()];
        s.hooks.auto_approve_tools = vec!["Read".into()];
        s.hooks.auto_replies = vec![AutoReply {
            pattern: "ping".into(),
            reply: "pong".into(),
        }];
    })
    .await
}

#[actix_web::test]
async fn every_event_gets_the_documented_answer() {
    let app = daemon().await;
    let home = app.home_path().to_path_buf();
    let r = app
        .put_semantic(json!({"key": "pref.editor", "value": "helix"}))
        .await;
    assert_eq!(r.status(), 200);

    // SessionStart → additionalContext with memory.
    let Some(start) = payload("stdin--sessionstart.json", "s-1", None) else {
        return;
    };
    let (out, answer) = hook(&home, start).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let answer =
        answer.unwrap_or_else(|| panic!("SessionStart answered nothing; stderr: {}", stderr(&out)));
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "SessionStart"
    );
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("helix"), "{context}");
    assert!(
        context.chars().count() <= 9_500,
        "within claude_code.context_chars"
    );
    assert_eq!(
        answer.as_object().unwrap().len(),
        1,
        "only hookSpecificOutput: {answer}"
    );

    // UserPromptSubmit → additionalContext; an auto-reply refuses the prompt.
    let Some(mut prompt) = payload("stdin--userpromptsubmit.json", "s-1", None) else {
        return;
    };
    prompt["prompt"] = json!("Which editor do I use?");
    let (out, answer) = hook(&home, prompt.clone()).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let answer = answer.expect("UserPromptSubmit context");
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    assert!(answer["hookSpecificOutput"]["additionalContext"].is_string());
    prompt["prompt"] = json!("ping");
    let (_, answer) = hook(&home, prompt).await;
    assert_eq!(
        answer.unwrap(),
        json!({"decision": "block", "reason": "pong"})
    );

    // PreToolUse: the corpus's `git push --force` is denied by a pattern,
    // `rm -rf /` by the rule form, Read allowed, anything else left to
    // Claude Code's own rules (no output).
    let Some(mut tool) = payload("stdin--pretooluse-bash.json", "s-1", None) else {
        return;
    };
    let (_, answer) = hook(&home, tool.clone()).await;
    let out = &answer.expect("a decision")["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse");
    assert_eq!(out["permissionDecision"], "deny");
    assert!(
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("--force"),
        "{out}"
    );
    tool["tool_input"]["command"] = json!("rm -rf /");
    let (_, answer) = hook(&home, tool.clone()).await;
    assert_eq!(
        answer.unwrap()["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    tool["tool_input"]["command"] = json!("ls -la");
    let (out, answer) = hook(&home, tool.clone()).await;
    assert!(out.status.success());
    assert_eq!(answer, None, "no rule spoke: Claude Code decides");
    tool["tool_name"] = json!("Read");
    tool["tool_input"] = json!({"file_path": "/tmp/a.txt"});
    let (_, answer) = hook(&home, tool).await;
    assert_eq!(
        answer.unwrap()["hookSpecificOutput"]["permissionDecision"],
        "allow"
    );

    // PostToolUse: acknowledged with nothing on stdout.
    let Some(post) = corpus("stdin--posttooluse-bash--captured.json") else {
        return;
    };
    let (out, answer) = hook(&home, post).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(answer, None);
    app.stop().await;
}

/// Issue 35, defect 2: the adapter never says which prompt is a session's
/// first, so no Claude Code prompt carried `[Episodic Memory]`. The daemon
/// infers it: the first prompt of a session gets episodic memory, the next
/// one (answered, not yet recorded: Claude Code sends the transcript at
/// Stop) does not, and a new session's first prompt does again. The
/// receipt says why each time.
#[actix_web::test]
async fn the_first_prompt_of_a_session_carries_episodic_memory() {
    let app = daemon().await;
    let home = app.home_path().to_path_buf();
    let r = app
        .request(reqwest::Method::POST, "/api/memory/episodic")
        .json(&json!({"text": "We moved the deploy window to Thursday at 14:00 because of the Lisbon offsite.", "importance": 0.8}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());

    let Some(mut prompt) = payload("stdin--userpromptsubmit.json", "ep-1", None) else {
        return;
    };
    let question = "When is the deploy window now?";
    prompt["prompt"] = json!(question);
    let context = |answer: Option<Value>| -> String {
        answer.expect("UserPromptSubmit context")["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let (out, answer) = hook(&home, prompt.clone()).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let first = context(answer);
    assert!(first.contains("[Episodic Memory]"), "{first}");
    assert!(first.contains("Thursday at 14:00"), "{first}");

    let (_, answer) = hook(&home, prompt.clone()).await;
    let second = context(answer);
    assert!(!second.contains("[Episodic Memory]"), "{second}");

    prompt["session_id"] = json!("ep-2");
    let (_, answer) = hook(&home, prompt).await;
    assert!(context(answer).contains("Thursday at 14:00"));

    // The gateway surface says why, in the receipt: inferred for a new key,
    // then a later message once a user turn is recorded.
    let built = app
        .post_json(
            "/api/sessions/gw-1/messages",
            json!({"role": "user", "text": question}),
        )
        .await;
    let episodic = &built["receipt"]["episodic"];
    assert_eq!(episodic["decided_by"], "inferred", "{built}");
    assert_eq!(episodic["first_message"], true, "{built}");
    assert_eq!(episodic["included"], true, "{built}");
    let built = app
        .post_json(
            "/api/sessions/gw-1/messages",
            json!({"role": "user", "text": question}),
        )
        .await;
    let episodic = &built["receipt"]["episodic"];
    assert_eq!(episodic["first_message"], false, "{built}");
    assert!(
        episodic["why"]
            .as_str()
            .unwrap()
            .contains("1 recorded user turns"),
        "{built}"
    );
    // The caller's word wins.
    let built = app
        .post_json(
            "/api/sessions/gw-1/messages",
            json!({"role": "user", "text": question, "first_message": true}),
        )
        .await;
    assert_eq!(built["receipt"]["episodic"]["decided_by"], "caller");
    assert_eq!(built["receipt"]["episodic"]["included"], true, "{built}");
    app.stop().await;
}

pub(crate) fn transcript_line(kind: &str, uuid: &str, text: &str) -> String {
    json!({
        "type": kind, "uuid": uuid, "sessionId": "s-2", "timestamp": "2026-11-30T10:00:00Z",
        "message": {"role": kind, "content": [{"type": "text", "text": text}]}
    })
    .to_string()
}

#[actix_web::test]
async fn stop_session_end_and_pre_compact_import_the_transcript_once() {
    let app = daemon().await;
    let home = app.home_path().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("s-2.jsonl");
    let mut lines = vec![
        transcript_line("user", "u1", "Please remember that our staging cluster is in Frankfurt."),
        transcript_line("assistant", "a1", "Noted: staging runs in Frankfurt."),
        // A tool call and its result are not conversation.
        json!({"type": "assistant", "uuid": "a2", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}}).to_string(),
        json!({"type": "user", "uuid": "u2", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "secret file list"}]}}).to_string(),
        json!({"type": "summary", "summary": "x"}).to_string(),
    ];
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    let Some(stop) = payload("stdin--stop.json", "s-2", Some(&transcript)) else {
        return;
    };
    let (out, answer) = hook(&home, stop.clone()).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(answer, None);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let turns_file = home.join("sessions").join("claude-code%3As-2.jsonl");
    let stored = || -> Vec<Value> {
        std::fs::read_to_string(&turns_file)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let first = stored();
    assert_eq!(first.len(), 2, "the two spoken turns: {first:?}");
    assert!(first[0]["text"].as_str().unwrap().contains("Frankfurt"));
    assert!(!first
        .iter()
        .any(|t| t["text"].as_str().unwrap().contains("secret file list")));

    // Re-sent (Stop fires after every answer): nothing twice. The grown
    // transcript adds only its new line, through SessionEnd and PreCompact.
    let (_, _) = hook(&home, stop).await;
    assert_eq!(stored().len(), 2);
    lines.push(transcript_line(
        "user",
        "u3",
        "And production is in Dublin.",
    ));
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    let Some(end) = payload("stdin--sessionend.json", "s-2", Some(&transcript)) else {
        return;
    };
    hook(&home, end).await;
    let Some(compact) = payload("stdin--precompact.json", "s-2", Some(&transcript)) else {
        return;
    };
    hook(&home, compact).await;
    let after = stored();
    assert_eq!(after.len(), 3, "{after:?}");
    assert!(after[2]["text"].as_str().unwrap().contains("Dublin"));
    app.stop().await;
}

#[actix_web::test]
async fn with_no_daemon_context_fails_open_and_tools_can_fail_closed() {
    let home = tempfile::tempdir().unwrap();
    let Some(prompt) = payload("stdin--userpromptsubmit.json", "s-3", None) else {
        return;
    };
    let (out, answer) = hook(home.path(), prompt).await;
    assert!(out.status.success(), "fail open: exit 0");
    assert_eq!(answer, None, "nothing on stdout");
    assert_eq!(
        stderr(&out).lines().count(),
        1,
        "one warning: {}",
        stderr(&out)
    );

    let Some(tool) = payload("stdin--pretooluse-bash.json", "s-3", None) else {
        return;
    };
    let (out, answer) = hook(home.path(), tool.clone()).await;
    assert!(out.status.success());
    assert_eq!(answer, None, "fail_closed is off by default");
    std::fs::write(
        home.path().join("config.json"),
        r#"{"claude_code": {"fail_closed": true}}"#,
    )
    .unwrap();
    let (out, answer) = hook(home.path(), tool).await;
    assert!(out.status.success());
    let out = &answer.expect("a deny")["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny");
    assert!(out["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .contains("fail_closed"));

    // Input that is not a hook event: exit 1 (a non-blocking hook error).
    let out = hook_in(home.path(), "not json");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not a JSON object"),
        "{}",
        stderr(&out)
    );
    let out = hook_in(home.path(), r#"{"hook_event_name": "Stop"}"#);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("session_id"), "{}", stderr(&out));
}

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(binary())
        .arg("--home")
        .arg(home)
        .args(args)
        .env_remove("KIROCREW_HOME")
        .output()
        .unwrap()
}

#[test]
fn install_merges_keeps_every_entry_and_uninstall_removes_exactly_ours() {
    let Some(original) = corpus("config--davila7-templates--python-project-settings.json") else {
        return;
    };
    let kirohome = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let settings = project.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original_text = serde_json::to_string_pretty(&original).unwrap();
    std::fs::write(&settings, &original_text).unwrap();
    let mcp_file = project.path().join(".mcp.json");
    std::fs::write(
        &mcp_file,
        r#"{"mcpServers": {"other": {"command": "other-server"}}}"#,
    )
    .unwrap();
    let dir = project.path().to_str().unwrap();

    // --dry-run prints the diff and writes nothing.
    let out = run(
        kirohome.path(),
        &["install", "claude-code", "--project", dir, "--dry-run"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(
        diff.contains("+") && diff.contains("hook claude-code"),
        "{diff}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original_text);

    let out = run(
        kirohome.path(),
        &["install", "claude-code", "--project", dir],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    // Every original key and hook group survives.
    for (k, v) in original.as_object().unwrap() {
        if k != "hooks" {
            assert_eq!(&installed[k], v, "{k}");
        }
    }
    for (event, groups) in original["hooks"].as_object().unwrap() {
        for g in groups.as_array().unwrap() {
            assert!(
                installed["hooks"][event].as_array().unwrap().contains(g),
                "{event}: {g}"
            );
        }
    }
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
        "PreCompact",
    ] {
        let ours = installed["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g.to_string().contains("hook claude-code"))
            .count();
        assert_eq!(ours, 1, "{event}");
    }
    let mcp: Value = serde_json::from_str(&std::fs::read_to_string(&mcp_file).unwrap()).unwrap();
    assert_eq!(mcp["mcpServers"]["other"]["command"], "other-server");
    let args = mcp["mcpServers"]["kirocrew"]["args"].as_array().unwrap();
    assert_eq!(args.last().unwrap(), "mcp");
    let backups = std::fs::read_dir(settings.parent().unwrap())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("kirocrew-backup")
        })
        .count();
    assert_eq!(backups, 1, "a backup before the first change");

    // Idempotent.
    let before = std::fs::read_to_string(&settings).unwrap();
    let out = run(
        kirohome.path(),
        &["install", "claude-code", "--project", dir],
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("already installed"));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), before);

    // Uninstall: the original document again (in meaning), the other MCP
    // server kept.
    let out = run(
        kirohome.path(),
        &["uninstall", "claude-code", "--project", dir],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(after, original);
    let mcp: Value = serde_json::from_str(&std::fs::read_to_string(&mcp_file).unwrap()).unwrap();
    assert_eq!(
        mcp,
        json!({"mcpServers": {"other": {"command": "other-server"}}})
    );
}

#[test]
fn a_broken_settings_file_is_never_touched() {
    let kirohome = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let settings = project.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{ \"hooks\": [oops").unwrap();
    let out = run(
        kirohome.path(),
        &[
            "install",
            "claude-code",
            "--project",
            project.path().to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not valid JSON"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{ \"hooks\": [oops"
    );
    assert!(
        !project.path().join(".mcp.json").exists(),
        "nothing written when one file is broken"
    );
}

#[actix_web::test]
async fn script_hooks_decide_pre_tool_use_through_the_adapter() {
    let app = spawn_app_with(|s| s.hooks.remote_scripts = true).await;
    let home = app.home_path().to_path_buf();
    let guard = home.join("guard.sh");
    std::fs::write(
        &guard,
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n  *DROP\\ TABLE*) echo 'no table drops' >&2; exit 2;;\nesac\nexit 0\n",
    )
    .unwrap();
    let hooks_json = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("sh {}", guard.display()), "timeout": 5}
    ]}]}});
    let r = app
        .request(reqwest::Method::PUT, "/api/hooks")
        .json(&json!({"hooks_json": hooks_json}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let Some(mut tool) = payload("stdin--pretooluse-bash.json", "s-4", None) else {
        return;
    };
    tool["tool_input"]["command"] = json!("psql -c 'DROP TABLE users'");
    let (out, answer) = hook(&home, tool.clone()).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let decision = &answer.expect("the script's block")["hookSpecificOutput"];
    assert_eq!(decision["permissionDecision"], "deny");
    assert!(
        decision["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("no table drops"),
        "{decision}"
    );
    tool["tool_input"]["command"] = json!("psql -c 'SELECT 1'");
    let (_, answer) = hook(&home, tool).await;
    assert_eq!(
        answer, None,
        "the script had no opinion: Claude Code decides"
    );
    app.stop().await;
}
