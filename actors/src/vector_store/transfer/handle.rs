//! Export and import methods of [`VectorStoreHandle`] (spec: "Semantic
//! Memory → export/import"). An import goes through the same writer as
//! every other surface: validation, screening and audit per entry; lesson
//! rows go through the lesson path (its rules and dedup).

use serde_json::Value;

use super::export::ExportMemory;
use super::format::{ImportDocument, ImportEntry, ImportReport, MemoryExport};
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::handle::VectorStoreHandle;
use crate::vector_store::lessons::rules::{
    lesson_key, parse_lesson_text, LessonCategory, LessonWrite,
};
use crate::vector_store::semantic::types::{IfAbsentOutcome, KeyState, SemanticWrite};
use crate::vector_store::semantic::validate::LESSON_PREFIX;

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
            if entry.key.starts_with(LESSON_PREFIX) {
                match self.import_lesson(entry, category).await {
                    Ok(None) => report.imported += 1,
                    Ok(Some(reason)) => report.skip(label, reason),
                    Err(e) if e.is_rejection() => report.reject(label, e.to_string()),
                    Err(e) => return Err(e),
                }
                continue;
            }
            let write = SemanticWrite {
                key: entry.key,
                value: entry.value,
                confidence: entry.confidence,
                source: entry.source,
            };
            match self.set_semantic_if_absent(write).await {
                Ok(IfAbsentOutcome::Inserted(_)) => report.imported += 1,
                Ok(IfAbsentOutcome::Exists) => report.skip(label, "key already exists"),
                Err(e) if e.is_rejection() => report.reject(label, e.to_string()),
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }

    /// Restores one exported lesson row through the lesson path, so an
    /// import obeys the lesson rules (text only, 1,000 characters, dedup)
    /// like every other lesson writer. An active row with the same key, or
    /// an active lesson that already says it, is skipped (`Some(reason)`).
    async fn import_lesson(
        &self,
        entry: ImportEntry,
        category: Option<LessonCategory>,
    ) -> Result<Option<&'static str>, VectorStoreError> {
        let Value::String(text) = &entry.value else {
            return Err(VectorStoreError::InvalidLesson(
                "a lesson's value must be its text".into(),
            ));
        };
        let (rule, negative) = parse_lesson_text(text);
        // The lesson path keys a lesson by its rule; an export from an
        // older store may carry another key for the same lesson.
        for key in [entry.key.clone(), lesson_key(&rule)] {
            if self.key_state(&key).await? == KeyState::Active {
                return Ok(Some("key already exists"));
            }
        }
        let write = LessonWrite {
            rule,
            negative,
            category: category.unwrap_or_default(),
            source: entry.source,
            confidence: entry.confidence,
        };
        match self.write_lesson(write).await {
            Ok(_) => Ok(None),
            Err(VectorStoreError::DuplicateLesson { .. }) => Ok(Some("an active lesson says it")),
            Err(e) => Err(e),
        }
    }
}
