//! The script-hook sandbox for real (issue 41): each test has a hook try
//! something it must not do, and asserts the attempt really failed. Each
//! layer's test first asks which layers this machine has
//! ([`machine_report`]): where a layer cannot hold, the test asserts the
//! run's report says so instead of passing vacuously. Where a control run
//! with `hooks.sandbox = "off"` is cheap, it shows the attempt succeeds
//! unconfined, so the refusal is the sandbox's doing.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kirocrew_actors::hooks::{
    machine_report, run_script, sandbox_limits, SandboxMode, ScriptOutcome, ScriptRun,
};

fn run(command: &str, mode: SandboxMode, home: Option<&Path>) -> ScriptRun {
    ScriptRun {
        command: command.into(),
        event: "PreToolUse".into(),
        context: r#"{"event":"PreToolUse"}"#.into(),
        stdin: br#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#.to_vec(),
        timeout: Duration::from_secs(20),
        max_output: 64 * 1024,
        env: vec![("TOOL_NAME".into(), "Bash".into())],
        sandbox: mode,
        data_home: home.map(Path::to_path_buf),
    }
}

async fn sandboxed(command: &str, home: Option<&Path>) -> ScriptOutcome {
    let outcome = run_script(run(command, SandboxMode::BestEffort, home)).await;
    assert_eq!(outcome.spawn_error, None, "{outcome:?}");
    let report = outcome.sandbox.as_ref().expect("a sandbox report");
    assert_eq!(
        report.layers,
        machine_report(SandboxMode::BestEffort),
        "the run had the layers the machine has"
    );
    outcome
}

async fn unconfined(command: &str, home: Option<&Path>) -> ScriptOutcome {
    let outcome = run_script(run(command, SandboxMode::Off, home)).await;
    assert_eq!(outcome.spawn_error, None, "{outcome:?}");
    outcome
}

#[actix_rt::test]
async fn the_report_names_the_layers_that_held() {
    let layers = machine_report(SandboxMode::BestEffort);
    eprintln!("sandbox layers on this machine: {layers:?}");
    let outcome = sandboxed("exit 0", None).await;
    let report = outcome.sandbox.unwrap();
    assert!(!report.refused);
    assert_eq!(report.missing, layers.missing());
    assert!(report.layers.env && report.layers.cpu && report.layers.memory);
    assert!(report.layers.file_size, "setrlimit always lowers");
    // `off` still clears the environment and says nothing else held.
    let off = unconfined("exit 0", None).await.sandbox.unwrap();
    assert!(off.layers.env && !off.layers.network && !off.layers.filesystem);
}

#[actix_rt::test]
async fn the_daemons_secret_env_does_not_reach_the_hook() {
    std::env::set_var("KIROCREW_LLM_API_KEY", "sk-daemon-secret");
    let outcome = sandboxed("env; echo \"key=$KIROCREW_LLM_API_KEY\"", None).await;
    assert!(
        outcome.stdout.contains("key=\n"),
        "the key leaked: {}",
        outcome.stdout
    );
    assert!(!outcome.stdout.contains("sk-daemon-secret"));
    let names: Vec<&str> = outcome
        .stdout
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .filter(|k| *k != "key")
        .collect();
    let allowed = [
        "PATH",
        "HOME",
        "LANG",
        "TMPDIR",
        "PWD",
        "KIROCREW_HOOK_EVENT",
        "KIROCREW_HOOK_CONTEXT",
        "KIROCREW_HOOK_RUN",
        "TOOL_NAME",
    ];
    for name in &names {
        assert!(allowed.contains(name), "unexpected variable {name}");
    }
    assert!(names.contains(&"KIROCREW_HOOK_EVENT") && names.contains(&"TOOL_NAME"));
    // The same holds unconfined: the environment is always cleared.
    let off = unconfined("echo \"key=$KIROCREW_LLM_API_KEY\"", None).await;
    assert_eq!(off.stdout, "key=\n");
}

#[actix_rt::test]
async fn a_hook_cannot_read_the_api_token() {
    let home = tempfile::tempdir().unwrap();
    let token = home.path().join("api-token");
    std::fs::write(&token, "tok-0123456789abcdef").unwrap();
    std::fs::write(home.path().join("notes.md"), "public").unwrap();
    // Directly, and through the daemon's own view of the filesystem.
    let command = format!(
        "cat {t}; cat /proc/{pid}/root{t}; cat {n}",
        t = token.display(),
        pid = std::process::id(),
        n = home.path().join("notes.md").display()
    );
    let off = unconfined(&command, Some(home.path())).await;
    assert!(off.stdout.contains("tok-0123456789abcdef"), "{off:?}");
    let outcome = sandboxed(&command, Some(home.path())).await;
    let layers = &outcome.sandbox.as_ref().unwrap().layers;
    if layers.secrets_hidden {
        assert!(
            !outcome.stdout.contains("tok-0123456789abcdef"),
            "the token leaked: {outcome:?}"
        );
        assert!(
            outcome.stdout.contains("public"),
            "other files stay readable"
        );
    } else {
        assert!(outcome.sandbox.unwrap().missing.contains(&"secrets_hidden"));
    }
    assert_eq!(
        std::fs::read_to_string(&token).unwrap(),
        "tok-0123456789abcdef",
        "the daemon still reads it"
    );
}

