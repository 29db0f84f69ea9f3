//! The one lesson writer of the service shell (spec: "Lessons", the
//! `learn_add` and `learn_remove` tools): `POST /api/lessons` and the MCP
//! `learn_add` tool both call [`teach`], `DELETE /api/lessons/{key}` and
//! `learn_remove` both call [`remove_lesson`], so a lesson taught or
//! removed through either surface meets the same validation, injection
//! screen, dedup ladder and audit, and falls back to `lessons.jsonl` the
//! same way while memory.db is unavailable.

use kirocrew_actors::clock::{format_ts, system_clock};
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::vector_store::lessons::{LessonCategory, LessonOutcome, LessonWrite};
use kirocrew_actors::vector_store::{VectorStoreError, VectorStoreHandle};

use serde::Serialize;

use crate::error::ApiError;

/// Where a lesson landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredIn {
    /// The store (the normal path).
    MemoryDb,
    /// The fallback file, while memory.db could not be used.
    LessonsJsonl,
}

impl StoredIn {
    /// The name clients see (`stored_in`).
    pub fn as_str(self) -> &'static str {
        match self {
            StoredIn::MemoryDb => "memory.db",
            StoredIn::LessonsJsonl => "lessons.jsonl",
        }
    }
}

/// Writes a lesson through the store's `write_lesson`; when the store is
/// unavailable (stopped actor or a fatal database error) the same write
/// goes to `lessons.jsonl`, whose checks are the store's (the migration
/// carries it into memory.db later). Any other refusal is answered as is.
pub async fn add_lesson(
    store: &VectorStoreHandle,
    file: &LessonFile,
    write: LessonWrite,
) -> Result<(LessonOutcome, StoredIn), ApiError> {
    match store.write_lesson(write.clone()).await {
        Ok(outcome) => Ok((outcome, StoredIn::MemoryDb)),
        Err(e) if e.is_fatal() || matches!(e, VectorStoreError::Unavailable(_)) => {
            tracing::warn!(error = %e, "memory.db unavailable; lesson written to lessons.jsonl");
            let file = file.clone();
            let now = format_ts(system_clock().now());
            let outcome = actix_web::web::block(move || file.add(&write, &now))
                .await
                .map_err(|e| ApiError::internal("lessons_file_io", &e))??;
            Ok((outcome, StoredIn::LessonsJsonl))
        }
        Err(e) => Err(e.into()),
    }
}

/// What teaching a lesson did: the outcome (`{status, key, …}`) and where
/// it landed (`stored_in`), the answer of both surfaces.
#[derive(Debug, Clone, Serialize)]
pub struct Taught {
    /// Created, updated or replaced, with the key.
    #[serde(flatten)]
    pub outcome: LessonOutcome,
    /// `memory.db` or `lessons.jsonl`.
    pub stored_in: &'static str,
}

/// What the user taught, as `POST /api/lessons` and the MCP `learn_add`
/// tool take it: the category parsed and the write made through
/// [`add_lesson`].
pub async fn teach(
    store: &VectorStoreHandle,
    file: &LessonFile,
    rule: String,
    negative: Option<String>,
    category: Option<&str>,
) -> Result<Taught, ApiError> {
    let write = LessonWrite::user(rule)
        .with_negative(negative)
        .with_category(parse_category(category)?);
    let (outcome, stored_in) = add_lesson(store, file, write).await?;
    Ok(Taught {
        outcome,
        stored_in: stored_in.as_str(),
    })
}

/// Removes the lesson `key` as the user asked (`DELETE /api/lessons/{key}`,
/// the MCP `learn_remove` tool): from the store, or from `lessons.jsonl`
/// while memory.db is unavailable (where lessons taught meanwhile are).
/// An unknown key is 404 `not_found` either way.
pub async fn remove_lesson(
    store: &VectorStoreHandle,
    file: &LessonFile,
    key: &str,
) -> Result<StoredIn, ApiError> {
    match store.delete_lesson(key, "user_explicit").await {
        Ok(()) => Ok(StoredIn::MemoryDb),
        Err(e) if e.is_fatal() || matches!(e, VectorStoreError::Unavailable(_)) => {
            tracing::warn!(error = %e, "memory.db unavailable; lesson removed from lessons.jsonl");
            let file = file.clone();
            let key = key.to_owned();
            actix_web::web::block(move || file.remove(&key))
                .await
                .map_err(|e| ApiError::internal("lessons_file_io", &e))??;
            Ok(StoredIn::LessonsJsonl)
        }
        Err(e) => Err(e.into()),
    }
}

/// A lesson category by name (`tool`, `preference`, `knowledge`); none
/// given is the default category.
pub fn parse_category(name: Option<&str>) -> Result<LessonCategory, ApiError> {
    match name {
        None => Ok(LessonCategory::default()),
        Some(name) => LessonCategory::parse(name).ok_or_else(|| {
            ApiError::validation(
                "invalid_category",
                format!("category {name:?} is not one of tool, preference, knowledge"),
            )
        }),
    }
}
