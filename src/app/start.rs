//! Starting and stopping the daemon's actors: the one place an
//! [`AppState`] is built, so the daemon (`kirocrew serve`), the benchmarks'
//! daemon and the integration tests' `spawn_app` run on the same actors
//! wired the same way. [`crate::startup`] puts the HTTP server in front of
//! it; one-shot commands that need memory.db alone open it with
//! [`super::builders::open_local_store`], which opens it as this does.
//!
//! A new capability that owns state plugs in here: a handle in
//! [`AppState`], started in [`AppState::start`], stopped in
//! [`AppState::close`], its background task (if any) in [`Background`].

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use super::auth_failures::{self, AuthFailures};
use super::builders::{channel_history_config, open_store, rules_loader, security_log_config};
use super::console_hub::ConsoleHub;
use super::AppState;
use crate::config::Settings;
use crate::consolidator_wiring::{self, ChatModel, ConsolidatorParts};
use crate::embedder_wiring::EmbeddingRuntime;
use crate::home::DataHome;
use crate::memory_layers::MemoryLayers;
use kirocrew_actors::channel_history::ChannelHistoryHandle;
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::hooks::{HookRunnerConfig, HookRunnerHandle};
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::security_log::SecurityLogHandle;
use kirocrew_actors::sensitive_paths::SafeReader;
use kirocrew_actors::transcripts::{TranscriptsConfig, TranscriptsHandle};
use kirocrew_actors::vector_store::{VectorStoreError, VectorStoreHandle};

/// How often the daemon looks for rows still without a vector.
const CATCH_UP_EVERY: Duration = Duration::from_secs(5);
/// How often expired quarantine items are swept.
const QUARANTINE_SWEEP_EVERY: Duration = Duration::from_secs(3_600);

/// Script hooks running at once, at most; more wait their turn.
const MAX_CONCURRENT_SCRIPTS: usize = 8;

impl AppState {
    /// Opens memory.db of `home` and starts every actor on it with
    /// `settings`. Must run inside an actix `System`. Model downloads and
    /// loads are not started here: [`AppState::spawn_background`] does, so
    /// nothing waits for them.
    pub async fn start(home: &DataHome, settings: Arc<Settings>) -> anyhow::Result<Self> {
        // Off the runtime: the build is CPU work and nothing waits for it.
        std::thread::spawn(kirocrew_actors::security::warm);
        let store = open_store(home, &settings)
            .await
            .with_context(|| format!("opening {}", home.memory_db().display()))?;
        let embeddings = EmbeddingRuntime::start(home, &settings, store);
        let store = embeddings.store.clone();
        let layers = MemoryLayers::start(home, &settings, store.clone(), system_clock());
        let security_log = SecurityLogHandle::start(security_log_config(home, &settings));
        // Every memory writer's injection blocks become security events too.
        store
            .attach_security_log(security_log.clone())
            .await
            .context("attaching the security log to the store")?;
        // A flagged SKILL.md is held in memory.db's quarantine, and
        // released back through the skills actor.
        let skills = crate::skills_wiring::start_skills(
            home,
            &settings,
            system_clock(),
            Some(security_log.clone()),
            &store,
        )
        .await
        .context("attaching the skills writer to the quarantine")?;
        let hooks = HookRunnerHandle::start(
            HookRunnerConfig {
                config_file: home.root().join("config.json"),
                hooks_file: home.hooks_file(),
                load_rules: rules_loader(home.root().to_path_buf()),
                max_concurrent_scripts: MAX_CONCURRENT_SCRIPTS,
                security_log: Some(security_log.clone()),
            },
            settings.hooks.clone(),
        );
        let sensitive_paths = home.sensitive_paths();
        let channels = ChannelHistoryHandle::start(channel_history_config(
            home,
            &settings,
            security_log.clone(),
            sensitive_paths.clone(),
        ))
        .with_context(|| {
            format!(
                "starting the channel history in {}",
                home.history_dir().display()
            )
        })?;
        let safe_reader = SafeReader::new(sensitive_paths, security_log.clone(), "daemon");
        let transcripts = TranscriptsHandle::start(TranscriptsConfig {
            dir: home.sessions_dir(),
            clock: system_clock(),
        });
        let chat_model = ChatModel::start(&settings, home);
        let (consolidator, idle_checks) = consolidator_wiring::start(
            &settings,
            home,
            ConsolidatorParts {
                transcripts: transcripts.clone(),
                store: store.clone(),
                files: layers.files.clone(),
                migrated: layers.migration.migrated_flag(),
                clock: system_clock(),
            },
            chat_model.llm(),
        );
        if settings.consolidation.enabled {
            layers
                .heartbeat
                .subscribe_idle(idle_checks)
                .await
                .context("subscribing the consolidator to the heartbeat")?;
        }
        let console = ConsoleHub::new(
            settings.server.console_max_sessions,
            Duration::from_secs(settings.server.console_idle_secs),
        );
        console.spawn_progress_sampler(embeddings.clone(), layers.migration.clone());
        let thread_compressor = crate::context::ThreadCompressor::new(
            chat_model.llm(),
            Duration::from_millis(settings.context.history_compress_deadline_ms),
        );
        Ok(Self {
            store,
            settings,
            embeddings,
            layers,
            lessons_file: LessonFile::new(home.lessons_file())
                .with_security_log(security_log.clone()),
            auth_failures: AuthFailures::new(security_log.clone()),
            security_log,
            skills,
            hooks,
            home: home.clone(),
            channels,
            safe_reader,
            transcripts,
            consolidator,
            chat_model,
            console,
            thread_compressor,
        })
    }