#[actix_rt::test]
async fn a_hook_cannot_reach_the_network() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let command =
        format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected' 2>&1; echo done");
    let off = unconfined(&command, None).await;
    assert!(off.stdout.contains("connected"), "{off:?}");
    let (_accepted, _) = listener.accept().expect("the control run connected");
    let outcome = sandboxed(&command, None).await;
    if outcome.sandbox.as_ref().unwrap().layers.network {
        assert!(!outcome.stdout.contains("connected"), "{outcome:?}");
        assert!(outcome.stdout.contains("done"), "the hook ran: {outcome:?}");
        let err = listener.accept().expect_err("nothing reached the listener");
        assert_eq!(err.kind(), ErrorKind::WouldBlock);
    } else {
        assert!(outcome.sandbox.unwrap().missing.contains(&"network"));
    }
}

#[actix_rt::test]
async fn a_hook_writes_only_in_its_scratch_directory() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside.txt");
    let command = format!(
        "echo x > {o}; echo kept > \"$TMPDIR/inside\" && cat \"$TMPDIR/inside\"; pwd; echo \"tmp=$TMPDIR\"",
        o = outside.display()
    );
    let outcome = sandboxed(&command, None).await;
    if outcome.sandbox.as_ref().unwrap().layers.filesystem {
        assert!(!outside.exists(), "wrote outside its scratch dir");
        assert!(outcome.stdout.contains("kept"), "{outcome:?}");
        let lines: Vec<&str> = outcome.stdout.lines().collect();
        let tmp = lines
            .iter()
            .find_map(|l| l.strip_prefix("tmp="))
            .unwrap_or_default();
        assert!(
            !tmp.is_empty() && lines.contains(&tmp),
            "cwd is $TMPDIR: {lines:?}"
        );
        assert!(
            !Path::new(tmp).exists(),
            "the scratch dir is removed after the run"
        );
    } else {
        assert!(outcome.sandbox.unwrap().missing.contains(&"filesystem"));
    }
    let off = unconfined(&command, None).await;
    assert!(outside.exists(), "the control run wrote it: {off:?}");
}

#[actix_rt::test]
async fn a_hook_cannot_fork_500_processes() {
    let command = "n=0; while [ $n -lt 500 ]; do sleep 5 & n=$((n+1)); done; echo forked $n";
    let outcome = sandboxed(command, None).await;
    let report = outcome.sandbox.clone().unwrap();
    if report.layers.processes {
        assert!(!outcome.stdout.contains("forked 500"), "{outcome:?}");
        assert!(
            outcome.stderr.to_lowercase().contains("fork"),
            "the shell said it could not fork: {outcome:?}"
        );
        assert!(!outcome.timed_out);
    } else {
        assert!(report.missing.contains(&"processes"), "{report:?}");
    }
}

fn python() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    path.is_absolute().then_some(path)
}

#[actix_rt::test]
async fn a_hook_cannot_allocate_4_gb() {
    let command = match python() {
        Some(py) => format!(
            "{} -c 'b = bytearray(4 << 30); print(\"allocated\")'",
            py.display()
        ),
        None => "head -c 4G /dev/zero | tail > /dev/null && echo allocated".into(),
    };
    let outcome = sandboxed(&command, None).await;
    assert!(outcome.sandbox.as_ref().unwrap().layers.memory);
    assert!(!outcome.stdout.contains("allocated"), "{outcome:?}");
    assert!(
        outcome.stderr.contains("MemoryError") || outcome.stderr.contains("memory exhausted"),
        "{outcome:?}"
    );
}

#[actix_rt::test]
async fn the_rlimits_are_in_force() {
    let command = "ulimit -t; ulimit -v; head -c 100000000 /dev/zero > \"$TMPDIR/big\"; echo \"exit=$?\"; wc -c < \"$TMPDIR/big\"";
    let outcome = sandboxed(command, None).await;
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    // CPU: the time limit + 1 s; memory in KiB.
    assert_eq!(lines.first(), Some(&"21"), "{outcome:?}");
    assert_eq!(
        lines.get(1).copied(),
        Some((sandbox_limits::MEMORY_BYTES / 1024).to_string().as_str())
    );
    assert_ne!(lines.get(2), Some(&"exit=0"), "a 100 MB file was written");
    assert_eq!(
        lines.get(3).copied(),
        Some(sandbox_limits::FILE_SIZE_BYTES.to_string().as_str()),
        "{outcome:?}"
    );
}

/// The process-group kill and the run marker still reach a sandboxed
/// hook's children, including one that left the group (`setsid`).
#[actix_rt::test]
async fn a_sandboxed_hooks_children_do_not_outlive_it() {
    let mut r = run(
        "setsid sleep 60 & echo $!; sleep 60",
        SandboxMode::BestEffort,
        None,
    );
    r.timeout = Duration::from_millis(800);
    let outcome = run_script(r).await;
    assert!(outcome.timed_out, "{outcome:?}");
    let pid = outcome.stdout.trim().to_owned();
    assert!(!pid.is_empty(), "{outcome:?}");
    let stat = format!("/proc/{pid}/stat");
    let mut gone = false;
    for _ in 0..100 {
        let state = std::fs::read_to_string(&stat).unwrap_or_default();
        if state.is_empty() || state.contains(") Z ") {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "the setsid child {pid} survived");
}
