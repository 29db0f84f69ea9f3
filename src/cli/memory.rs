//! `kirocrew memory …`: the one-shot memory commands.
//!
//! Each opens memory.db through the same `VectorStore` actor the daemon uses
//! (same validation, screening, ladder and audit), so the CLI and the daemon
//! can never disagree about the rules. SQLite WAL plus `BEGIN IMMEDIATE`
//! writes let both run on one file at once.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Subcommand;

use super::memory_commands as commands;
use crate::config::Settings;
use crate::embedding::{choose_model, MODEL_PATH_ENV};
use crate::home::DataHome;
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::download::ModelSource;
use kirocrew_actors::embedder::{EmbedderHandle, LlamaConfig, LlamaCppBackend, SharedBackend};
use kirocrew_actors::vector_store::episodic::SearchMode;
use kirocrew_actors::vector_store::{VectorStoreHandle, USER_EXPLICIT};

/// How long a one-shot command waits for the model to load.
const MODEL_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

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
pub(super) fn run(home: DataHome, cmd: MemoryCommand) -> anyhow::Result<ExitCode> {
    let loaded = super::load_config(&home)?;
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
        let store =
            VectorStoreHandle::open(home.memory_db(), settings.store_settings(), system_clock())
                .await
                .with_context(|| format!("opening {}", home.memory_db().display()))?;
        // Search and set rank and store like the daemon when the model file
        // is present; the CLI never downloads it.
        let wants_model = matches!(
            cmd,
            MemoryCommand::Search { .. }
                | MemoryCommand::Set { .. }
                | MemoryCommand::Migrate { .. }
        );
        let embedder = if wants_model {
            local_embedder(&home, &settings).await
        } else {
            None
        };
        let store = match &embedder {
            Some(embedder) => store.with_embedder(embedder.clone()),
            None => store,
        };
        // A write this command makes and the screen blocks is a security
        // event, as in the daemon.
        let log = super::security::start_log(&home, &settings);
        store.attach_security_log(log.clone()).await?;
        let result = match cmd {
            MemoryCommand::Migrate { json } => {
                super::memory_files::migrate(&home, &store, json).await
            }
            cmd => {
                let mut out = std::io::stdout().lock();
                execute(&store, cmd, settings.memory.semantic_context_cap, &mut out).await
            }
        };
        if let Some(embedder) = embedder {
            let _ = embedder.close().await;
        }
        store.close().await.context("closing memory.db")?;
        log.flush().await.context("writing the security log")?;
        result
    })
}

/// The configured embedding model, loaded, if its file exists.
pub(crate) async fn local_embedder(home: &DataHome, settings: &Settings) -> Option<EmbedderHandle> {
    let source = ModelSource::from_env(
        &settings.memory.embed_model_url,
        &settings.memory.embed_model_sha256,
    );
    let default = home.root().join("models").join(&source.file_name);
    let env_path = std::env::var(MODEL_PATH_ENV).ok();
    let choice = choose_model(
        env_path.as_deref(),
        &settings.memory.embed_model_path,
        &default,
    );
    if !choice.path.is_file() {
        return None;
    }
    let mut config = LlamaConfig::new(choice.path);
    config.n_threads = settings.memory.embed_threads as i32;
    config.workers = 1;
    config.profile = settings.memory.embed_model_profile.clone();
    let config = Arc::new(config);
    let embedder = EmbedderHandle::start(Arc::new(move || {
        Arc::new(LlamaCppBackend::new((*config).clone())) as SharedBackend
    }));
    match embedder.wait_ready(MODEL_WAIT).await {
        Ok(true) => Some(embedder),
        _ => {
            eprintln!("note: the embedding model did not load; keyword search only");
            None
        }
    }
}

/// Runs one command against an open store, writing its output to `out`
/// (standard output for the CLI; the operator console passes its own).
/// `Migrate` needs the data home and is run by [`run`].
pub(crate) async fn execute(
    store: &VectorStoreHandle,
    cmd: MemoryCommand,
    default_cap: usize,
    out: &mut impl Write,
) -> anyhow::Result<ExitCode> {
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
        MemoryCommand::Import { file } => commands::import(store, &file, out).await,
        MemoryCommand::Set {
            key,
            value,
            confidence,
            source,
        } => commands::set(store, key, value, confidence, source, out).await,
        MemoryCommand::Delete { key } => commands::delete(store, &key, out).await,
        MemoryCommand::Migrate { .. } => anyhow::bail!("migrate is run by `run`"),
    }
}
