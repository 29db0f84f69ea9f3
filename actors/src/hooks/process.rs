//! Running one script hook: `/bin/sh -c <command>` in its own process
//! group, the event JSON on stdin, `KIROCREW_HOOK_EVENT` and
//! `KIROCREW_HOOK_CONTEXT` in the environment (spec "Script hooks"), a time
//! limit after which the whole group is killed, and bounded output capture.
//!
//! Why a process group: a hook is a shell line, so `sleep 100 | cat` or a
//! backgrounded helper is several processes; killing only the shell would
//! leave the rest running and holding the output pipes open. After the
//! shell exits (or is killed) the group is killed too, so nothing a hook
//! started outlives it, and the shell itself is always waited for, so no
//! zombie is left behind.
//!
//! A process can leave the group (`setsid`, a daemonizing double fork):
//! the group kill misses it (issue 42). So every run also carries a marker
//! in its environment ([`RUN_MARKER`], unique per run), which children
//! inherit whatever group or session they move to; after the group kill,
//! any process still carrying the run's marker is killed by pid. (A
//! process that clears its whole environment, `env -i`, is out of reach
//! without a cgroup; script hooks are installed by the person at the
//! machine, so this guards against accidents, not a hostile script.)
//!
//! The hook runs in a sandbox (`sandbox.rs`, `confine.rs`): a cleared
//! environment, its own network and mount namespaces, a read-only
//! filesystem but for a per-run scratch directory (its cwd and `$TMPDIR`),
//! the data home's secrets hidden, and rlimits; `hooks.sandbox` says
//! whether a missing layer refuses the run. Which layers held is in the
//! outcome's `sandbox` report.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::confine::Confinement;
use super::decision::ScriptOutcome;
use super::sandbox::{SandboxMode, SandboxReport};

/// How long the output readers may run on after the shell is gone (a
/// killed group closes the pipes at once; this only bounds the odd case).
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// The environment variable that names one run (module docs).
const RUN_MARKER: &str = "KIROCREW_HOOK_RUN";

/// Runs of this process so far, for the marker.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// The variables a hook gets from the daemon's own environment (every
/// other one, the daemon's secrets among them, is cleared).
const PASSED_ENV: &[&str] = &["PATH", "HOME", "LANG"];

/// `PATH` when the daemon has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// One script hook invocation.
#[derive(Debug, Clone, Default)]
pub struct ScriptRun {
    /// The shell command line.
    pub command: String,
    /// `KIROCREW_HOOK_EVENT` (the event name).
    pub event: String,
    /// `KIROCREW_HOOK_CONTEXT` (a short JSON summary of the event).
    pub context: String,
    /// The event JSON, written to stdin.
    pub stdin: Vec<u8>,
    /// Time limit.
    pub timeout: Duration,
    /// Bytes kept from each of stdout and stderr.
    pub max_output: usize,
    /// Extra environment (e.g. `TOOL_NAME`, read by hooks written for
    /// other agents).
    pub env: Vec<(String, String)>,
    /// How strictly it is confined (`hooks.sandbox`).
    pub sandbox: SandboxMode,
    /// The data home, whose secret files the hook must not read.
    pub data_home: Option<PathBuf>,
}