    /// Starts what runs beside serving and nothing waits for: the
    /// embedding model's download, load, space reconcile and backfill; the
    /// catch-up sweep (rows written while the model was busy get their
    /// vectors soon after, not at the next restart); the chat model's
    /// download and load; the Markdown migration; the minute summaries of
    /// auth failures; the quarantine's expiry sweep.
    pub fn spawn_background(&self) -> Background {
        Background {
            tasks: vec![
                actix_rt::spawn(self.embeddings.clone().boot()),
                actix_rt::spawn(self.embeddings.clone().catch_up(CATCH_UP_EVERY)),
                actix_rt::spawn(self.chat_model.clone().boot()),
                actix_rt::spawn(self.layers.migration.clone().boot()),
                actix_rt::spawn(sum_up_auth_failures(self.auth_failures.clone())),
                actix_rt::spawn(expire_quarantine(
                    self.store.clone(),
                    self.settings.security.quarantine_days,
                )),
            ],
        }
    }

    /// Stops the actors in order once nothing is served any more: the
    /// console's sampler → the heartbeat and the memory index → the skill
    /// usage ledger (its pending hits flushed) → the embedder and the chat
    /// model → memory.db (WAL checkpoint, connections closed).
    pub async fn close(&self) -> Result<(), VectorStoreError> {
        self.console.shutdown();
        self.layers.close().await;
        if let Err(e) = self.skills.close().await {
            tracing::warn!(error = %e, "closing the skills actor");
        }
        self.embeddings.close().await;
        self.chat_model.close();
        self.store.close().await
    }
}

/// Writes the summaries of auth-failure windows that ended, every window,
/// so a flood that stopped is summed up without waiting for the next one.
async fn sum_up_auth_failures(failures: AuthFailures) {
    let mut ticks = tokio::time::interval(auth_failures::WINDOW);
    loop {
        ticks.tick().await;
        failures.flush_ended();
    }
}

/// Drops quarantined writes older than `days` (each audited), at start and
/// every [`QUARANTINE_SWEEP_EVERY`]; a failed sweep is logged and retried
/// at the next tick.
async fn expire_quarantine(store: VectorStoreHandle, days: u32) {
    let mut ticks = tokio::time::interval(QUARANTINE_SWEEP_EVERY);
    loop {
        ticks.tick().await;
        match store.expire_quarantine(days).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(expired = n, days, "quarantined writes expired"),
            Err(e) => tracing::warn!(error = %e, "quarantine expiry failed"),
        }
    }
}

/// The background tasks of [`AppState::spawn_background`].
pub struct Background {
    tasks: Vec<actix_rt::task::JoinHandle<()>>,
}

impl Background {
    /// Stops every task (a download or load in flight is dropped).
    pub fn abort(self) {
        for task in self.tasks {
            task.abort();
        }
    }
}
