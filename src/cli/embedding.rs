//! `kirocrew embedding status`: the running daemon's embedding model,
//! download and re-embed state (the snapshot behind `GET
//! /api/memory/embedding-status`). The model lives in the daemon, so the
//! CLI asks it ([`crate::daemon_client`]); the console prints the same
//! snapshot with the same [`print_status`].

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use serde_json::Value;

use crate::daemon_client::Daemon;
use crate::home::DataHome;

/// `kirocrew embedding …`
#[derive(Debug, Subcommand)]
pub enum EmbeddingCommand {
    /// Show the model, its load state, the download and re-embed progress.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs an embedding command against the running daemon.
pub(super) fn run(home: DataHome, cmd: EmbeddingCommand) -> anyhow::Result<ExitCode> {
    let EmbeddingCommand::Status { json } = cmd;
    let daemon = Daemon::discover(&home, Duration::from_secs(30))?;
    let status = daemon.get_json("/api/memory/embedding-status")?;
    print_status(&status, json, &mut std::io::stdout().lock())
}

/// Prints an embedding status snapshot: one line per part, or the JSON.
pub(crate) fn print_status(
    status: &Value,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(status)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let text = |name: &str| match status.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".into(),
        Some(other) => other.to_string(),
    };
    writeln!(
        out,
        "model     {} ({} dims) state {}",
        text("model_id"),
        text("model_dim"),
        text("model_state")
    )?;
    writeln!(out, "file      {}", text("model_path"))?;
    writeln!(
        out,
        "download  {} {} / {} bytes (attempt {})",
        text("download_step"),
        text("bytes_downloaded"),
        text("bytes_total"),
        text("download_attempt")
    )?;
    if let Some(reembed) = status.get("reembed") {
        writeln!(out, "re-embed  {reembed}")?;
    }
    if let Some(Value::String(e)) = status.get("error") {
        writeln!(out, "error     {e}")?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_name_model_and_progress() {
        let status = serde_json::json!({
            "model_id": "m", "model_dim": 384, "model_state": "ready",
            "download_step": "idle", "bytes_downloaded": 0, "bytes_total": null,
            "download_attempt": 0, "error": "boom"
        });
        let mut out = Vec::new();
        print_status(&status, false, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("model     m (384 dims) state ready"),
            "{text}"
        );
        assert!(text.contains("error     boom"), "{text}");
    }
}
