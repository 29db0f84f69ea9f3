//! # Consolidator: conversations into durable memory
//!
//! Owns the per-session consolidation state: the prefs path's offsets (in
//! memory, like the reference's `_prefs_offset`), which runs are in
//! flight, each session's last outcome. Talked to by the gateway's
//! `POST /api/sessions/{key}/messages` ([`ConsolidatorHandle::note_turn`]
//! after every recorded turn), the heartbeat (an idle check on every tick,
//! through the channel [`ConsolidatorHandle::start`] returns), and the
//! consolidation routes (status, run now).
//!
//! Spec: "Consolidation (history.py HistoryConsolidator)", "Lesson
//! Extraction from Chat", "Consolidation Integration".
//!
//! - **Prefs path**, every 30 messages past its offset: semantic entries
//!   (≤ 20) and, while `memory.migrated` is false, preferences.md and
//!   projects.md replaced wholesale. It never advances the persisted
//!   marker, so the history path always covers every message.
//! - **History path**, once a session with unconsolidated messages has
//!   been idle longer than `history_idle_hours`: an entry in
//!   `history/{date}.md`, episodic fragments (≤ 10) and implicit lessons
//!   (≤ 10, lessons.jsonl when memory.db is unavailable), then the
//!   `last_consolidated` marker in the transcript metadata, then the
//!   [`AfterConsolidation`] steps the daemon registered (`steps.rs`).
//!
//! Every item goes through its normal writer with source `consolidation`.
//! The model ([`crate::llm`]) runs on a blocking thread inside a task the
//! actor spawns: the mailbox never waits for a model or an embed, so the
//! gateway's requests and the heartbeat are never stalled. A failed run
//! (model not ready, endpoint down, malformed or truncated answer) writes
//! nothing, moves no offset, and is retried by the next trigger.
//!
//! Files: `schema/` (answer types and caps, the one JSON Schema, parsing),
//! `prompt.rs`, `grounding.rs` (only what the conversation said is written), `triggers.rs` (when a path is due), `run.rs` (one run),
//! `steps.rs` (the `after_consolidation` steps), `types.rs`, and the actor shape (`actor.rs`, `messages.rs`,
//! `handle.rs`, `error.rs`).

mod actor;
mod error;
pub mod grounding;
mod handle;
mod messages;
pub mod prompt;
mod run;
pub mod schema;
mod steps;
pub mod triggers;
mod types;

pub use error::ConsolidatorError;
pub use handle::ConsolidatorHandle;
pub use schema::{
    answer_schema, apply_caps, parse_answer, AnswerError, ConsolidationAnswer, ConsolidationPath,
    Dropped, EpisodicItem, LessonItem, SemanticItem, MAX_EPISODIC, MAX_LESSONS, MAX_SEMANTIC,
};
pub use steps::{consolidated_summary, RecordConsolidated};
pub use types::{
    AfterConsolidation, AfterConsolidationSteps, ConsolidatedSession, ConsolidationSettings,
    ConsolidationStatus, ConsolidatorConfig, RunReport, SessionStatus, StepFuture, PREFS_EVERY,
    SOURCE,
};
