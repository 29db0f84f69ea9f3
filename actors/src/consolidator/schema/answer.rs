//! The answer's types and the per-consolidation caps (see `schema/`).

use serde::{Deserialize, Serialize};

use crate::vector_store::lessons::LessonCategory;

/// Most semantic entries one consolidation writes.
pub const MAX_SEMANTIC: usize = 20;
/// Most episodic fragments one consolidation writes.
pub const MAX_EPISODIC: usize = 10;
/// Most lessons one consolidation writes (each can cost six embeds).
pub const MAX_LESSONS: usize = 10;

/// Which consolidation path an answer is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsolidationPath {
    /// Every 30 messages: semantic entries (and preferences.md /
    /// projects.md before migration).
    Prefs,
    /// After the idle threshold: the day's history, episodic fragments,
    /// implicit lessons.
    History,
}

/// A semantic entry the model proposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemanticItem {
    /// `pref.*`, `project.*` or `user.*`.
    pub key: String,
    /// The value.
    pub value: String,
    /// In [0, 1]; the store's confidence gate applies.
    pub confidence: f64,
}

/// An episodic fragment the model proposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodicItem {
    /// What happened.
    pub text: String,
    /// In [0, 1].
    pub importance: f64,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// An implicit correction the model found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LessonItem {
    /// What to do.
    pub rule: String,
    /// What not to do, if the user said.
    #[serde(default)]
    pub negative: Option<String>,
    /// `tool`, `preference` or `knowledge`.
    pub category: LessonCategory,
}

/// The model's answer (the keys of one path).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsolidationAnswer {
    /// Semantic entries (prefs path).
    #[serde(default)]
    pub semantic: Vec<SemanticItem>,
    /// Episodic fragments (history path).
    #[serde(default)]
    pub episodic: Vec<EpisodicItem>,
    /// Implicit lessons (history path).
    #[serde(default)]
    pub lessons: Vec<LessonItem>,
    /// The summary for `history/{date}.md` (history path).
    #[serde(default)]
    pub history: Option<String>,
    /// preferences.md, whole (prefs path, before migration).
    #[serde(default)]
    pub preferences_update: Option<String>,
    /// projects.md, whole (prefs path, before migration).
    #[serde(default)]
    pub projects_update: Option<String>,
    /// Keys of the answer that are not this path's (another path's, or
    /// none's): ignored, named for the run report.
    #[serde(skip)]
    pub ignored_keys: Vec<String>,
    /// Items that did not fit their schema, dropped one by one.
    #[serde(skip)]
    pub malformed: usize,
}

/// Why an answer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// Not JSON, or cut off.
    #[error("answer is not JSON: {0}")]
    NotJson(String),
    /// JSON, but not the schema.
    #[error("answer does not match the schema: {0}")]
    Schema(String),
}

/// How many items the caps dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// Semantic entries over [`MAX_SEMANTIC`].
    pub semantic: usize,
    /// Episodic fragments over [`MAX_EPISODIC`].
    pub episodic: usize,
    /// Lessons over [`MAX_LESSONS`].
    pub lessons: usize,
    /// Items that did not fit their schema (a wrong type, a number outside
    /// [0, 1], an unknown category).
    pub malformed: usize,
    /// Items the conversation does not support (grounding): invented, or
    /// taken from the prompt's own examples.
    pub ungrounded: usize,
}