/// Runs `run` to completion or its time limit. Never fails: a spawn error
/// is reported in the outcome.
pub async fn run_script(run: ScriptRun) -> ScriptOutcome {
    let started = Instant::now();
    let marker = format!(
        "{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    );
    let mode = run.sandbox;
    let home = run.data_home.clone();
    let cpu_secs = run.timeout.as_secs().saturating_add(1);
    let prepared = tokio::task::spawn_blocking(move || {
        Confinement::prepare_with(
            super::probe::capabilities(),
            mode,
            home.as_deref(),
            cpu_secs,
        )
    })
    .await;
    let confinement = match prepared {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return refused(mode, e.to_string(), started),
        Err(e) => return refused(mode, format!("sandbox setup panicked: {e}"), started),
    };
    let mut command = Command::new("/bin/sh");
    command.env_clear();
    for name in PASSED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    if std::env::var_os("PATH").is_none() {
        command.env("PATH", DEFAULT_PATH);
    }
    if let Some(scratch) = &confinement.scratch {
        command
            .current_dir(scratch.path())
            .env("TMPDIR", scratch.path());
    }
    let steps = confinement.steps.clone();
    if mode != SandboxMode::Off {
        // SAFETY: `apply` makes raw syscalls on data prepared here and
        // neither allocates nor locks (confine.rs).
        unsafe {
            command.pre_exec(move || steps.apply());
        }
    }
    command
        .arg("-c")
        .arg(&run.command)
        .env(RUN_MARKER, &marker)
        .env("KIROCREW_HOOK_EVENT", &run.event)
        .env("KIROCREW_HOOK_CONTEXT", &run.context)
        .envs(run.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            let report = confinement.report.clone();
            confinement.finish().await;
            return ScriptOutcome {
                spawn_error: Some(if mode == SandboxMode::Off {
                    e.to_string()
                } else {
                    format!("{e} (while starting the hook in its sandbox)")
                }),
                duration_ms: elapsed_ms(started),
                sandbox: Some(report),
                ..ScriptOutcome::default()
            };
        }
    };
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    if let Some(mut stdin) = child.stdin.take() {
        let input = run.stdin.clone();
        // A hook that never reads stdin must not stall the write: it runs
        // beside the wait, and a closed pipe is not an error.
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
        });
    }
    let stdout = child
        .stdout
        .take()
        .map(|r| tokio::spawn(capture(r, run.max_output)));
    let stderr = child
        .stderr
        .take()
        .map(|r| tokio::spawn(capture(r, run.max_output)));

    let waited = tokio::time::timeout(run.timeout, child.wait()).await;
    let timed_out = waited.is_err();
    // Kill whatever is left of the group (all of it on a timeout, stray
    // background children otherwise), then reap the shell.
    if let Some(pgid) = pgid {
        kill_group(pgid);
    }
    // Then whatever left the group but still carries the run's marker.
    let _ = tokio::task::spawn_blocking(move || kill_marked(&marker)).await;
    let status = match waited {
        Ok(status) => status.ok(),
        Err(_) => child.wait().await.ok(),
    };
    let (out, out_cut) = collect(stdout).await;
    let (err, err_cut) = collect(stderr).await;
    let report = confinement.report.clone();
    confinement.finish().await;
    ScriptOutcome {
        exit_code: if timed_out {
            None
        } else {
            status.and_then(|s| s.code())
        },
        signal: status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)),
        timed_out,
        stdout: out,
        stderr: err,
        output_truncated: out_cut || err_cut,
        duration_ms: elapsed_ms(started),
        spawn_error: None,
        sandbox: Some(report),
    }
}

/// The outcome of a run the sandbox refused (`required` and a layer
/// missing) or could not prepare.
fn refused(mode: SandboxMode, why: String, started: Instant) -> ScriptOutcome {
    let layers = super::probe::machine_report(mode);
    ScriptOutcome {
        spawn_error: Some(why),
        duration_ms: elapsed_ms(started),
        sandbox: Some(SandboxReport {
            mode,
            missing: layers.missing(),
            layers,
            refused: mode == SandboxMode::Required,
        }),
        ..ScriptOutcome::default()
    }
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Kills every process (other than this one) whose environment carries
/// `RUN_MARKER=marker`; answers how many. Processes of other users, and
/// ones gone meanwhile, cannot be read and are skipped.
fn kill_marked(marker: &str) -> usize {
    let entry_text = format!("{RUN_MARKER}={marker}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let own = std::process::id();
    let mut killed = 0;
    for entry in dir.flatten() {
        let pid = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok());
        let Some(pid) = pid.filter(|p| *p != own) else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        // Entries are NUL-separated; one must be exactly the marker's.
        let carries = environ
            .split(|b| *b == 0)
            .any(|e| e == entry_text.as_bytes());
        if carries {
            if let Ok(pid) = i32::try_from(pid) {
                // SAFETY: kill only sends a signal; a pid gone meanwhile
                // answers ESRCH.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                killed += 1;
            }
        }
    }
    killed
}

fn kill_group(pgid: i32) {
    // SAFETY: killpg only sends a signal; a group that is already gone
    // answers ESRCH, which is fine.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

/// Reads everything, keeping the first `max` bytes: the pipe is drained so
/// a chatty hook never blocks on a full pipe, but memory stays bounded.
async fn capture(mut reader: impl AsyncRead + Unpin, max: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::with_capacity(max.min(8192));
    let mut buf = [0u8; 8192];
    let mut cut = false;
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = max.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                cut |= n > room;
            }
        }
    }
    (kept, cut)
}

async fn collect(task: Option<tokio::task::JoinHandle<(Vec<u8>, bool)>>) -> (String, bool) {
    let Some(task) = task else {
        return (String::new(), false);
    };
    let abort = task.abort_handle();
    match tokio::time::timeout(DRAIN_GRACE, task).await {
        Ok(Ok((bytes, cut))) => (String::from_utf8_lossy(&bytes).into_owned(), cut),
        Ok(Err(_)) => (String::new(), false),
        Err(_) => {
            abort.abort();
            (String::new(), true)
        }
    }
}
