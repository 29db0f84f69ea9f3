//! `kirocrew context preview "message"`: the context a session starting
//! with that message would get, built by the same builder the daemon runs
//! (`src/context`), on this data home, followed by its receipt (per section
//! the chars and cap, and what was left out and why). `--no-memory`,
//! `--no-lessons`, `--no-project` withhold a group; `--window` or `--model`
//! scale the caps. Read-only: nothing is recorded.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

use crate::context::{build_session_context, BuiltContext, ContextGroups, SessionRequest};
use crate::home::DataHome;

/// `kirocrew context preview` options.
#[derive(Debug, Args)]
pub struct PreviewArgs {
    /// The first message of the session (ranks memory; may be empty).
    pub message: String,
    /// The model's context window in tokens (scales every cap).
    #[arg(long)]
    pub window: Option<u64>,
    /// The model id (its known window scales the caps).
    #[arg(long)]
    pub model: Option<String>,
    /// Session key (its transcript supplies the thread history).
    #[arg(long, default_value = "cli:preview")]
    pub session: String,
    /// Withhold the memory group.
    #[arg(long)]
    pub no_memory: bool,
    /// Withhold the lessons group.
    #[arg(long)]
    pub no_lessons: bool,
    /// Withhold the project group.
    #[arg(long)]
    pub no_project: bool,
    /// Print `{context, receipt}` as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `kirocrew context …`
#[derive(Debug, clap::Subcommand)]
pub enum ContextCommand {
    /// Show the context a new session would get, and its receipt.
    Preview(PreviewArgs),
}

/// Runs a context command.
pub(super) fn run(home: DataHome, cmd: ContextCommand) -> anyhow::Result<ExitCode> {
    let ContextCommand::Preview(args) = cmd;
    let loaded = crate::app::builders::load_config(&home)?;
    crate::telemetry::init(false, "warn");
    home.ensure()?;
    let settings = loaded.settings;
    actix_rt::System::new().block_on(async move {
        let local = crate::app::builders::open_local_store(&home, &settings, true).await?;
        let sources =
            crate::app::builders::local_context_sources(&home, &settings, local.store.clone())?;
        let files = sources.files.clone();
        let request = SessionRequest {
            session_key: args.session.clone(),
            message: args.message.clone(),
            model: args.model.clone(),
            model_window: args.window,
            groups: ContextGroups {
                memory: !args.no_memory,
                lessons: !args.no_lessons,
                project: !args.no_project,
            },
            runtime_source: Some("cli".into()),
            ..SessionRequest::default()
        };
        let built = build_session_context(&sources, &request).await;
        let _ = files.close().await;
        local.close().await?;
        let mut out = std::io::stdout().lock();
        print_preview(&built, args.json, &mut out)?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Prints the context and a receipt summary (or both as JSON).
pub(crate) fn print_preview(
    built: &BuiltContext,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(built)?)?;
        return Ok(());
    }
    writeln!(out, "{}", built.context)?;
    let r = &built.receipt;
    writeln!(
        out,
        "\n--- receipt: {} chars (ceiling {}), query {:?}",
        r.total_chars, r.ceiling, r.query_embedding
    )?;
    for s in &r.sections {
        let cap = s.cap.map_or_else(|| "-".to_owned(), |c| c.to_string());
        let shown = s.items.iter().filter(|i| i.included).count();
        let left: Vec<String> = s
            .items
            .iter()
            .filter(|i| !i.included)
            .map(|i| format!("{} ({:?})", i.id, i.dropped))
            .collect();
        write!(out, "{:<24} {:>7} / {:>7}", s.name, s.chars, cap)?;
        if !s.items.is_empty() {
            write!(out, "  {} of {} items", shown, s.items.len())?;
        }
        if !left.is_empty() {
            write!(out, "; left out: {}", left.join(", "))?;
        }
        writeln!(out)?;
    }
    Ok(())
}
