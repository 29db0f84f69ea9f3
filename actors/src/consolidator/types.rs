//! The consolidator's plain data: its configuration, what a run did, the
//! status snapshot, and what the `after_consolidation` steps (`steps.rs`)
//! are offered.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::Serialize;

use super::schema::{ConsolidationPath, Dropped};
use crate::clock::SharedClock;
use crate::lessons_file::LessonFile;
use crate::llm::{ModelInfo, SharedLlm};
use crate::memory_files::MemoryFilesHandle;
use crate::transcripts::TranscriptsHandle;
use crate::vector_store::VectorStoreHandle;

/// Messages between two prefs-path runs (`_CONSOLIDATION_THRESHOLD`).
pub const PREFS_EVERY: u64 = 30;

/// The source label of every consolidation write.
pub const SOURCE: &str = "consolidation";

/// Tunables.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConsolidationSettings {
    /// Messages between prefs-path runs (30).
    pub prefs_every: u64,
    /// Most tokens an answer may take.
    pub max_tokens: u32,
    /// Characters of transcript a prompt carries, at most (the newest).
    pub transcript_chars: usize,
    /// How long a forced run (`run now`, the CLI, a bench) waits for a
    /// chat model that is still loading before it fails with "not ready".
    /// Triggered runs never wait: the next trigger tries again.
    pub forced_model_wait: std::time::Duration,
}

impl Default for ConsolidationSettings {
    fn default() -> Self {
        Self {
            prefs_every: PREFS_EVERY,
            max_tokens: 1_536,
            transcript_chars: 6_000,
            forced_model_wait: std::time::Duration::from_secs(120),
        }
    }
}

/// A session whose history path just finished, offered to the
/// `after_consolidation` steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConsolidatedSession {
    /// The session key.
    pub session: String,
    /// Turns consolidated so far (the persisted marker).
    pub upto: u64,
    /// What the run wrote.
    pub report: RunReport,
}

/// What a step answers: `Err` with a reason when it failed.
pub type StepFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// One step after a history-path run (the registered ones and their
/// contract are in `steps.rs`).
pub trait AfterConsolidation: Send + Sync + 'static {
    /// The step's name in logs and reports.
    fn name(&self) -> &str;

    /// Takes the consolidated session (key, marker, what the run wrote).
    fn after(&self, session: ConsolidatedSession) -> StepFuture;
}

/// The registered steps, in the order they run.
pub type AfterConsolidationSteps = Vec<Arc<dyn AfterConsolidation>>;

/// How to start the consolidator.
#[derive(Clone)]
pub struct ConsolidatorConfig {
    /// Where the turns are (and the history path's marker).
    pub transcripts: TranscriptsHandle,
    /// Semantic, episodic and lesson writers.
    pub store: VectorStoreHandle,
    /// preferences.md, projects.md, history/.
    pub files: MemoryFilesHandle,
    /// Where lessons go while memory.db is unavailable.
    pub lessons_file: LessonFile,
    /// The model.
    pub llm: SharedLlm,
    /// Time source (idle detection, status).
    pub clock: SharedClock,
    /// The live `memory.migrated`: the Markdown documents are replaced only
    /// while it is false.
    pub migrated: Arc<AtomicBool>,
    /// The steps after each history-path run, in order (`steps.rs`).
    pub after_consolidation: AfterConsolidationSteps,
    /// Tunables.
    pub settings: ConsolidationSettings,
}

/// What one run wrote (counts of items the writers accepted; refusals
/// are logged and audited by the writers).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunReport {
    /// The path.
    pub path: Option<ConsolidationPath>,
    /// Turns read (from the offset on).
    pub turns: u64,
    /// The offset after the run.
    pub upto: u64,
    /// Semantic entries written.
    pub semantic: usize,
    /// Episodic fragments written.
    pub episodic: usize,
    /// Lessons written (store or lessons.jsonl).
    pub lessons: usize,
    /// Whether history/{date}.md got an entry.
    pub history: bool,
    /// Whether preferences.md / projects.md were replaced.
    pub documents: bool,
    /// Items a writer refused (validation, confidence gate, injection
    /// screen, duplicate).
    pub refused: usize,
    /// Items over the caps, malformed or ungrounded.
    pub dropped: Dropped,
    /// Keys of the model's answer that were not the path's (ignored).
    pub ignored_keys: Vec<String>,
    /// `after_consolidation` steps that failed (`name: reason`); the run
    /// itself stands.
    pub steps_failed: Vec<String>,
}

/// One session in the status snapshot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionStatus {
    /// The session key.
    pub session: String,
    /// Messages since the prefs path's offset.
    pub messages_since: u64,
    /// Messages the history path has not consolidated yet.
    pub unconsolidated: u64,
    /// Seconds since the session's last message.
    pub idle_secs: i64,
    /// When a run of this session last succeeded.
    pub last_run: Option<String>,
    /// The last run's error, if it failed.
    pub last_error: Option<String>,
    /// Paths running now.
    pub running: Vec<ConsolidationPath>,
    /// A run is started but the chat model is not ready yet: a forced run
    /// waits for it (up to `forced_model_wait`).
    pub waiting_for_model: bool,
}

/// `GET /api/memory/consolidation`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConsolidationStatus {
    /// Every session, most recently active first.
    pub sessions: Vec<SessionStatus>,
    /// The model.
    pub model: ModelInfo,
}
