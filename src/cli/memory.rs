//! `kirocrew memory …`: the one-shot memory commands.
//!
//! Each opens memory.db through the same `VectorStore` actor the daemon uses
//! (same validation, screening, ladder and audit), so the CLI and the daemon
//! can never disagree about the rules. SQLite WAL plus `BEGIN IMMEDIATE`
//! writes let both run on one file at once.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use serde_json::Value;

use crate::config::Settings;
use crate::embedding::{choose_model, MODEL_PATH_ENV};
use crate::home::DataHome;
use kirocrew_actors::download::ModelSource;
use kirocrew_actors::embedder::{EmbedderHandle, LlamaConfig, LlamaCppBackend, SharedBackend};
use std::sync::Arc;

/// How long a one-shot command waits for the model to load.
const MODEL_WAIT: std::time::Duration = std::time::Duration::from_secs(120);
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::vector_store::episodic::{EpisodicQuery, SearchMode};
use kirocrew_actors::vector_store::{
    SemanticEntry, SemanticWrite, VectorStoreHandle, USER_EXPLICIT,
};

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
pub fn run(home: DataHome, cmd: MemoryCommand) -> anyhow::Result<ExitCode> {
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
        let result = match cmd {
            MemoryCommand::Migrate { json } => {
                super::memory_files::migrate(&home, &store, json).await
            }
            cmd => execute(&store, cmd, settings.memory.semantic_context_cap).await,
        };
        if let Some(embedder) = embedder {
            let _ = embedder.close().await;
        }
        store.close().await.context("closing memory.db")?;
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

async fn execute(
    store: &VectorStoreHandle,
    cmd: MemoryCommand,
    default_cap: usize,
) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match cmd {
        MemoryCommand::List {
            prefix,
            limit,
            json,
        } => {
            let entries = store.list_semantic(prefix, limit).await?;
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&entries)?)?;
            } else {
                print_entries(&mut out, entries.iter().map(|e| (e, None)))?;
            }
        }
        MemoryCommand::Search {
            query,
            episodic: true,
            mode,
            limit,
            json,
            context,
            files: _,
        } => {
            if let Some(cap) = context {
                writeln!(out, "{}", store.episodic_context(&query, cap).await?)?;
            } else {
                let mut q = EpisodicQuery::new(query, limit);
                q.mode = mode.into();
                let hits = store.search_episodic(q).await?;
                if json {
                    writeln!(out, "{}", serde_json::to_string_pretty(&hits)?)?;
                } else {
                    for h in hits {
                        let cosine = h.cosine.map_or("-".to_owned(), |c| format!("{c:.3}"));
                        writeln!(
                            out,
                            "#{:<6} score {:.3}  cosine {cosine}  decay {:.3}  {}  {}",
                            h.entry.id,
                            h.score,
                            h.decay,
                            h.entry.created_at.get(..10).unwrap_or(&h.entry.created_at),
                            h.entry.text.replace('\n', " ")
                        )?;
                    }
                }
            }
        }
        MemoryCommand::Search {
            query,
            limit,
            json,
            context,
            ..
        } => {
            if let Some(cap) = context {
                let block = store.semantic_context(&query, cap.min(default_cap)).await?;
                writeln!(out, "{block}")?;
            } else {
                let found = store.search_semantic(&query, limit).await?;
                if json {
                    writeln!(out, "{}", serde_json::to_string_pretty(&found)?)?;
                } else {
                    print_entries(&mut out, found.iter().map(|s| (&s.entry, Some(s.score))))?;
                }
            }
        }
        MemoryCommand::Stats => {
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&store.stats().await?)?
            )?;
        }
        MemoryCommand::Audit { limit, json } => {
            let events = store.list_events(limit).await?;
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&events)?)?;
            } else {
                for e in events {
                    writeln!(
                        out,
                        "{}  {:<17} {:<9} {:<32} {} -> {}  ({})",
                        e.ts,
                        e.event_type,
                        e.memory_type,
                        e.key,
                        e.old_value.as_deref().unwrap_or("-"),
                        e.new_value.as_deref().unwrap_or("-"),
                        e.source
                    )?;
                }
            }
        }
        MemoryCommand::Export { output } => {
            let doc = serde_json::to_string_pretty(&store.export().await?)?;
            match output {
                Some(path) => {
                    write_file_atomically(&path, doc.as_bytes())?;
                    eprintln!("exported to {}", path.display());
                }
                None => writeln!(out, "{doc}")?,
            }
        }
        MemoryCommand::Import { file } => {
            let text = read_input(&file)?;
            let doc: Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not valid JSON", file.display()))?;
            let report = store.import(doc).await?;
            writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
            if report.rejected > 0 {
                eprintln!("{} entries were rejected (see details)", report.rejected);
                return Ok(ExitCode::FAILURE);
            }
        }
        MemoryCommand::Set {
            key,
            value,
            confidence,
            source,
        } => {
            let value = serde_json::from_str(&value).unwrap_or(Value::String(value));
            let confidence = match confidence {
                Some(c) => c,
                None if source == USER_EXPLICIT => 1.0,
                None => anyhow::bail!("--confidence is required for source {source:?}"),
            };
            let (outcome, entry) = store
                .write_semantic(SemanticWrite {
                    key,
                    value,
                    confidence,
                    source,
                })
                .await?;
            writeln!(out, "{}: {}", serde_json::to_value(outcome)?, entry.key)?;
        }
        MemoryCommand::Delete { key } => {
            store.delete_semantic(&key, "cli").await?;
            writeln!(out, "deleted: {key}")?;
        }
        // `run` handles it: it needs the data home.
        MemoryCommand::Migrate { .. } => anyhow::bail!("migrate is run by `run`"),
    }
    Ok(ExitCode::SUCCESS)
}

fn print_entries<'a>(
    out: &mut impl Write,
    entries: impl Iterator<Item = (&'a SemanticEntry, Option<f64>)>,
) -> std::io::Result<()> {
    let mut any = false;
    for (entry, score) in entries {
        any = true;
        let score = score.map(|s| format!(" score={s:.3}")).unwrap_or_default();
        writeln!(
            out,
            "{}: {}  [{} {:.2} {}{}]",
            entry.key, entry.value, entry.source, entry.confidence, entry.updated_at, score
        )?;
    }
    if !any {
        writeln!(out, "(no entries)")?;
    }
    Ok(())
}

fn read_input(path: &PathBuf) -> anyhow::Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
    }
}

fn write_file_atomically(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
