//! Script hooks for real: `/bin/sh` processes with time limits, bounded
//! output, Claude Code's exit-code/JSON contract, and the real hook files
//! of `shared/corpus/hooks`.

use std::path::PathBuf;
use std::time::Duration;

use kirocrew_actors::hooks::{
    interpret, parse_hooks_json, run_script, Permission, SandboxMode, ScriptRun, TimeoutPolicy,
};
use serde_json::Value;

mod common;

/// A run whose hook writes a file the test reads (a sandboxed hook can
/// write only its own scratch directory; `hook_sandbox.rs` tests the
/// sandbox, and the group kill under it).
fn unsandboxed(command: &str, timeout_ms: u64) -> ScriptRun {
    ScriptRun {
        sandbox: SandboxMode::Off,
        ..run(command, timeout_ms)
    }
}

fn run(command: &str, timeout_ms: u64) -> ScriptRun {
    ScriptRun {
        command: command.into(),
        event: "PreToolUse".into(),
        context: r#"{"event":"PreToolUse","tool_name":"Bash"}"#.into(),
        stdin: br#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#.to_vec(),
        timeout: Duration::from_millis(timeout_ms),
        max_output: 4096,
        env: vec![("TOOL_NAME".into(), "Bash".into())],
        ..ScriptRun::default()
    }
}

/// Zombie children of this test process (state Z in /proc).
fn zombie_children() -> Vec<String> {
    let me = std::process::id().to_string();
    let mut zombies = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some(after) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.first() == Some(&"Z") && fields.get(1) == Some(&me.as_str()) {
            zombies.push(stat);
        }
    }
    zombies
}

/// No child of this process stays a zombie. Other tests of this binary run
/// hooks at the same time, so a child of theirs may be a zombie for the
/// instant before its own wait reaps it: only one that stays is a leak.
async fn assert_no_lasting_zombies() {
    let mut zombies = zombie_children();
    for _ in 0..50 {
        if zombies.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        zombies = zombie_children();
    }
    assert!(zombies.is_empty(), "{zombies:?}");
}

#[actix_rt::test]
async fn a_hanging_hook_is_killed_with_its_group_at_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let command = format!("sleep 60 & echo $! > {}; wait", pid_file.display());
    let outcome = run_script(unsandboxed(&command, 500)).await;
    assert!(outcome.timed_out, "{outcome:?}");
    assert_eq!(outcome.exit_code, None);
    assert!(outcome.duration_ms < 10_000, "{}", outcome.duration_ms);
    let verdict = interpret("PreToolUse", &outcome);
    assert!(verdict.error.unwrap().contains("timed out"));
    assert!(verdict.permission.is_none(), "a timeout never decides");
    // The background `sleep` was in the hook's process group: gone too.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let proc_dir = PathBuf::from(format!("/proc/{}", pid.trim()));
    let mut alive = true;
    for _ in 0..50 {
        let state = std::fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
        alive = !state.is_empty() && !state.contains(") Z ");
        if !alive {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive, "the hook's background child survived");
    assert_no_lasting_zombies().await;
}

