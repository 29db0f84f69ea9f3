//! Export and import of memory as one JSON document.
//!
//! An export holds every active semantic row (lessons included, since they
//! live under `lesson.*`) and every active episodic fragment (text, tags,
//! importance, created_at; no vectors: they are remade by the embedding
//! sweep after an import). Import restores a document through the same
//! validation, injection screening and audit as any write, using
//! `set_semantic_if_absent`: it never overwrites an existing key, so
//! re-importing an export is a no-op and a restore cannot clobber newer data.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::vector_store::error::VectorStoreError;
use crate::vector_store::semantic::types::SemanticEntry;

/// The `format` tag of an export document.
pub const EXPORT_FORMAT: &str = "kirocrew-memory-export";
/// The export version this build writes (it reads 1 and 2). Version 2
/// added `episodic`.
pub const EXPORT_VERSION: u32 = 2;

/// The first version that carries episodic memories.
const EPISODIC_SINCE: u32 = 2;

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
    /// Active episodic fragments, oldest first.
    #[serde(default)]
    pub episodic: Vec<EpisodicExport>,
}

/// One episodic fragment in an export, and what an import reads back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpisodicExport {
    /// The text.
    pub text: String,
    /// Sanitized tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Importance in [0, 1].
    #[serde(default = "half")]
    pub importance: f64,
    /// When it happened (RFC 3339, UTC); kept by a restore.
    pub created_at: String,
}

fn half() -> f64 {
    0.5
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

/// An import document as received. Entries stay raw JSON text until each
/// is decoded on its own: the envelope parse never descends into them, so
/// one entry nested past the parser's depth limit is rejected alone.
#[derive(Debug, Deserialize)]
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
    pub semantic: Vec<Box<RawValue>>,
    /// Lesson categories by key (see [`MemoryExport::lesson_categories`]).
    #[serde(default)]
    pub lesson_categories: BTreeMap<String, String>,
    /// Episodic fragments to restore (version 2 on), decoded one by one.
    #[serde(default)]
    pub episodic: Option<Vec<Box<RawValue>>>,
}

impl ImportDocument {
    /// Parses and checks the document envelope from JSON text.
    pub fn parse(text: &str) -> Result<Self, VectorStoreError> {
        // The error names where, never what: the file may be anything a
        // caller pointed at, and its keys and values are not ours to echo.
        let doc: ImportDocument = serde_json::from_str(text).map_err(|e| {
            let what = match e.classify() {
                serde_json::error::Category::Io | serde_json::error::Category::Syntax => {
                    "malformed JSON"
                }
                serde_json::error::Category::Eof => "JSON that ends too early",
                serde_json::error::Category::Data => {
                    "a field or value a kirocrew export does not have (or lacks one it needs)"
                }
            };
            VectorStoreError::InvalidExport(format!(
                "not a kirocrew export: {what} at line {}, column {}",
                e.line(),
                e.column()
            ))
        })?;
        if doc.format != EXPORT_FORMAT {
            return Err(VectorStoreError::InvalidExport(format!(
                "the format field is not {EXPORT_FORMAT:?}"
            )));
        }
        if doc.version == 0 || doc.version > EXPORT_VERSION {
            return Err(VectorStoreError::InvalidExport(format!(
                "version {} is not supported (this build reads versions 1 to {EXPORT_VERSION})",
                doc.version
            )));
        }
        if doc.episodic.is_some() && doc.version < EPISODIC_SINCE {
            return Err(VectorStoreError::InvalidExport(format!(
                "version {} documents carry no episodic memories (version {EPISODIC_SINCE} does)",
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
    /// Entries the screen held in the quarantine for review (issue 41):
    /// stored there, not lost, out of every prompt until released.
    pub quarantined: usize,
    /// One line per skipped, rejected or quarantined entry.
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

    /// Records an entry the store refused: held in the quarantine, or
    /// rejected.
    pub fn refused(&mut self, key: String, err: &VectorStoreError) {
        if matches!(err, VectorStoreError::Quarantined { .. }) {
            self.quarantined += 1;
            self.details.push(ImportItem {
                key,
                outcome: "quarantined",
                reason: err.to_string(),
            });
        } else {
            self.reject(key, err.to_string());
        }
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
    fn a_refused_document_is_never_echoed() {
        for text in [
            r#"{"aws_secret_access_key": "wJalrXUtnFEMI"}"#,
            r#"{"format": "wJalrXUtnFEMI", "version": 1}"#,
            "aws_secret_access_key=wJalrXUtnFEMI",
        ] {
            let err = ImportDocument::parse(text).unwrap_err().to_string();
            assert!(
                !err.contains("wJalrXUtnFEMI") && !err.contains("aws_"),
                "{err}"
            );
        }
    }

    #[test]
    fn envelope_is_checked() {
        let ok = serde_json::json!({"format": EXPORT_FORMAT, "version": 1, "semantic": []});
        assert!(ImportDocument::parse(&ok.to_string()).is_ok());
        let v2 = serde_json::json!({"format": EXPORT_FORMAT, "version": 2, "episodic": []});
        assert!(ImportDocument::parse(&v2.to_string()).is_ok());
        for bad in [
            serde_json::json!({"format": "other", "version": 1}),
            serde_json::json!({"format": EXPORT_FORMAT, "version": 3}),
            serde_json::json!({"format": EXPORT_FORMAT, "version": 1, "episodic": []}),
            serde_json::json!([1, 2]),
        ] {
            assert!(matches!(
                ImportDocument::parse(&bad.to_string()),
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
