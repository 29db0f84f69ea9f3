//! Lesson SQL and the write transaction's steps. Lesson rows are semantic
//! rows, so the row itself is written by `semantic::write` (validation,
//! injection screening, the conflict ladder, the vector, the audit event);
//! this file adds the dedup ladder around it and the category beside it.

use sqlx::sqlite::SqlitePool;
use sqlx::SqliteConnection;

use super::rules::{
    dedup, lesson_key, lesson_text, parse_lesson_text, validate_lesson, Dedup, ExistingLesson,
    Lesson, LessonCategory, LessonOutcome, LessonWrite,
};
use crate::embedder::vector::cosine;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::screening::Screening;
use crate::vector_store::semantic::ladder::{decide, Incumbent, Verdict};
use crate::vector_store::semantic::types::{SemanticWrite, WriteOutcome};
use crate::vector_store::semantic::write;
use crate::vector_store::settings::StoreSettings;
use crate::vector_store::space::types::{stored_vector, CommitVector, SpaceInfo};
use crate::vector_store::text::value_text;

/// An active lesson row as stored.
#[derive(Debug, Clone)]
pub(crate) struct StoredLesson {
    /// The lesson.
    pub lesson: Lesson,
    /// Confidence of the row.
    pub confidence: f64,
    /// Its vector and space signature, if embedded.
    pub vector: Option<(String, Vec<f32>)>,
}

type Row = (
    String,
    String,
    String,
    f64,
    String,
    Option<String>,
    Option<Vec<u8>>,
    Option<String>,
);

fn from_row(row: Row) -> StoredLesson {
    let (key, value, source, confidence, created_at, category, blob, space) = row;
    let text = serde_json::from_str::<serde_json::Value>(&value)
        .map(|v| value_text(&v))
        .unwrap_or(value);
    let (rule, negative) = parse_lesson_text(&text);
    StoredLesson {
        lesson: Lesson {
            key,
            rule,
            negative,
            category: category
                .as_deref()
                .and_then(LessonCategory::parse)
                .unwrap_or_default(),
            source,
            created_at,
        },
        confidence,
        vector: stored_vector(space, blob.as_deref()),
    }
}

/// Active lessons, newest first.
pub(crate) async fn active_lessons(
    conn: &mut SqliteConnection,
) -> Result<Vec<StoredLesson>, VectorStoreError> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT s.key, s.value, s.source, s.confidence, s.created_at, m.category,
                s.embedding, s.embedding_space
         FROM semantic_memory s LEFT JOIN lesson_meta m ON m.key = s.key
         WHERE s.is_deleted = 0 AND substr(s.key, 1, 7) = 'lesson.'
         ORDER BY s.created_at DESC, s.key",
    )
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(from_row).collect())
}

/// Lesson rows without a vector: (key, value JSON), newest first.
pub(crate) async fn missing_vectors(
    pool: &SqlitePool,
    limit: u32,
) -> Result<Vec<(String, String)>, VectorStoreError> {
    Ok(sqlx::query_as(
        "SELECT key, value FROM semantic_memory
         WHERE is_deleted = 0 AND embedding IS NULL AND substr(key, 1, 7) = 'lesson.'
         ORDER BY updated_at DESC LIMIT ?",
    )
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?)
}

/// Records a lesson's category (insert or replace).
async fn set_category(
    pool: &SqlitePool,
    key: &str,
    category: LessonCategory,
) -> Result<(), VectorStoreError> {
    sqlx::query(
        "INSERT INTO lesson_meta (key, category) VALUES (?, ?)
         ON CONFLICT (key) DO UPDATE SET category = excluded.category",
    )
    .bind(key)
    .bind(category.as_str())
    .execute(pool)
    .await?;
    Ok(())
}

/// The write: dedup ladder → the row through `semantic::write` → the
/// category → the superseded lesson tombstoned (last, so a failure midway
/// leaves two lessons rather than none).
pub(crate) async fn write(
    pool: &SqlitePool,
    settings: &StoreSettings,
    space: &SpaceInfo,
    write: LessonWrite,
    vector: Option<CommitVector>,
    screening: &Screening,
    now: &str,
) -> Result<LessonOutcome, VectorStoreError> {
    let (rule, negative) = validate_lesson(&write).map_err(VectorStoreError::InvalidLesson)?;
    let key = lesson_key(&rule);
    let query = vector
        .as_ref()
        .and_then(|v| Some((v.vector.clone(), v.signature_in(space)?)));
    let existing = {
        let mut conn = pool.acquire().await?;
        active_lessons(&mut conn).await?
    };
    let view: Vec<ExistingLesson> = existing
        .iter()
        .map(|s| ExistingLesson {
            key: s.lesson.key.clone(),
            rule: s.lesson.rule.clone(),
            cosine: match (&query, &s.vector) {
                (Some((q, qs)), Some((vs, v))) if qs == vs => Some(cosine(q, v)),
                _ => None,
            },
        })
        .collect();
    let replaced = match dedup(&rule, &view, settings.similarity.lesson_duplicate) {
        Dedup::New => None,
        Dedup::Duplicate(existing) => {
            return Err(VectorStoreError::DuplicateLesson { key: existing })
        }
        Dedup::Replace(old) => {
            let incumbent = existing.iter().find(|s| s.lesson.key == old);
            if let Some(inc) = incumbent {
                let verdict = decide(
                    Some(Incumbent {
                        source: &inc.lesson.source,
                        confidence: inc.confidence,
                    }),
                    &write.source,
                    write.confidence,
                );
                if let Verdict::Skip(reason) = verdict {
                    return Err(VectorStoreError::ConflictSkipped { key: old, reason });
                }
            }
            Some(old)
        }
    };
    let row = SemanticWrite {
        key: key.clone(),
        value: serde_json::Value::String(lesson_text(&rule, negative.as_deref())),
        confidence: write.confidence,
        source: write.source.clone(),
    };
    let (outcome, _) = write::write(pool, settings, row, vector, space, screening, now).await?;
    set_category(pool, &key, write.category).await?;
    if let Some(old) = replaced {
        write::delete(pool, settings, &old, &write.source, now).await?;
        return Ok(LessonOutcome::Replaced { key, replaced: old });
    }
    Ok(match outcome {
        WriteOutcome::Created => LessonOutcome::Created { key },
        WriteOutcome::Updated => LessonOutcome::Updated { key },
    })
}
