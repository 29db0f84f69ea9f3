//! Everything a build reads from, and the settings that shape it. The
//! builder owns no state: it asks these owners concurrently and packs what
//! they answer (ARCHITECTURE "The context builder is not an actor").

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use kirocrew_actors::channel_history::ChannelHistoryHandle;
use kirocrew_actors::clock::SharedClock;
use kirocrew_actors::hooks::HookRunnerHandle;
use kirocrew_actors::memory_files::MemoryFilesHandle;
use kirocrew_actors::sensitive_paths::SafeReader;
use kirocrew_actors::skills::SkillLedgerHandle;
use kirocrew_actors::transcripts::TranscriptsHandle;
use kirocrew_actors::vector_store::VectorStoreHandle;

/// The owners a build reads from.
#[derive(Clone)]
pub struct ContextSources {
    /// Semantic, episodic, lessons.
    pub store: VectorStoreHandle,
    /// `lessons.jsonl`: the lessons while memory.db cannot answer.
    pub lessons_file: kirocrew_actors::lessons_file::LessonFile,
    /// Preferences, projects, recent history.
    pub files: MemoryFilesHandle,
    /// Transforms, context rules, auto-replies, script hooks.
    pub hooks: HookRunnerHandle,
    /// Channel buffers.
    pub channels: ChannelHistoryHandle,
    /// Session transcripts.
    pub transcripts: TranscriptsHandle,
    /// The skill catalog and usage ledger.
    pub skills: SkillLedgerHandle,
    /// Guarded reads (steering files).
    pub reader: SafeReader,
    /// "Now".
    pub clock: SharedClock,
    /// Tunables.
    pub settings: ContextSettings,
    /// Thread-history summaries (`None`: long histories are truncated).
    pub compressor: Option<super::compress::ThreadCompressor>,
}

/// The builder's tunables (config `context.*`, `skills.lazy_load`).
#[derive(Debug, Clone)]
pub struct ContextSettings {
    /// Longest the query embed may take before the build goes keyword-only.
    pub embed_deadline: Duration,
    /// `skills.lazy_load`: the section-sum ceiling instead of the flat base.
    pub lazy_load: bool,
    /// Extra model windows (exact model ids).
    pub model_windows: BTreeMap<String, u64>,
    /// The project directory (`$KIROCREW_PROJECT_DIR`), if any.
    pub project_dir: Option<PathBuf>,
    /// The data home, as shown in `[WORKSPACE IDENTITY]`.
    pub data_home: String,
}

impl ContextSettings {
    /// The tunables from the configuration and the data home.
    pub fn from_config(settings: &crate::config::Settings, home: &crate::home::DataHome) -> Self {
        Self {
            embed_deadline: Duration::from_millis(settings.context.embed_deadline_ms),
            lazy_load: settings.skills.lazy_load,
            model_windows: settings.context.model_windows.clone(),
            project_dir: std::env::var_os("KIROCREW_PROJECT_DIR").map(Into::into),
            data_home: home.root().display().to_string(),
        }
    }
}
