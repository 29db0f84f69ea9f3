//! `kirocrew memory …`: the one-shot memory commands.
//!
//! Each opens memory.db through the same `VectorStore` actor the daemon uses
//! (same validation, screening, ladder and audit), so the CLI and the daemon
//! can never disagree about the rules. SQLite WAL plus `BEGIN IMMEDIATE`
//! writes let both run on one file at once.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;

use super::memory_commands as commands;
use crate::home::DataHome;
use kirocrew_actors::sensitive_paths::SafeReader;
use kirocrew_actors::vector_store::episodic::SearchMode;
use kirocrew_actors::vector_store::{VectorStoreHandle, USER_EXPLICIT};

/// `kirocrew memory …`
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// List semantic entries, newest first.
    List {
        /// Only keys starting with this prefix (e.g. pref.).
        #[arg(long)]
        prefix: Option<String>,
        /// At most N entries.
        #[arg(long, default_value_t = 100)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search semantic entries (hybrid when the model file is present,
    /// else keyword), episodic memories with --episodic, or the Markdown
    /// memory files' full-text index with --files.
    Search {
        /// Free-text query.
        query: String,
        /// Search episodic memories (ranked with score parts) instead.
        #[arg(long)]
        episodic: bool,
        /// Episodic ranking: hybrid (default), vector or keyword.
        #[arg(long, value_enum, default_value = "hybrid", requires = "episodic")]
        mode: EpisodicModeArg,
        /// At most N results.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Print the [Semantic Memory] context block instead, within N chars.
        #[arg(long, value_name = "CHARS")]
        context: Option<usize>,
        /// Search preferences.md, projects.md and history/ instead.
        #[arg(long, conflicts_with_all = ["episodic", "context"])]
        files: bool,
    },
    /// Migrate the legacy Markdown memory and lessons.jsonl (idempotent).
    Migrate {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show counts and sizes.
    Stats,
    /// Show the audit trail, newest first.
    Audit {
        /// At most N events.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write every active entry as one JSON document.
    Export {
        /// Output file (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Restore an export document (never overwrites existing keys).
    Import {
        /// The export file, or - for standard input.
        file: PathBuf,
    },
    /// Write one entry (same rules as PUT /api/memory/semantic).
    Set {
        /// The key, e.g. pref.editor.
        key: String,
        /// The value: JSON if it parses as JSON, else a string.
        #[arg(allow_hyphen_values = true)]
        value: String,
        /// Confidence in [0, 1] (default 1.0 for user_explicit).
        #[arg(long)]
        confidence: Option<f64>,
        /// Source label.
        #[arg(long, default_value = USER_EXPLICIT)]
        source: String,
    },
    /// Delete (tombstone) one entry.
    Delete {
        /// The key.
        key: String,
    },
    /// Writes the screen held for review: list, release or drop them.
    Quarantine {
        /// What to do.
        #[command(subcommand)]
        action: super::quarantine::QuarantineCommand,
    },
}

/// `--mode` of `memory search --episodic`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum EpisodicModeArg {
    /// Fused BM25 + cosine with episode context (the default search).
    Hybrid,
    /// The reference: cosine × importance × decay.
    Vector,
    /// BM25 only.
    Keyword,
}

impl From<EpisodicModeArg> for SearchMode {
    fn from(mode: EpisodicModeArg) -> Self {
        match mode {
            EpisodicModeArg::Hybrid => SearchMode::Hybrid,
            EpisodicModeArg::Vector => SearchMode::Vector,
            EpisodicModeArg::Keyword => SearchMode::Keyword,
        }
    }
}

/// Runs a memory command on its own actix system.
pub(crate) fn run(home: DataHome, cmd: MemoryCommand) -> anyhow::Result<ExitCode> {
    let loaded = crate::app::builders::load_config(&home)?;
    crate::telemetry::init(false, "warn");
    home.ensure()?;
    let settings = loaded.settings;
    if let MemoryCommand::Search {
        query,
        limit,
        json,
        files: true,
        ..
    } = &cmd
    {
        let limit = u32::try_from(*limit).unwrap_or(u32::MAX);
        return super::memory_files::search(&home, query, limit, *json);
    }
    actix_rt::System::new().block_on(async move {
        // Search and set rank and store like the daemon when the model file
        // is present; the CLI never downloads it.
        let wants_model = matches!(
            cmd,
            MemoryCommand::Search { .. }
                | MemoryCommand::Set { .. }
                | MemoryCommand::Migrate { .. }
        );
        let local = crate::app::builders::open_local_store(&home, &settings, wants_model)
            .await
            .with_context(|| format!("opening {}", home.memory_db().display()))?;
        let store = local.store.clone();
        // A write this command makes and the screen blocks is a security
        // event, as in the daemon.
        let log = crate::app::builders::start_security_log(&home, &settings);
        store.attach_security_log(log.clone()).await?;
        let result = match cmd {
            MemoryCommand::Migrate { json } => {
                super::memory_files::migrate(&home, &store, json).await
            }
            cmd => {
                // A held skill is released through the skills actor.
                let skills = match cmd {
                    MemoryCommand::Quarantine { .. } => Some(
                        crate::skills_wiring::start_skills(
                            &home,
                            &settings,
                            kirocrew_actors::clock::system_clock(),
                            Some(log.clone()),
                            &store,
                        )
                        .await?,
                    ),
                    _ => None,
                };
                let mut out = std::io::stdout().lock();
                let reader = SafeReader::new(home.sensitive_paths(), log.clone(), "cli");
                let cap = settings.memory.semantic_context_cap;
                let result = execute(&store, &reader, cmd, cap, &mut out)
                    .await
                    .map_err(anyhow::Error::from);
                if let Some(skills) = skills {
                    let _ = skills.close().await;
                }
                result
            }
        };
        local.close().await?;
        log.flush().await.context("writing the security log")?;
        result
    })
}

/// Runs one command against an open store, writing its output to `out`
/// (standard output for the CLI; the operator console passes its own).
/// `Migrate` needs the data home and is run by [`run`].
pub(crate) async fn execute(
    store: &VectorStoreHandle,
    reader: &SafeReader,
    cmd: MemoryCommand,
    default_cap: usize,
    out: &mut impl Write,
) -> super::CommandResult {
    match cmd {
        MemoryCommand::List {
            prefix,
            limit,
            json,
        } => commands::list(store, prefix, limit, json, out).await,
        MemoryCommand::Search {
            query,
            episodic: true,
            mode,
            limit,
            json,
            context,
            files: _,
        } => commands::search_episodic(store, &query, mode.into(), limit, json, context, out).await,
        MemoryCommand::Search {
            query,
            limit,
            json,
            context,
            ..
        } => {
            let context = context.map(|cap| cap.min(default_cap));
            commands::search_semantic(store, &query, limit, json, context, out).await
        }
        MemoryCommand::Stats => commands::stats(store, out).await,
        MemoryCommand::Audit { limit, json } => commands::audit(store, limit, json, out).await,
        MemoryCommand::Export { output } => commands::export(store, output.as_deref(), out).await,
        MemoryCommand::Import { file } => commands::import(store, reader, &file, out).await,
        MemoryCommand::Set {
            key,
            value,
            confidence,
            source,
        } => commands::set(store, key, value, confidence, source, out).await,
        MemoryCommand::Delete { key } => commands::delete(store, &key, out).await,
        MemoryCommand::Quarantine { action } => {
            super::quarantine::execute(store, action, out).await
        }
        MemoryCommand::Migrate { .. } => Err(super::CommandError::Usage(
            "memory migrate runs from the command line only".into(),
        )),
    }
}
