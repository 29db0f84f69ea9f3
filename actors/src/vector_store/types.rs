//! Records the store hands out and accepts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One active semantic key-value row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemanticEntry {
    /// Dotted key, e.g. `pref.editor`.
    pub key: String,
    /// Any JSON value.
    pub value: Value,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Who wrote it (`user_explicit`, `consolidation`, `import`, …).
    pub source: String,
    /// When the key was first written (RFC 3339, UTC).
    pub created_at: String,
    /// When the value last changed or was re-affirmed (RFC 3339, UTC).
    pub updated_at: String,
}

/// A semantic entry with its relevance to a query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredEntry {
    /// The entry.
    #[serde(flatten)]
    pub entry: SemanticEntry,
    /// Relevance in [0, 1]; 0 when the query was empty (recency order).
    pub score: f64,
}

/// A semantic write request.
#[derive(Debug, Clone)]
pub struct SemanticWrite {
    /// The key.
    pub key: String,
    /// The value.
    pub value: Value,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Source label.
    pub source: String,
}

/// What a successful write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteOutcome {
    /// A new key (or one that had been deleted).
    Created,
    /// An existing key got a new value, confidence or source.
    Updated,
}

/// One row of the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEvent {
    /// Monotonic id.
    pub id: i64,
    /// `create`, `update`, `delete`, `conflict_skip`, `injection_blocked`, …
    pub event_type: String,
    /// `semantic`, `episodic`, `lesson`, …
    pub memory_type: String,
    /// The key concerned (empty for key-less events).
    pub key: String,
    /// The value before (JSON text), if any.
    pub old_value: Option<String>,
    /// The value after, or the redacted snippet of a blocked write.
    pub new_value: Option<String>,
    /// The writer's source label.
    pub source: String,
    /// When it happened (RFC 3339, UTC).
    pub ts: String,
}

/// Counts for `/api/memory/stats` and `kirocrew memory stats`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryStats {
    /// Semantic rows.
    pub semantic: SemanticStats,
    /// Episodic rows.
    pub episodic: EpisodicStats,
    /// Rows in the audit trail.
    pub events: i64,
    /// memory.db size on disk (main file plus WAL).
    pub db_size_bytes: u64,
    /// `hybrid` once an embedding space is recorded, else `keyword`.
    pub retrieval: &'static str,
    /// The recorded embedding space.
    pub embedding_space: super::space::SpaceInfo,
}

/// Semantic counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SemanticStats {
    /// Active (not tombstoned) rows.
    pub active: i64,
    /// Tombstoned rows.
    pub deleted: i64,
    /// Active rows that carry a vector.
    pub embedded: i64,
    /// Active rows per key prefix (`pref`, `project`, …).
    pub by_prefix: std::collections::BTreeMap<String, i64>,
}

/// Episodic counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpisodicStats {
    /// Active rows.
    pub active: i64,
    /// Tombstoned rows.
    pub deleted: i64,
}
