//! The semantic records the store hands out and accepts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::validate::USER_EXPLICIT;
use crate::vector_store::error::VectorStoreError;

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

impl SemanticWrite {
    /// A write as a person or an agent states it, the one rule for every
    /// surface (HTTP, CLI, console): no source means `user_explicit`; a
    /// `user_explicit` write without a confidence is stated outright (1.0);
    /// any other source must say how sure it is
    /// ([`VectorStoreError::InvalidConfidence`] otherwise).
    pub fn stated(
        key: String,
        value: Value,
        confidence: Option<f64>,
        source: Option<String>,
    ) -> Result<Self, VectorStoreError> {
        let source = source.unwrap_or_else(|| USER_EXPLICIT.to_owned());
        let confidence = match confidence {
            Some(c) => c,
            None if source == USER_EXPLICIT => 1.0,
            None => {
                return Err(VectorStoreError::InvalidConfidence(format!(
                    "confidence is required for source {source:?}"
                )))
            }
        };
        Ok(Self {
            key,
            value,
            confidence,
            source,
        })
    }
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

/// What `set_semantic_if_absent` did with one entry.
#[derive(Debug, Clone, PartialEq)]
pub enum IfAbsentOutcome {
    /// Stored: the key had no active row.
    Inserted(SemanticEntry),
    /// Left alone: an active row exists (never overwritten).
    Exists,
}

/// Whether a key was ever written (see `VectorStoreHandle::key_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyState {
    /// Never written.
    Absent,
    /// Has an active row.
    Active,
    /// Written once, tombstoned since.
    Deleted,
}

#[cfg(test)]
mod stated_tests {
    use super::*;

    #[test]
    fn a_stated_write_is_sure_only_when_the_user_states_it() {
        let w =
            SemanticWrite::stated("pref.editor".into(), Value::from("helix"), None, None).unwrap();
        assert_eq!(w.source, USER_EXPLICIT);
        assert!((w.confidence - 1.0).abs() < 1e-12);
        let w = SemanticWrite::stated("k".into(), Value::Null, Some(0.4), None).unwrap();
        assert!((w.confidence - 0.4).abs() < 1e-12);
        let e = SemanticWrite::stated("k".into(), Value::Null, None, Some("agent".into()));
        assert!(
            matches!(e, Err(VectorStoreError::InvalidConfidence(m)) if m.contains("\"agent\""))
        );
    }
}
