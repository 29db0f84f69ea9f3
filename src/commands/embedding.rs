//! `kirocrew embedding status`: the running daemon's embedding model,
//! download and re-embed state and the similarity thresholds in force (the
//! snapshot behind `GET /api/memory/embedding-status`). The model lives in
//! the daemon, so the CLI asks it ([`crate::daemon_client`]); the console
//! prints the same snapshot with the same [`print_status`].
//!
//! `kirocrew embedding calibrate --model PATH`: loads a GGUF here, measures
//! its cosine scale on the bundled probe set and prints the thresholds it
//! would get (what the daemon does at load), without touching the data
//! home.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use clap::Subcommand;
use serde_json::Value;

use crate::daemon_client::Daemon;
use crate::home::DataHome;
use kirocrew_actors::embedder::{EmbedderHandle, LlamaConfig, LlamaCppBackend, SharedBackend};

/// `kirocrew embedding …`
#[derive(Debug, Subcommand)]
pub enum EmbeddingCommand {
    /// Show the model, its load state, the download and re-embed progress.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Measure a model's cosine scale and print its thresholds.
    Calibrate {
        /// The embedding GGUF.
        #[arg(long)]
        model: std::path::PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs an embedding command against the running daemon.
pub(crate) fn run(home: DataHome, cmd: EmbeddingCommand) -> anyhow::Result<ExitCode> {
    let json = match cmd {
        EmbeddingCommand::Status { json } => json,
        EmbeddingCommand::Calibrate { model, json } => return calibrate(&model, json),
    };
    let daemon = Daemon::discover(&home, Duration::from_secs(30))?;
    let status = daemon.get_json("/api/memory/embedding-status")?;
    Ok(print_status(&status, json, &mut std::io::stdout().lock())?)
}

/// Prints an embedding status snapshot: one line per part, or the JSON.
pub(crate) fn print_status(
    status: &Value,
    json: bool,
    out: &mut impl Write,
) -> super::CommandResult {
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
    if let Some(similarity) = status.get("similarity").filter(|s| !s.is_null()) {
        writeln!(out, "{}", similarity_line(similarity))?;
    }
    if let Some(Value::String(e)) = status.get("error") {
        writeln!(out, "error     {e}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One line: the thresholds in force and whether they were calibrated.
pub(crate) fn similarity_line(similarity: &Value) -> String {
    let t = &similarity["thresholds"];
    let num = |v: &Value| v.as_f64().map_or("-".into(), |x| format!("{x:.3}"));
    let origin = match similarity.get("calibration") {
        Some(c) if !c.is_null() => format!(
            "calibrated for {} (unrelated {}, related {}, paraphrase {})",
            c["model_id"].as_str().unwrap_or("-"),
            num(&c["scale"]["unrelated"]),
            num(&c["scale"]["related"]),
            num(&c["scale"]["paraphrase"])
        ),
        _ => "reference values (no calibration yet)".into(),
    };
    format!(
        "similarity gate {} (long {}), near-duplicate {}, lesson duplicate {}, retire {}, screening {} (discussion {}): {origin}",
        num(&t["relevance"]),
        num(&t["relevance_long"]),
        num(&t["near_duplicate"]),
        num(&t["lesson_duplicate"]),
        num(&t["retire"]),
        num(&t["screening"]),
        num(&t["screening_discussion"])
    )
}

/// `embedding calibrate`: the model loaded here, measured, printed.
fn calibrate(model: &std::path::Path, json: bool) -> anyhow::Result<ExitCode> {
    if !model.is_file() {
        anyhow::bail!("--model {} is not a file", model.display());
    }
    let calibration = actix_rt::System::new().block_on(async {
        let embedder = crate::commands::embedding::embedder_for(model).await?;
        let result = embedder.calibrate(None).await;
        let _ = embedder.close().await;
        anyhow::Ok(result?)
    })?;
    let view =
        serde_json::json!({"calibration": calibration, "thresholds": calibration.thresholds()});
    if json {
        println!("{}", serde_json::to_string_pretty(&view)?);
    } else {
        println!("{} pairs embedded", calibration.pairs);
        println!("{}", similarity_line(&view));
    }
    Ok(ExitCode::SUCCESS)
}

/// An embedder for the model at `path` (a calibration, a benchmark): two
/// single-threaded workers (the service's default), loaded and ready.
pub(crate) async fn embedder_for(path: &Path) -> anyhow::Result<EmbedderHandle> {
    let mut config = LlamaConfig::new(path.to_path_buf());
    config.workers = 2;
    let config = Arc::new(config);
    let embedder = EmbedderHandle::start(Arc::new(move || {
        Arc::new(LlamaCppBackend::new((*config).clone())) as SharedBackend
    }));
    if !embedder.wait_ready(Duration::from_secs(600)).await? {
        bail!("the model did not load");
    }
    Ok(embedder)
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
