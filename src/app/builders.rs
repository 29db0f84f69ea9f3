//! Configuration builders: the actors' configs made from the data home
//! and the settings, in one place for the daemon ([`crate::startup`]) and
//! the one-shot commands, so the two can never build them differently.

use crate::embedder_wiring::{choose_model, CALIBRATION_FILE, MODEL_PATH_ENV};
use anyhow::Context as _;
use kirocrew_actors::channel_history::{ChannelHistoryConfig, ChannelHistoryHandle};
use kirocrew_actors::clock::{system_clock, system_monotonic};
use kirocrew_actors::download::ModelSource;
use kirocrew_actors::embedder::{EmbedderHandle, LlamaConfig, LlamaCppBackend, SharedBackend};
use kirocrew_actors::hooks::{HookRunnerConfig, HookRunnerHandle};
use kirocrew_actors::memory_files::{MemoryFilesConfig, MemoryFilesHandle};
use kirocrew_actors::security_log::{SecurityLogConfig, SecurityLogHandle};
use kirocrew_actors::sensitive_paths::SafeReader;
use kirocrew_actors::transcripts::{TranscriptsConfig, TranscriptsHandle};
use kirocrew_actors::vector_store::{VectorStoreError, VectorStoreHandle};
use std::sync::Arc;

use crate::config::{self, LoadedConfig, Settings};
use crate::context::{ContextSettings, ContextSources};
use crate::home::DataHome;

/// The effective configuration of `home` (defaults ← config.json ←
/// environment), its warnings logged.
pub fn load_config(home: &DataHome) -> Result<LoadedConfig, config::ConfigError> {
    let loaded = config::load(home.root(), std::env::vars())?;
    for warning in &loaded.warnings {
        tracing::warn!("{warning}");
    }
    Ok(loaded)
}

/// The security log's configuration for `home`.
pub fn security_log_config(home: &DataHome, settings: &Settings) -> SecurityLogConfig {
    SecurityLogConfig {
        path: home.security_log(),
        max_bytes: settings.security.log_max_bytes,
        keep: settings.security.log_keep,
        clock: system_clock(),
    }
}

/// Starts the data home's security log, for one-shot commands whose store
/// writes may be blocked (`memory set`, `memory migrate`, `learn add`).
/// Call [`SecurityLogHandle::flush`] before the command exits.
pub fn start_security_log(home: &DataHome, settings: &Settings) -> SecurityLogHandle {
    SecurityLogHandle::start(security_log_config(home, settings))
}

/// The channel history's configuration for `home` (the daemon and the
/// one-shot commands that build context).
pub fn channel_history_config(
    home: &DataHome,
    settings: &Settings,
    security_log: SecurityLogHandle,
    sensitive_paths: kirocrew_actors::sensitive_paths::SensitivePaths,
) -> ChannelHistoryConfig {
    ChannelHistoryConfig {
        history_dir: home.history_dir(),
        observe_max_entries: settings.channels.observe_max_messages as usize,
        observe_ttl: settings.channels.observe_ttl(),
        clock: system_clock(),
        monotonic: system_monotonic(),
        security_log,
        sensitive_paths,
    }
}

/// The runner for a one-shot command (no security log: the CLI is the
/// operator at the machine, and nothing it runs here is a decision).
pub fn start_hook_runner(
    home: &DataHome,
    rules: kirocrew_actors::hooks::HookRules,
    security_log: Option<SecurityLogHandle>,
) -> HookRunnerHandle {
    HookRunnerHandle::start(
        HookRunnerConfig {
            config_file: home.root().join("config.json"),
            hooks_file: home.hooks_file(),
            load_rules: rules_loader(home.root().to_path_buf()),
            max_concurrent_scripts: 1,
            security_log,
        },
        rules,
    )
}

