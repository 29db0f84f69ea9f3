//! Semantic memory: dotted keys (`pref.editor`, `project.kiro`, …) mapped
//! to JSON values, with confidence, source and an audit trail (spec:
//! "Semantic Memory", "Conflict resolution: which layer wins").
//!
//! A write is validated (pure, `validate.rs`), screened for injection, and
//! then, inside one IMMEDIATE transaction, run through the conflict ladder
//! (`ladder.rs`) against the incumbent row (`write.rs`). Ranking reads an
//! in-actor mirror of the active rows (`mirror.rs`) fused from keyword
//! stems and cosine; `context.rs` renders the `[Semantic Memory]` block and
//! `supersede.rs` judges which lower-layer lines a fact or lesson outranks.
//!
//! Files: `types.rs` (records), `messages.rs` (the actor protocol),
//! `handle.rs` (embed-first handle methods), `db.rs` (SQL).

mod context;
pub(super) mod db;
mod handle;
pub(super) mod ladder;
mod messages;
pub(super) mod mirror;
mod retire;
mod supersede;
pub(super) mod types;
pub(super) mod validate;
pub(super) mod write;

pub use context::{render_semantic_block, SEMANTIC_HEADER};
pub use supersede::{Fact, LabelledLine, LessonIndex, LessonRule};
pub use types::{
    IfAbsentOutcome, KeyState, ScoredEntry, SemanticEntry, SemanticWrite, WriteOutcome,
};
pub use validate::{
    normalize_prefix, AGENT, BUILTIN_PREFIXES, DEFAULT_CONFIDENCE_THRESHOLD, MAX_KEY_LEN,
    MAX_VALUE_BYTES, MAX_VALUE_DEPTH, USER_EXPLICIT,
};
