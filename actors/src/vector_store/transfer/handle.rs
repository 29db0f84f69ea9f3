//! Export and import methods of [`VectorStoreHandle`] (spec: "Semantic
//! Memory → export/import"). An import goes through the same writers as
//! every other surface: validation, screening and audit per entry; lesson
//! rows go through the lesson path (its rules and dedup).

use serde_json::value::RawValue;
use serde_json::Value;

use super::export::ExportMemory;
use super::format::{EpisodicExport, ImportDocument, ImportEntry, ImportReport, MemoryExport};
use crate::vector_store::episodic::EpisodicWrite;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::handle::VectorStoreHandle;
use crate::vector_store::lessons::rules::{
    lesson_key, parse_lesson_text, LessonCategory, LessonWrite,
};
use crate::vector_store::semantic::types::{IfAbsentOutcome, KeyState, SemanticWrite};
use crate::vector_store::semantic::validate::LESSON_PREFIX;
use crate::vector_store::space::run_backfill;

impl VectorStoreHandle {
    /// Every active entry (semantic rows, lessons, episodic fragments) as
    /// an export document.
    pub async fn export(&self) -> Result<MemoryExport, VectorStoreError> {
        self.ask(ExportMemory).await
    }

    /// Restores an export document (see [`Self::import_json`]).
    pub async fn import(&self, document: Value) -> Result<ImportReport, VectorStoreError> {
        self.import_json(&document.to_string()).await
    }

    /// Restores an export document given as JSON text. Each entry is its
    /// own atomic write through the ordinary writers, so a large import
    /// never holds the store's mailbox for long, and each is decoded on its
    /// own: a malformed, too-deep or refused entry is reported and skipped,
    /// never fatal for the rest. A database failure stops the import
    /// (entries already stored stay, and re-running it skips them).
    /// Episodic fragments keep their `created_at`; they are stored without
    /// a vector, and the embedding sweep starts afterwards, so imported
    /// rows get vectors without a restart.
    pub async fn import_json(&self, document: &str) -> Result<ImportReport, VectorStoreError> {
        let document = ImportDocument::parse(document)?;
        let mut report = ImportReport::default();
        for (index, raw) in document.semantic.iter().enumerate() {
            self.import_semantic(index, raw, &document, &mut report)
                .await?;
        }
        for (index, raw) in document.episodic.iter().flatten().enumerate() {
            self.import_episodic(index, raw, &mut report).await?;
        }
        if report.imported > 0 && self.embedder().is_some() {
            let store = self.clone();
            actix::spawn(async move {
                // A sweep already running picks the rows up or the next
                // one does; either way nothing is lost.
                if let Err(e) = run_backfill(&store, false).await {
                    tracing::debug!(error = %e, "post-import embedding sweep not run");
                }
            });
        }
        Ok(report)
    }

    async fn import_semantic(
        &self,
        index: usize,
        raw: &RawValue,
        document: &ImportDocument,
        report: &mut ImportReport,
    ) -> Result<(), VectorStoreError> {
        let raw: Value = match serde_json::from_str(raw.get()) {
            Ok(value) => value,
            Err(e) => {
                report.reject(format!("#{index}"), format!("malformed entry: {e}"));
                return Ok(());
            }
        };
        let label = raw
            .get("key")
            .and_then(Value::as_str)
            .map_or_else(|| format!("#{index}"), str::to_owned);
        let entry: ImportEntry = match serde_json::from_value(raw) {
            Ok(entry) => entry,
            Err(e) => {
                report.reject(label, format!("malformed entry: {e}"));
                return Ok(());
            }
        };
        let category = match document.lesson_categories.get(&entry.key) {
            None => None,
            Some(name) => match LessonCategory::parse(name) {
                Some(c) => Some(c),
                None => {
                    report.reject(label, format!("unknown lesson category {name:?}"));
                    return Ok(());
                }
            },
        };
        if entry.key.starts_with(LESSON_PREFIX) {
            match self.import_lesson(entry, category).await {
                Ok(None) => report.imported += 1,
                Ok(Some(reason)) => report.skip(label, reason),
                Err(e) if e.is_rejection() => report.refused(label, &e),
                Err(e) => return Err(e),
            }
            return Ok(());
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
            Err(e) if e.is_rejection() => report.refused(label, &e),
            Err(e) => return Err(e),
        }
        Ok(())
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

    async fn import_episodic(
        &self,
        index: usize,
        raw: &RawValue,
        report: &mut ImportReport,
    ) -> Result<(), VectorStoreError> {
        let label = format!("episodic #{index}");
        let entry: EpisodicExport = match serde_json::from_str(raw.get()) {
            Ok(entry) => entry,
            Err(e) => {
                report.reject(label, format!("malformed entry: {e}"));
                return Ok(());
            }
        };
        let created_at = match chrono::DateTime::parse_from_rfc3339(&entry.created_at) {
            Ok(t) => t.with_timezone(&chrono::Utc),
            Err(e) => {
                report.reject(label, format!("created_at is not RFC 3339: {e}"));
                return Ok(());
            }
        };
        let mut write = EpisodicWrite::new(entry.text, "import");
        write.tags = entry.tags;
        write.importance = entry.importance;
        write.created_at = Some(created_at);
        // Restore, never evict: a full store or a near-duplicate refuses
        // the entry (preservation mode); vectors come from the sweep.
        write.preserve = true;
        write.defer_embedding = true;
        match self.write_episodic(write).await {
            Ok(_) => report.imported += 1,
            Err(VectorStoreError::DuplicateEpisode { .. }) => report.skip(label, "already stored"),
            Err(e) if e.is_rejection() => report.refused(label, &e),
            Err(e) => return Err(e),
        }
        Ok(())
    }
}