/// Whether `pid` still runs (a zombie waiting for its reaper does not).
async fn gone(pid: &str) -> bool {
    let proc_dir = PathBuf::from(format!("/proc/{}", pid.trim()));
    for _ in 0..100 {
        let state = std::fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
        if state.is_empty() || state.contains(") Z ") {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Issue 42: a child that left the hook's process group (`setsid`) used
/// to outlive the hook. It carries the run's marker, so it is killed too,
/// when the hook ends and when it times out.
#[actix_rt::test]
async fn a_child_that_left_the_group_does_not_outlive_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    for (wait, timeout_ms) in [("", 5_000), ("; sleep 60", 500)] {
        let pid_file = dir.path().join(format!("pid{timeout_ms}"));
        let command = format!(
            "setsid sh -c 'echo $$ > {}; exec sleep 60' & while [ ! -s {} ]; do sleep 0.01; done{wait}",
            pid_file.display(),
            pid_file.display()
        );
        let outcome = run_script(unsandboxed(&command, timeout_ms)).await;
        assert_eq!(outcome.timed_out, !wait.is_empty(), "{outcome:?}");
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        assert!(gone(&pid).await, "the setsid child {} survived", pid.trim());
    }
    assert_no_lasting_zombies().await;
}

#[actix_rt::test]
async fn a_flooding_hook_is_captured_within_the_bound() {
    let outcome = run_script(run(
        "head -c 5000000 /dev/zero | tr '\\0' x; echo done >&2",
        20_000,
    ))
    .await;
    assert_eq!(outcome.exit_code, Some(0), "{:?}", outcome.stderr);
    assert!(outcome.output_truncated);
    assert_eq!(outcome.stdout.len(), 4096);
    assert_eq!(outcome.stderr.trim(), "done");
    // One that floods forever is stopped by its time limit, still bounded.
    let endless = run_script(run("yes", 500)).await;
    assert!(endless.timed_out);
    assert!(endless.stdout.len() <= 4096);
    assert_no_lasting_zombies().await;
}

#[actix_rt::test]
async fn exit_two_blocks_and_json_decides() {
    let outcome = run_script(run("echo 'force push is not allowed' >&2; exit 2", 5_000)).await;
    let v = interpret("PreToolUse", &outcome);
    assert_eq!(v.permission, Some(Permission::Deny));
    assert!(v.block);
    assert_eq!(v.reason.as_deref(), Some("force push is not allowed"));

    let ask = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check first"}}"#;
    let outcome = run_script(run(&format!("printf '%s' '{ask}'"), 5_000)).await;
    let v = interpret("PreToolUse", &outcome);
    assert_eq!(v.permission, Some(Permission::Ask));
    assert_eq!(v.reason.as_deref(), Some("check first"));

    let crash = run_script(run("echo broken >&2; exit 1", 5_000)).await;
    let v = interpret("PreToolUse", &crash);
    assert_eq!(v.permission, None);
    assert_eq!(v.error.as_deref(), Some("exit 1: broken"));

    let missing = run_script(run("/nonexistent/guard.sh", 5_000)).await;
    assert_eq!(missing.exit_code, Some(127));
    assert!(interpret("PreToolUse", &missing).error.is_some());
}

#[actix_rt::test]
async fn the_hook_gets_the_event_on_stdin_and_in_its_environment() {
    // Echoed on stdout: a sandboxed hook writes only its scratch dir.
    let command = "cat; printf '\\n%s|%s|%s' \"$KIROCREW_HOOK_EVENT\" \"$KIROCREW_HOOK_CONTEXT\" \"$TOOL_NAME\"";
    let outcome = run_script(run(command, 5_000)).await;
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    let (stdin, env) = outcome.stdout.rsplit_once('\n').unwrap();
    let stdin: Value = serde_json::from_str(stdin).unwrap();
    assert_eq!(stdin["tool_name"], "Bash");
    assert_eq!(
        env,
        r#"PreToolUse|{"event":"PreToolUse","tool_name":"Bash"}|Bash"#
    );
    // A hook that never reads stdin does not stall.
    let ignores = run_script(run("exit 0", 5_000)).await;
    assert_eq!(ignores.exit_code, Some(0));
}

fn corpus() -> Option<PathBuf> {
    common::shared_asset("corpus/hooks")
}

const POLICY: TimeoutPolicy = TimeoutPolicy {
    default: Duration::from_secs(30),
    max: Duration::from_secs(600),
};

/// Every real configuration file loads; the table says what each yields
/// and why anything is skipped.
#[test]
fn the_corpus_configurations_parse() {
    let Some(dir) = corpus() else {
        return;
    };
    // (file, runnable command hooks, skipped or adjusted entries); the
    // counts were checked against an independent count of `command`
    // handlers in each file.
    let expected: &[(&str, usize, usize)] = &[
        ("config--1password-agent-hooks--claude-settings.json", 1, 0),
        // Copilot's flat shape: one bare command, taken as a handler.
        (
            "config--1password-agent-hooks--github-copilot-hooks.json",
            1,
            0,
        ),
        ("config--agentskills-spec--project-settings.json", 1, 0),
        (
            "config--davila7-templates--python-project-settings.json",
            11,
            0,
        ),
        ("config--edmonds-hooks-daemon--project-settings.json", 10, 0),
        ("config--kouko-monkey-skills--project-settings.json", 4, 0),
        ("config--mem0ai-mem0--plugin-hooks.json", 11, 0),
        ("config--obra-superpowers--plugin-hooks.json", 1, 0),
        // 27 handlers say `timeout: 5000`/`15000` "seconds" (milliseconds
        // meant): kept, cut to the 600 s limit, each with a warning.
        ("config--terrylica-cc-skills--itp-hooks-plugin.json", 28, 27),
        // Two `type: prompt` handlers are LLM-evaluated: not run here.
        (
            "config--trailofbits-skills--fp-check-prompt-hooks.json",
            0,
            2,
        ),
        ("config--trailofbits-skills--gh-cli-plugin-hooks.json", 5, 0),
        (
            "config--trailofbits-skills--skill-improver-stop-hook.json",
            1,
            0,
        ),
        ("config--uipath-skills--polyglot-plugin-hooks.json", 7, 0),
        ("config--wshobson-agents--protect-mcp-hooks.json", 2, 0),
    ];
    let mut report = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("config--") {
            continue;
        }
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(entry.path()).unwrap()).unwrap();
        let set = parse_hooks_json(&doc, POLICY);
        report.push((name, set.hooks.len(), set.warnings.len()));
    }
    report.sort();
    let got: Vec<(&str, usize, usize)> = report
        .iter()
        .map(|(n, h, w)| (n.as_str(), *h, *w))
        .collect();
    assert_eq!(got, expected, "{report:#?}");
}

#[test]
fn the_corpus_outputs_decide() {
    let Some(dir) = corpus() else { return };
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let outcome = |stdout: String| kirocrew_actors::hooks::ScriptOutcome {
        exit_code: Some(0),
        stdout,
        ..Default::default()
    };
    let ask = interpret("PreToolUse", &outcome(read("output--pretooluse-ask.json")));
    assert_eq!(ask.permission, Some(Permission::Ask));
    assert!(ask.reason.unwrap().starts_with("[FAKE DATA GUARD]"));
    let block = interpret(
        "PostToolUse",
        &outcome(read("output--posttooluse-block-all-fields.json")),
    );
    assert!(block.block);
    assert_eq!(block.reason.as_deref(), Some("Message visible to Claude"));
    let context = interpret(
        "PostToolUse",
        &outcome(read("output--posttooluse-additional-context.json")),
    );
    assert!(context.context.is_some(), "{context:?}");
}
