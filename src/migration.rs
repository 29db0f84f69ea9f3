//! Running the Markdown migration in the service (spec: "Migration
//! (`migrate_from_markdown`)" → "Automatic migration").
//!
//! [`MigrationService`] wraps `kirocrew_actors::migration` with what only
//! the service knows: the data home, `memory.migrated` in config.json, the
//! audit event's source, and a status snapshot the dashboard can poll.
//!
//! - At daemon start ([`MigrationService::boot`], a background task that
//!   never delays readiness): when `memory.migrated` is false, migrate, then
//!   set it to true — also on a fresh install with nothing to migrate — and
//!   record a `migration` audit event (source `auto`) with the counts. On
//!   error: log, leave the flag false, and the next boot retries (the
//!   migration is idempotent). Then, once the embedding model is ready, a
//!   re-embed sweep gives the migrated rows their vectors.
//! - By hand: `POST /api/memory/migrate` (returns at once; poll
//!   `GET /api/memory/migrate`) and `kirocrew memory migrate` (waits).
//!
//! One migration runs at a time; a second request gets 409.
//!
//! `memory.migrated` lives here while the daemon runs: the service starts
//! from the configured value and flips it the moment a migration has
//! written config.json, so the boot task, `GET /api/memory/migrate` and
//! `GET /api/memory/settings` see the new value without a restart (the
//! `Settings` snapshot in the app state is the configuration as booted).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;

use crate::home::DataHome;
use kirocrew_actors::clock::format_ts;
use kirocrew_actors::migration::{
    legacy_content_present, record_migration_event, run_migration, LegacySources, MigrationReport,
};
use kirocrew_actors::vector_store::{run_backfill, VectorStoreError, VectorStoreHandle};

/// How long the boot task waits for the model before sweeping.
const MODEL_WAIT: Duration = Duration::from_secs(600);

/// Progress and outcome of the latest migration.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MigrationStatus {
    /// `idle`, `running`, `done` or `failed`.
    pub step: &'static str,
    /// Who started it: `auto`, `api` or `cli`.
    pub source: Option<String>,
    /// When it started (RFC 3339, UTC).
    pub started_at: Option<String>,
    /// When it ended.
    pub finished_at: Option<String>,
    /// The counts, once done.
    pub report: Option<MigrationReport>,
    /// Why it failed.
    pub error: Option<String>,
}

/// A migration is already running.
#[derive(Debug, thiserror::Error)]
#[error("a migration is already running (started {started_at})")]
pub struct MigrationBusy {
    /// When the running one started.
    pub started_at: String,
}

/// The migration as the service runs it.
#[derive(Clone)]
pub struct MigrationService {
    home: DataHome,
    store: VectorStoreHandle,
    // A status snapshot only; the store and files have their own owners.
    status: Arc<Mutex<MigrationStatus>>,
    /// The live `memory.migrated`.
    migrated: Arc<AtomicBool>,
}

impl MigrationService {
    /// A service writing into `store` (attach the embedder first so
    /// migrated rows are embedded when the model is ready); `migrated` is
    /// the configured `memory.migrated`.
    pub fn new(home: DataHome, store: VectorStoreHandle, migrated: bool) -> Self {
        Self {
            home,
            store,
            status: Arc::new(Mutex::new(MigrationStatus {
                step: "idle",
                ..MigrationStatus::default()
            })),
            migrated: Arc::new(AtomicBool::new(migrated)),
        }
    }

    /// The live `memory.migrated`: true once a migration finished (now or
    /// in an earlier run).
    pub fn migrated(&self) -> bool {
        self.migrated.load(Ordering::Acquire)
    }

