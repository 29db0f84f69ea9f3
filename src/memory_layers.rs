//! The Markdown memory layers in the service: the `MemoryFiles` actor, the
//! `Heartbeat` that maintains it, and the migration service, started from
//! the data home and the configuration (spec: "Memory", "Decaying Memory",
//! "History Pruning", "Configuration", "Migration").

use std::time::Duration;

use crate::config::Settings;
use crate::home::DataHome;
use crate::migration::MigrationService;
use kirocrew_actors::clock::SharedClock;
use kirocrew_actors::heartbeat::{HeartbeatConfig, HeartbeatHandle, HistorySettings};
use kirocrew_actors::memory_files::{MemoryFilesConfig, MemoryFilesHandle};
use kirocrew_actors::vector_store::VectorStoreHandle;

/// The running Markdown-layer actors.
#[derive(Clone)]
pub struct MemoryLayers {
    /// preferences.md, projects.md, history/, memory_index.db.
    pub files: MemoryFilesHandle,
    /// The maintenance clock and the live history settings.
    pub heartbeat: HeartbeatHandle,
    /// Markdown → structured memory.
    pub migration: MigrationService,
}

/// The history settings from the configuration.
pub fn history_settings(settings: &Settings) -> HistorySettings {
    HistorySettings {
        history_idle_hours: settings.memory.history_idle_hours,
        history_max_days: settings.memory.history_max_days,
    }
}

impl MemoryLayers {
    /// Starts the actors: the index is rebuilt in the background, the
    /// heartbeat prunes once and then ticks every
    /// `memory.heartbeat_interval_secs`. Must run inside an actix `System`.
    pub fn start(
        home: &DataHome,
        settings: &Settings,
        store: VectorStoreHandle,
        clock: SharedClock,
    ) -> Self {
        let files = MemoryFilesHandle::start(MemoryFilesConfig {
            memory_dir: home.memory_dir(),
            index_path: home.memory_index_db(),
            clock: clock.clone(),
            rebuild_on_start: true,
        });
        let heartbeat = HeartbeatHandle::start(
            files.clone(),
            HeartbeatConfig {
                interval: Duration::from_secs(settings.memory.heartbeat_interval_secs),
                settings: history_settings(settings),
                clock,
                prune_on_start: true,
            },
        );
        Self {
            files,
            heartbeat,
            migration: MigrationService::new(home.clone(), store, settings.memory.migrated),
        }
    }

    /// Stops the heartbeat, then closes the index (shutdown).
    pub async fn close(&self) {
        self.heartbeat.stop();
        if let Err(e) = self.files.close().await {
            tracing::warn!(error = %e, "closing the memory index");
        }
    }
}
