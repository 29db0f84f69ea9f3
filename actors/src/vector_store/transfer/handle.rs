//! Export and import methods of [`VectorStoreHandle`] (spec: "Semantic
//! Memory → export/import"). An import goes through the same writer as
//! every other surface: validation, screening and audit per entry.

use serde_json::Value;

use super::export::ExportMemory;
use super::format::{ImportDocument, ImportEntry, ImportReport, MemoryExport};
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::handle::VectorStoreHandle;
use crate::vector_store::lessons::messages::SetLessonCategory;
use crate::vector_store::lessons::rules::LessonCategory;
use crate::vector_store::semantic::types::{IfAbsentOutcome, SemanticWrite};

impl VectorStoreHandle {
    /// Every active semantic entry as an export document.
    pub async fn export(&self) -> Result<MemoryExport, VectorStoreError> {
        self.ask(ExportMemory).await
    }

    /// Restores an export document. Each entry is its own atomic write, so
    /// a large import never holds the store's mailbox for long. Entries that
    /// fail validation or screening are reported, not fatal; a database
    /// failure stops the import (entries already stored stay, and re-running
    /// the import skips them).
    pub async fn import(&self, document: Value) -> Result<ImportReport, VectorStoreError> {
        let document = ImportDocument::parse(document)?;
        let mut report = ImportReport::default();
        for (index, raw) in document.semantic.into_iter().enumerate() {
            let label = raw
                .get("key")
                .and_then(Value::as_str)
                .map_or_else(|| format!("#{index}"), str::to_owned);
            let entry: ImportEntry = match serde_json::from_value(raw) {
                Ok(entry) => entry,
                Err(e) => {
                    report.reject(label, format!("malformed entry: {e}"));
                    continue;
                }
            };
            let category = match document.lesson_categories.get(&entry.key) {
                None => None,
                Some(name) => match LessonCategory::parse(name) {
                    Some(c) => Some(c),
                    None => {
                        report.reject(label, format!("unknown lesson category {name:?}"));
                        continue;
                    }
                },
            };
            let key = entry.key.clone();
            let write = SemanticWrite {
                key: entry.key,
                value: entry.value,
                confidence: entry.confidence,
                source: entry.source,
            };
            match self.set_semantic_if_absent(write).await {
                Ok(IfAbsentOutcome::Inserted(_)) => {
                    report.imported += 1;
                    if let Some(category) = category {
                        self.ask(SetLessonCategory { key, category }).await?;
                    }
                }
                Ok(IfAbsentOutcome::Exists) => report.skip(label, "key already exists"),
                Err(e) if e.is_rejection() => report.reject(label, e.to_string()),
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }
}
