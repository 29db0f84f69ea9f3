//! Export and import of memory as one JSON document.
//!
//! An export holds every active semantic row (lessons included, since they
//! live under `lesson.*`). Import restores a document through the same
//! validation, injection screening and audit as any write, using
//! `set_semantic_if_absent`: it never overwrites an existing key, so
//! re-importing an export is a no-op and a restore cannot clobber newer data.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::vector_store::error::VectorStoreError;
use crate::vector_store::semantic::types::SemanticEntry;

/// The `format` tag of an export document.
pub const EXPORT_FORMAT: &str = "kirocrew-memory-export";
/// The export version this build writes and reads.
pub const EXPORT_VERSION: u32 = 1;

/// A full export.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryExport {
    /// Always [`EXPORT_FORMAT`].
    pub format: String,
    /// Always [`EXPORT_VERSION`] for documents this build writes.
    pub version: u32,
    /// When the export was taken (RFC 3339, UTC).
    pub exported_at: String,
    /// Active semantic rows, by key.
    pub semantic: Vec<SemanticEntry>,
    /// Category of each lesson row (`lesson.*` key → tool / preference /
    /// knowledge); absent in documents without lessons.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lesson_categories: BTreeMap<String, String>,
}

/// One entry of an import document: only the fields a restore uses are
/// required, so a hand-written import file may omit timestamps.
#[derive(Debug, Clone, Deserialize)]
pub struct ImportEntry {
    /// The key.
    pub key: String,
    /// The value.
    pub value: Value,
    /// Confidence; defaults to 1.0.
    #[serde(default = "one")]
    pub confidence: f64,
    /// Source; defaults to `import`.
    #[serde(default = "import_source")]
    pub source: String,
    /// Ignored: the restored row gets the import time.
    #[serde(default)]
    pub created_at: Option<String>,
    /// Ignored, like `created_at`.
    #[serde(default)]
    pub updated_at: Option<String>,
}

fn one() -> f64 {
    1.0
}

fn import_source() -> String {
    "import".to_owned()
}

/// An import document as received.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportDocument {
    /// Must be [`EXPORT_FORMAT`].
    pub format: String,
    /// Must not be newer than [`EXPORT_VERSION`].
    pub version: u32,
    /// Informational.
    #[serde(default)]
    pub exported_at: Option<String>,
    /// Entries to restore. Each is decoded on its own, so one malformed
    /// entry is reported as rejected instead of failing the document.
    #[serde(default)]
    pub semantic: Vec<Value>,
    /// Lesson categories by key (see [`MemoryExport::lesson_categories`]).
    #[serde(default)]
    pub lesson_categories: BTreeMap<String, String>,
}

impl ImportDocument {
    /// Parses and checks the document envelope.
    pub fn parse(doc: Value) -> Result<Self, VectorStoreError> {
        let doc: ImportDocument = serde_json::from_value(doc)
            .map_err(|e| VectorStoreError::InvalidExport(e.to_string()))?;
        if doc.format != EXPORT_FORMAT {
            return Err(VectorStoreError::InvalidExport(format!(
                "format is {:?}; expected {EXPORT_FORMAT:?}",
                doc.format
            )));
        }
        if doc.version == 0 || doc.version > EXPORT_VERSION {
            return Err(VectorStoreError::InvalidExport(format!(
                "version {} is not supported (this build reads version {EXPORT_VERSION})",
                doc.version
            )));
        }
        Ok(doc)
    }
}

/// Per-entry result of an import.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportItem {
    /// The key, or `#<index>` when the entry had no readable key.
    pub key: String,
    /// `skipped` or `rejected`.
    pub outcome: &'static str,
    /// Why.
    pub reason: String,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    /// Entries stored.
    pub imported: usize,
    /// Entries left alone because the key already exists.
    pub skipped: usize,
    /// Entries refused by validation or screening.
    pub rejected: usize,
    /// One line per skipped or rejected entry.
    pub details: Vec<ImportItem>,
}

impl ImportReport {
    /// Records a skipped entry.
    pub fn skip(&mut self, key: String, reason: impl Into<String>) {
        self.skipped += 1;
        self.details.push(ImportItem {
            key,
            outcome: "skipped",
            reason: reason.into(),
        });
    }

    /// Records a rejected entry.
    pub fn reject(&mut self, key: String, reason: impl Into<String>) {
        self.rejected += 1;
        self.details.push(ImportItem {
            key,
            outcome: "rejected",
            reason: reason.into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_is_checked() {
        let ok = serde_json::json!({"format": EXPORT_FORMAT, "version": 1, "semantic": []});
        assert!(ImportDocument::parse(ok).is_ok());
        for bad in [
            serde_json::json!({"format": "other", "version": 1}),
            serde_json::json!({"format": EXPORT_FORMAT, "version": 2}),
            serde_json::json!({"format": EXPORT_FORMAT, "version": 1, "episodic": []}),
            serde_json::json!([1, 2]),
        ] {
            assert!(matches!(
                ImportDocument::parse(bad),
                Err(VectorStoreError::InvalidExport(_))
            ));
        }
    }

    #[test]
    fn entries_default_confidence_and_source() {
        let e: ImportEntry =
            serde_json::from_value(serde_json::json!({"key": "pref.a", "value": 1})).unwrap();
        assert_eq!(e.confidence, 1.0);
        assert_eq!(e.source, "import");
    }
}