    /// The live flag itself, for components that must follow it while the
    /// daemon runs (the consolidator replaces preferences.md/projects.md
    /// only while it is false).
    pub fn migrated_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.migrated)
    }

    /// The legacy files of this home.
    pub fn sources(&self) -> LegacySources {
        LegacySources {
            memory_dir: self.home.memory_dir(),
            lessons_file: self.home.lessons_file(),
        }
    }

    /// Whether legacy Markdown or lessons.jsonl content exists.
    pub fn legacy_present(&self) -> bool {
        legacy_content_present(&self.sources())
    }

    /// The latest status.
    pub fn status(&self) -> MigrationStatus {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn update(&self, f: impl FnOnce(&mut MigrationStatus)) {
        f(&mut self.status.lock().unwrap_or_else(PoisonError::into_inner));
    }

    fn claim(&self, source: &str) -> Result<(), MigrationBusy> {
        let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        if status.step == "running" {
            return Err(MigrationBusy {
                started_at: status.started_at.clone().unwrap_or_default(),
            });
        }
        *status = MigrationStatus {
            step: "running",
            source: Some(source.to_owned()),
            started_at: Some(format_ts(chrono::Utc::now())),
            ..MigrationStatus::default()
        };
        Ok(())
    }

    /// Runs a migration to the end: migrate, set `memory.migrated`, record
    /// the audit event. Fails with [`MigrationBusy`] if one is running.
    pub async fn run(&self, source: &str) -> anyhow::Result<MigrationReport> {
        self.claim(source)?;
        self.run_claimed(source).await
    }

    async fn run_claimed(&self, source: &str) -> anyhow::Result<MigrationReport> {
        let outcome = self.migrate(source).await;
        let finished = Some(format_ts(chrono::Utc::now()));
        self.update(|s| {
            s.finished_at = finished;
            match &outcome {
                Ok(report) => {
                    s.step = "done";
                    s.report = Some(report.clone());
                }
                Err(e) => {
                    s.step = "failed";
                    s.error = Some(format!("{e:#}"));
                }
            }
        });
        outcome
    }

    async fn migrate(&self, source: &str) -> anyhow::Result<MigrationReport> {
        let report = run_migration(&self.store, &self.sources())
            .await
            .context("migrating legacy memory")?;
        crate::config::set_value(self.home.root(), "memory.migrated", "true")
            .context("setting memory.migrated")?;
        self.migrated.store(true, Ordering::Release);
        record_migration_event(&self.store, &report, source)
            .await
            .context("recording the migration event")?;
        tracing::info!(
            source,
            migrated = report.total_migrated(),
            preferences = report.preferences.migrated,
            projects = report.projects.migrated,
            history = report.history.migrated,
            lessons = report.lessons.migrated,
            "legacy memory migrated"
        );
        Ok(report)
    }

    /// Starts a migration in the background and returns its status at once.
    pub fn start(&self, source: &str) -> Result<MigrationStatus, MigrationBusy> {
        self.claim(source)?;
        let this = self.clone();
        let source = source.to_owned();
        actix_rt::spawn(async move {
            if let Err(e) = this.run_claimed(&source).await {
                tracing::error!(error = format!("{e:#}"), "migration failed");
            }
        });
        Ok(self.status())
    }

    /// The daemon's boot task: migrate when `memory.migrated` is false
    /// (errors are logged; the flag stays false so the next boot retries),
    /// then sweep NULL vectors once the model is ready.
    pub async fn boot(self) {
        if self.migrated() {
            return;
        }
        match self.run("auto").await {
            Ok(report) if report.total_migrated() > 0 => self.sweep().await,
            Ok(_) => {}
            Err(e) => tracing::error!(
                error = format!("{e:#}"),
                "automatic migration failed; it is retried at the next start"
            ),
        }
    }

    /// Embeds rows written before the model was ready. Waits for another
    /// sweep to finish rather than skipping, since it may have listed its
    /// rows before the migration wrote ours.
    async fn sweep(&self) {
        let Some(embedder) = self.store.embedder().cloned() else {
            return;
        };
        if !matches!(embedder.wait_ready(MODEL_WAIT).await, Ok(true)) {
            return;
        }
        for _ in 0..60 {
            match run_backfill(&self.store, false).await {
                Err(VectorStoreError::ReembedBusy(_)) => {
                    actix_rt::time::sleep(Duration::from_secs(5)).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "re-embed sweep after migration failed");
                    return;
                }
                Ok(done) => {
                    tracing::info!(done, "migrated rows embedded");
                    return;
                }
            }
        }
    }
}
