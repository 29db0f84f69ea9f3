//! The arguments of each MCP tool. Their JSON schemas (schemars) are what
//! `tools/list` advertises, and the same types decode `tools/call`
//! arguments, so a schema can never drift from what a call accepts.
//! Unknown fields are refused: a misspelt option is an error the agent
//! sees, not a silently ignored one.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// `memory_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySearch {
    /// What to look for, in plain words.
    pub query: String,
    /// At most this many results (1–50, default 10).
    pub limit: Option<u32>,
    /// Which stores to search: any of `semantic`, `episodic`, `files`
    /// (default: all three).
    pub sources: Option<Vec<String>>,
}

/// `memory_remember`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryRemember {
    /// The fact's key: `pref.*`, `project.*` or `user.*`, lower case
    /// (e.g. `pref.editor`).
    pub key: String,
    /// The value: text, a number, or any JSON value.
    pub value: Value,
    /// How sure you are, 0.0–1.0. Writes below `memory.confidence_threshold`
    /// (0.8 by default) are refused.
    pub confidence: f64,
}

/// `memory_forget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryForget {
    /// The key to forget.
    pub key: String,
}

/// `episode_add`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EpisodeAdd {
    /// What happened, 10–2,000 characters.
    pub text: String,
    /// How much it matters, 0.0–1.0 (default 0.5).
    pub importance: Option<f64>,
    /// Free-form tags.
    pub tags: Option<Vec<String>>,
}

/// `learn_add`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LearnAdd {
    /// What to do from now on (the correction the user gave).
    pub rule: String,
    /// What not to do, if the user said so.
    pub negative: Option<String>,
    /// `tool`, `preference` or `knowledge` (default `knowledge`).
    pub category: Option<String>,
}

/// `learn_remove`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LearnRemove {
    /// The lesson's key (`lesson.…`, as `learn_list` shows it).
    pub key: String,
}

/// `learn_list` (no arguments).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LearnList {}

/// `skill_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillSearch {
    /// Words to look for in skill names, descriptions and triggers.
    pub query: String,
    /// At most this many skills (1–50, default 10).
    pub limit: Option<u32>,
}

/// `skill_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillRead {
    /// The skill's name, as `skill_search` or `skill://` resources give it.
    pub name: String,
}

/// `context_preview`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextPreview {
    /// The message a session would start with (ranks memory; may be empty).
    pub message: String,
    /// The model's context window in tokens (scales the caps).
    pub model_window: Option<u64>,
    /// Only the receipt, not the context text (smaller answers).
    pub receipt_only: Option<bool>,
}