/// Re-reads the `hooks` section of the effective configuration (defaults ←
/// config.json ← environment), for the hook runner's reload on change.
pub fn rules_loader(home: std::path::PathBuf) -> kirocrew_actors::hooks::RulesLoader {
    Arc::new(move || {
        config::load(&home, std::env::vars())
            .map(|c| c.settings.hooks)
            .map_err(|e| e.to_string())
    })
}

/// The builder's sources for a one-shot command on `home`: the given
/// store, and the other owners started locally (no download, no index
/// rebuild, nothing recorded but security events).
pub fn local_context_sources(
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
    let log = SecurityLogHandle::start(security_log_config(home, settings));
    let mut skills_config =
        crate::skills_wiring::skills_config(home, settings, system_clock(), Some(log.clone()));
    // Read-only here, but a flagged write would be held, never lost.
    skills_config.quarantine = Some(store.clone());
    let policy = home.sensitive_paths();
    let channels = ChannelHistoryHandle::start(channel_history_config(
        home,
        settings,
        log.clone(),
        policy.clone(),
    ))?;
    Ok(ContextSources {
        store,
        lessons_file: kirocrew_actors::lessons_file::LessonFile::new(home.lessons_file()),
        files,
        hooks: start_hook_runner(home, settings.hooks.clone(), Some(log.clone())),
        channels,
        transcripts: TranscriptsHandle::start(TranscriptsConfig {
            dir: home.sessions_dir(),
            clock: system_clock(),
        }),
        skills: kirocrew_actors::skills::SkillLedgerHandle::start(skills_config),
        reader: SafeReader::new(policy, log, "cli"),
        clock: system_clock(),
        settings: ContextSettings::from_config(settings, home),
        // A one-shot command loads no chat model: long histories truncate.
        compressor: None,
    })
}

/// How long a one-shot command waits for the model to load.
const MODEL_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// The configured embedding model, loaded, if its file exists.
pub async fn local_embedder(home: &DataHome, settings: &Settings) -> Option<EmbedderHandle> {
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

/// A one-shot command's memory.db and the model it embeds with.
pub struct LocalStore {
    /// The store (with the model attached when one was asked for and
    /// present).
    pub store: VectorStoreHandle,
    embedder: Option<EmbedderHandle>,
}

impl LocalStore {
    /// Closes the model, then memory.db (a WAL checkpoint).
    pub async fn close(self) -> anyhow::Result<()> {
        if let Some(embedder) = self.embedder {
            let _ = embedder.close().await;
        }
        self.store.close().await.context("closing memory.db")
    }
}

/// memory.db of `home` with the configured store settings: how the daemon
/// ([`super::start`]) and every one-shot command open it.
pub async fn open_store(
    home: &DataHome,
    settings: &Settings,
) -> Result<VectorStoreHandle, VectorStoreError> {
    VectorStoreHandle::open(home.memory_db(), settings.store_settings(), system_clock()).await
}

/// memory.db of `home` for a one-shot command, as the daemon has it: the
/// configured store settings; with `with_model`, the configured embedding
/// model when its file is present (never downloaded), its space recorded
/// (so its vectors are never compared with another model's) and its
/// similarity thresholds calibrated (from the daemon's cache in
/// `models/`, else measured once and cached).
pub async fn open_local_store(
    home: &DataHome,
    settings: &Settings,
    with_model: bool,
) -> Result<LocalStore, VectorStoreError> {
    let store = open_store(home, settings).await?;
    let embedder = if with_model {
        local_embedder(home, settings).await
    } else {
        None
    };
    let Some(model) = &embedder else {
        return Ok(LocalStore { store, embedder });
    };
    let store = store.with_ready_embedder(model.clone()).await?;
    let cache = home.root().join("models").join(CALIBRATION_FILE);
    match model.calibrate(Some(&cache)).await {
        Ok(calibration) => store.set_calibration(calibration).await?,
        Err(e) => tracing::warn!(error = %e, "model not calibrated; reference thresholds"),
    }
    Ok(LocalStore { store, embedder })
}
