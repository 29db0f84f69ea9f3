//! The consolidation answer: its types and the per-consolidation caps
//! (`answer.rs`), its one JSON Schema (`json.rs`, from which the local backend's
//! GBNF grammar and the endpoint's JSON mode are both derived), and
//! parsing and capping a model's answer (`parse.rs`).
//!
//! Spec: "Consolidation" (caps `_MAX_SEMANTIC_PER_CONSOLIDATION` = 20,
//! `_MAX_EPISODIC_PER_CONSOLIDATION` = 10, `_MAX_LESSONS_PER_CONSOLIDATION`
//! = 10; `preferences_update` / `projects_update` only while
//! `memory.migrated` is false).
//!
//! Each path asks for its own keys of the one answer type: the prefs path
//! for `semantic` (and the two Markdown documents before migration), the
//! history path for `history`, `episodic` and `lessons`. An answer is all
//! or nothing: not JSON, a missing or unexpected key, a wrong type or a
//! number outside [0, 1] makes it [`AnswerError`] and nothing of it is
//! written. Too many items is not an error: the caps drop the excess
//! (logged), the model having been told the numbers.

mod answer;
mod json;
mod parse;

pub use answer::{
    AnswerError, ConsolidationAnswer, ConsolidationPath, Dropped, EpisodicItem, LessonItem,
    SemanticItem, MAX_EPISODIC, MAX_LESSONS, MAX_SEMANTIC,
};
pub use json::{answer_keys, answer_schema};
pub use parse::{apply_caps, parse_answer};
