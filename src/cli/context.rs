//! `kirocrew context preview "message"`: the context a session starting
//! with that message would get, built by the same builder the daemon runs
//! (`src/context`), on this data home, followed by its receipt (per section
//! the chars and cap, and what was left out and why). `--no-memory`,
//! `--no-lessons`, `--no-project` withhold a group; `--window` or `--model`
//! scale the caps. Read-only: nothing is recorded.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

use crate::context::{
    build_session_context, BuiltContext, ContextGroups, ContextSettings, ContextSources,
    SessionRequest,
};
use crate::home::DataHome;
use kirocrew_actors::channel_history::ChannelHistoryHandle;
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::memory_files::{MemoryFilesConfig, MemoryFilesHandle};
use kirocrew_actors::security_log::SecurityLogHandle;
use kirocrew_actors::sensitive_paths::SafeReader;
use kirocrew_actors::transcripts::{TranscriptsConfig, TranscriptsHandle};
use kirocrew_actors::vector_store::VectorStoreHandle;

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
    let loaded = super::load_config(&home)?;
    crate::telemetry::init(false, "warn");
    home.ensure()?;
    let settings = loaded.settings;
    actix_rt::System::new().block_on(async move {
        let store =
            VectorStoreHandle::open(home.memory_db(), settings.store_settings(), system_clock())
                .await?;
        let store = match super::memory::local_embedder(&home, &settings).await {
            Some(embedder) => store.with_ready_embedder(embedder).await?,
            None => store,
        };
        let sources = local_sources(&home, &settings, store)?;
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
        let _ = sources.store.close().await;
        let mut out = std::io::stdout().lock();
        print_preview(&built, args.json, &mut out)?;
        Ok(ExitCode::SUCCESS)
    })
}

/// The builder's sources for a one-shot command on `home`: the given
/// store, and the other owners started locally (no download, no index
/// rebuild, nothing recorded but security events).
pub(crate) fn local_sources(
    home: &DataHome,
    settings: &crate::config::Settings,
    store: VectorStoreHandle,
) -> anyhow::Result<ContextSources> {
    let files = MemoryFilesHandle::start(MemoryFilesConfig {
        memory_dir: home.memory_dir(),
        index_path: home.memory_index_db(),
        clock: system_clock(),
        rebuild_on_start: false,
    });
    let log = SecurityLogHandle::start(crate::startup::security_log_config(home, settings));
    let policy = home.sensitive_paths();
    let channels = ChannelHistoryHandle::start(crate::startup::channel_history_config(
        home,
        settings,
        log.clone(),
        policy.clone(),
    ))?;
    Ok(ContextSources {
        store,
        files,
        hooks: super::hooks::start_runner(home, settings.hooks.clone()),
        channels,
        transcripts: TranscriptsHandle::start(TranscriptsConfig {
            dir: home.sessions_dir(),
            clock: system_clock(),
        }),
        skills: kirocrew_actors::skills::SkillLedgerHandle::start(crate::skills::skills_config(
            home,
            settings,
            system_clock(),
            Some(log.clone()),
        )),
        reader: SafeReader::new(policy, log, "cli"),
        clock: system_clock(),
        settings: ContextSettings::from_config(settings, home),
        // A one-shot command loads no chat model: long histories truncate.
        compressor: None,
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
