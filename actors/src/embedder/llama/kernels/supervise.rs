//! The parent's side of a probe: run the caller's probe command for one
//! module with a deadline, and turn what it printed and how it ended into
//! a verdict per weight type.
//!
//! The child prints one line per step on stdout (see `probe.rs`):
//! `features …`, then per type `start <type>` followed by `ok <type>
//! <buffers>`, `wrong <type> <how>` or `skip <type> <why>`, and `done`.
//! `fail <why>` means the module did not load. A type that started but has
//! no result line when the child dies is the one that killed it; a child
//! that dies before any `start` died loading the module, which condemns
//! every type asked for.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::types::ProbeCommand;
use super::verdicts::TypeVerdict;

/// How often the parent looks whether the child ended.
const POLL: Duration = Duration::from_millis(10);
/// Most of the child's stderr kept for error messages.
const STDERR_TAIL: usize = 400;

/// What running a probe established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ProbeRun {
    /// The child ran to a verdict for every type asked for (worth caching).
    Done {
        /// Features the module reported (empty if it never loaded).
        features: Vec<String>,
        /// Verdict per type.
        results: BTreeMap<String, TypeVerdict>,
    },
    /// Nothing was established (no child, a timeout, garbled output):
    /// not cached, the module is not used this time.
    NotRun(String),
}

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// Exit status.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
    /// Killed by the parent after the deadline.
    TimedOut,
}

impl Ending {
    fn of(status: ExitStatus) -> Self {
        match (status.code(), status.signal()) {
            (Some(code), _) => Self::Code(code),
            (None, Some(signal)) => Self::Signal(signal),
            (None, None) => Self::Code(-1),
        }
    }
}

/// Runs `command` for `module` and `types`, killing it after `timeout`.
pub(super) fn run(
    command: &ProbeCommand,
    module: &Path,
    types: &[String],
    timeout: Duration,
) -> ProbeRun {
    let mut cmd = std::process::Command::new(&command.program);
    cmd.args(&command.args)
        .arg("--module")
        .arg(module)
        .arg("--types")
        .arg(types.join(","))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return ProbeRun::NotRun(format!(
                "cannot start the probe {}: {e}",
                command.program.display()
            ))
        }
    };
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let ending = wait(&mut child, timeout);
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    match ending {
        Ok(ending) => interpret(types, &out, ending, &tail(&err), timeout),
        Err(e) => ProbeRun::NotRun(format!("waiting for the probe: {e}")),
    }
}

/// Reads a pipe to its end on a thread of its own (the child could block
/// on a full pipe otherwise).
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// Waits for the child until the deadline, then kills it (it is ours:
/// killed by its handle, never by name).
fn wait(child: &mut Child, timeout: Duration) -> std::io::Result<Ending> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Ending::of(status));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Ending::TimedOut);
        }
        std::thread::sleep(POLL);
    }
}

/// The last non-empty line of the child's stderr, shortened.
fn tail(stderr: &str) -> String {
    let line = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut end = line.len().min(STDERR_TAIL);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].to_owned()
}

/// `SIGILL` for 4 and so on; other numbers as `signal N`.
pub(super) fn signal_name(signal: i32) -> String {
    let name = match signal {
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        31 => "SIGSYS",
        _ => return format!("signal {signal}"),
    };
    name.to_owned()
}

/// Turns the child's output and ending into verdicts (pure).
pub(super) fn interpret(
    types: &[String],
    stdout: &str,
    ending: Ending,
    stderr_tail: &str,
    timeout: Duration,
) -> ProbeRun {
    let mut features = Vec::new();
    let mut results = BTreeMap::new();
    let mut running: Option<String> = None;
    let mut done = false;
    let mut load_failure = None;
    for line in stdout.lines() {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let (ty, detail) = rest.split_once(' ').unwrap_or((rest, ""));
        match word {
            "features" => features = rest.split_whitespace().map(str::to_owned).collect(),
            "start" => running = Some(ty.to_owned()),
            "ok" | "wrong" | "skip" => {
                let verdict = match word {
                    "ok" => TypeVerdict::Ok {
                        buffers: detail
                            .split(',')
                            .filter(|b| !b.is_empty())
                            .map(str::to_owned)
                            .collect(),
                    },
                    "wrong" => TypeVerdict::Wrong {
                        how: detail.to_owned(),
                    },
                    _ => TypeVerdict::Untestable {
                        why: detail.to_owned(),
                    },
                };
                results.insert(ty.to_owned(), verdict);
                running = None;
            }
            "fail" => load_failure = Some(rest.to_owned()),
            "done" => done = true,
            _ => {}
        }
    }
    let died = match ending {
        Ending::TimedOut => {
            let during = running
                .map(|t| format!(" computing {t}"))
                .unwrap_or_default();
            return ProbeRun::NotRun(format!(
                "the probe timed out after {} s{during}",
                timeout.as_secs()
            ));
        }
        Ending::Code(0) if done => None,
        Ending::Code(0) => return ProbeRun::NotRun("the probe ended without a verdict".into()),
        Ending::Code(code) => Some((None, format!("exit status {code}"))),
        Ending::Signal(signal) => Some((Some(signal_name(signal)), signal_name(signal))),
    };
    if let Some(why) = load_failure {
        // Loading failed cleanly: nothing computed, every type condemned.
        for ty in types {
            results
                .entry(ty.clone())
                .or_insert_with(|| TypeVerdict::Crashed {
                    signal: None,
                    how: format!("module did not load: {why}"),
                });
        }
    } else if let Some((signal, how)) = died {
        let detail = if stderr_tail.is_empty() {
            String::new()
        } else {
            format!(": {stderr_tail}")
        };
        match running {
            Some(ty) => {
                results.insert(
                    ty.clone(),
                    TypeVerdict::Crashed {
                        signal,
                        how: format!("{how} computing {ty}{detail}"),
                    },
                );
            }
            None if results.is_empty() => {
                for ty in types {
                    results.insert(
                        ty.clone(),
                        TypeVerdict::Crashed {
                            signal: signal.clone(),
                            how: format!("{how} loading the module{detail}"),
                        },
                    );
                }
            }
            None => {
                return ProbeRun::NotRun(format!(
                    "the probe ended with {how} between tests{detail}"
                ))
            }
        }
    }
    ProbeRun::Done { features, results }
}

#[cfg(test)]
mod tests;
