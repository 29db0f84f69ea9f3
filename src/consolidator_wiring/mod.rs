//! The consolidator in the service: its model (`model.rs`: which backend
//! serves, the default chat model's download, the model status), the
//! `after_consolidation` steps the daemon registers, and starting it
//! subscribed to the heartbeat's idle checks (spec: "Consolidation";
//! issue 14).
//!
//! ## after_consolidation
//! Every successful history-path run (the idle path, or a forced run)
//! offers the session to [`after_consolidation_steps`], in order, once
//! the marker is persisted. The daemon registers one step today,
//! `RecordConsolidated` (a `consolidated` audit event: session key, marker,
//! counts); the auto-skill pipeline (spec "Auto-Skill Creation") adds its
//! own here. A failing step is logged and named in the run's report; the
//! consolidation stands and the marker stays where the run put it.

mod model;

use std::sync::Arc;

use crate::config::Settings;
use crate::home::DataHome;
use kirocrew_actors::clock::SharedClock;
use kirocrew_actors::consolidator::{
    AfterConsolidationSteps, ConsolidationSettings, ConsolidatorConfig, ConsolidatorHandle,
    RecordConsolidated, PREFS_EVERY,
};
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::llm::SharedLlm;
use kirocrew_actors::memory_files::MemoryFilesHandle;
use kirocrew_actors::transcripts::TranscriptsHandle;
use kirocrew_actors::vector_store::VectorStoreHandle;

pub use kirocrew_actors::llm::DEFAULT_CHAT_MODEL_FILE;
pub use model::{
    select_model, with_download, ChatModel, ChatModelStatus, ModelSelection, TEST_GRADE_NOTE,
};

/// What the consolidator is started with besides the configuration.
pub struct ConsolidatorParts {
    /// Session transcripts.
    pub transcripts: TranscriptsHandle,
    /// The memory store.
    pub store: VectorStoreHandle,
    /// The Markdown layers.
    pub files: MemoryFilesHandle,
    /// The live `memory.migrated`.
    pub migrated: Arc<std::sync::atomic::AtomicBool>,
    /// Time source.
    pub clock: SharedClock,
}

/// The steps the daemon runs after each history-path consolidation, in
/// order (see the module docs).
pub fn after_consolidation_steps(store: &VectorStoreHandle) -> AfterConsolidationSteps {
    vec![Arc::new(RecordConsolidated::new(store.clone()))]
}

/// Starts the consolidator with `llm` and the daemon's
/// `after_consolidation` steps; answers its handle and the sender to
/// subscribe to the heartbeat with. Must run inside an actix `System`.
pub fn start(
    settings: &Settings,
    home: &DataHome,
    parts: ConsolidatorParts,
    llm: SharedLlm,
) -> (
    ConsolidatorHandle,
    tokio::sync::mpsc::Sender<kirocrew_actors::heartbeat::CheckIdleSessions>,
) {
    ConsolidatorHandle::start(ConsolidatorConfig {
        after_consolidation: after_consolidation_steps(&parts.store),
        transcripts: parts.transcripts,
        store: parts.store,
        files: parts.files,
        lessons_file: LessonFile::new(home.lessons_file()),
        llm,
        clock: parts.clock,
        migrated: parts.migrated,
        settings: ConsolidationSettings {
            prefs_every: PREFS_EVERY,
            max_tokens: settings.consolidation.max_answer_tokens,
            transcript_chars: settings.consolidation.transcript_chars,
            forced_model_wait: std::time::Duration::from_secs(
                settings.consolidation.forced_run_wait_secs,
            ),
        },
    })
}
