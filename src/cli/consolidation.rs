//! `kirocrew consolidation status [--json] | run SESSION`: the running
//! daemon's consolidator from the command line (issue 14). The daemon owns
//! the consolidation state (prefs offsets, runs in flight, the model), so
//! these commands do not open the data home's stores: they speak to the
//! daemon through [`crate::daemon_client`] (`GET /api/memory/consolidation`,
//! `POST /api/memory/consolidation/{session}/run`) and fail with its clear
//! "no daemon" message and exit 1 when none runs.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use serde_json::{json, Value};

use crate::daemon_client::Daemon;
use crate::home::DataHome;

/// How long one request to the daemon may take.
const DAEMON_TIMEOUT: Duration = Duration::from_secs(30);

/// `kirocrew consolidation …`
#[derive(Debug, Subcommand)]
pub enum ConsolidationCommand {
    /// Each session's consolidation state, and the model's (with the
    /// default model's download progress).
    Status {
        /// Print the daemon's JSON.
        #[arg(long)]
        json: bool,
    },
    /// Consolidate SESSION now (both paths); returns once the runs started
    /// (see `status` for their outcome).
    Run {
        /// The session key.
        session: String,
    },
}

/// Runs a consolidation command against the daemon of `home`.
pub(super) fn run(home: DataHome, cmd: ConsolidationCommand) -> anyhow::Result<ExitCode> {
    let daemon = Daemon::discover(&home, DAEMON_TIMEOUT)?;
    match cmd {
        ConsolidationCommand::Status { json } => {
            let status = daemon.get_json("/api/memory/consolidation")?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                print!("{}", render_status(&status));
            }
        }
        ConsolidationCommand::Run { session } => {
            let path = format!("/api/memory/consolidation/{}/run", path_segment(&session));
            let answer = daemon.post_json(&path, &json!({}))?;
            println!("{}", render_started(&session, &answer));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `key` as one URL path segment: unreserved characters kept, every other
/// byte percent-encoded (pure).
fn path_segment(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The run's answer in one line (pure).
fn render_started(session: &str, answer: &Value) -> String {
    let started: Vec<&str> = answer["started"]
        .as_array()
        .map(|paths| paths.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if started.is_empty() {
        format!("{session}: both paths are already running")
    } else {
        format!("{session}: started {}", started.join(" and "))
    }
}

fn mib(bytes: &Value) -> Option<String> {
    bytes
        .as_u64()
        .map(|b| format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)))
}

/// The status for people (pure): the model line, then one line per
/// session.
fn render_status(status: &Value) -> String {
    let model = &status["model"];
    let text = |v: &Value| v.as_str().unwrap_or("?").to_owned();
    let mut out = format!(
        "model: {} {} ({})\n",
        text(&model["backend"]),
        text(&model["model"]),
        text(&model["state"])
    );
    let download = &model["download"];
    if download.is_object() {
        let got = mib(&download["bytes_downloaded"]).unwrap_or_default();
        let size = mib(&download["bytes_total"]).map_or(String::new(), |t| format!(" of {t}"));
        let _ = writeln!(
            out,
            "download: {}, attempt {}/{}, {got}{size}",
            text(&download["step"]),
            download["attempt"],
            download["max_attempts"]
        );
    }
    if let Some(error) = model["error"].as_str() {
        let _ = writeln!(out, "model error: {error}");
    }
    if status["enabled"] == false {
        out.push_str("consolidation is disabled (consolidation.enabled = false)\n");
    }
    let sessions = status["sessions"].as_array().map_or(&[][..], Vec::as_slice);
    if sessions.is_empty() {
        out.push_str("no sessions\n");
    }
    for s in sessions {
        let running: Vec<&str> = s["running"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}: {} unconsolidated, {} since the prefs run, idle {}s, last run {}{}",
            text(&s["session"]),
            s["unconsolidated"],
            s["messages_since"],
            s["idle_secs"],
            s["last_run"].as_str().unwrap_or("never"),
            if running.is_empty() {
                String::new()
            } else {
                format!(", running {}", running.join(" and "))
            }
        );
        if let Some(error) = s["last_error"].as_str() {
            let _ = writeln!(out, "  last error: {error}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_keys_become_one_path_segment() {
        assert_eq!(path_segment("web:1"), "web%3A1");
        assert_eq!(path_segment("a/b c"), "a%2Fb%20c");
        assert_eq!(path_segment("slack-C01.x_y~"), "slack-C01.x_y~");
        assert_eq!(path_segment("é"), "%C3%A9");
    }

    #[test]
    fn the_status_reads_for_people() {
        let status = json!({
            "enabled": true,
            "model": {"backend": "llama_cpp", "model": "consolidation-chat.gguf",
                      "state": "downloading", "error": null,
                      "download": {"step": "downloading", "attempt": 1, "max_attempts": 6,
                                   "bytes_downloaded": 16_777_216, "bytes_total": 98_362_432u64}},
            "sessions": [{"session": "web:1", "unconsolidated": 4, "messages_since": 4,
                          "idle_secs": 12, "last_run": null,
                          "last_error": "chat model not ready: loading", "running": ["history"]}]
        });
        let text = render_status(&status);
        assert!(
            text.starts_with("model: llama_cpp consolidation-chat.gguf (downloading)\n"),
            "{text}"
        );
        assert!(
            text.contains("download: downloading, attempt 1/6, 16.0 MiB of 93.8 MiB"),
            "{text}"
        );
        assert!(
            text.contains("web:1: 4 unconsolidated, 4 since the prefs run, idle 12s, last run never, running history"),
            "{text}"
        );
        assert!(
            text.contains("  last error: chat model not ready: loading"),
            "{text}"
        );
        let empty = render_status(&json!({"enabled": false, "model": {}, "sessions": []}));
        assert!(
            empty.contains("disabled") && empty.contains("no sessions"),
            "{empty}"
        );
    }

    #[test]
    fn the_run_answer_names_the_paths() {
        let answer = json!({"session": "s", "started": ["prefs", "history"]});
        assert_eq!(render_started("s", &answer), "s: started prefs and history");
        assert_eq!(
            render_started("s", &json!({"started": []})),
            "s: both paths are already running"
        );
    }
}
