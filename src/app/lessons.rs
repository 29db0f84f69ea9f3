//! The one lesson writer of the service shell (spec: "Lessons", the
//! `learn_add` and `learn_remove` tools): `POST /api/lessons` and the MCP
//! `learn_add` tool both call [`teach`], `DELETE /api/lessons/{key}` and
//! `learn_remove` both call [`remove_lesson`], so a lesson taught or
//! removed through either surface meets the same validation, injection
//! screen, dedup ladder and audit, and falls back to `lessons.jsonl` the
//! same way while memory.db is unavailable.

use kirocrew_actors::clock::{format_ts, system_clock};
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::vector_store::lessons::{
    lesson_key, LessonCategory, LessonOutcome, LessonWrite,
};
use kirocrew_actors::vector_store::{VectorStoreError, VectorStoreHandle, AGENT, USER_EXPLICIT};

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

/// Whose word a lesson change is (issue 42): the user's surfaces (the REST
/// API, the CLI, the console) teach and remove as the user; the agent's
/// (MCP) as the agent, which ranks below the user and cannot remove what
/// the user taught.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authority {
    /// The person using the service.
    User,
    /// The agent, through its own tools.
    Agent,
}

impl Authority {
    /// The source label its writes and removals carry.
    pub fn source(self) -> &'static str {
        match self {
            Authority::User => USER_EXPLICIT,
            Authority::Agent => AGENT,
        }
    }
}

/// A lesson as `POST /api/lessons` (the user) and the MCP `learn_add` tool
/// (the agent) take it: the category parsed and the write made through
/// [`add_lesson`] with `who`'s authority.
pub async fn teach(
    store: &VectorStoreHandle,
    file: &LessonFile,
    who: Authority,
    rule: String,
    negative: Option<String>,
    category: Option<&str>,
) -> Result<Taught, ApiError> {
    let write = match who {
        Authority::User => LessonWrite::user(rule),
        Authority::Agent => LessonWrite::agent(rule),
    };
    let write = write
        .with_negative(negative)
        .with_category(parse_category(category)?);
    let (outcome, stored_in) = add_lesson(store, file, write).await?;
    Ok(Taught {
        outcome,
        stored_in: stored_in.as_str(),
    })
}

/// Removes the lesson `key` with `who`'s authority (`DELETE
/// /api/lessons/{key}` as the user, the MCP `learn_remove` tool as the
/// agent, which may remove only what was not the user's word): from the
/// store, or from `lessons.jsonl` while memory.db is unavailable (where
/// lessons taught meanwhile are). An unknown key is 404 `not_found` either
/// way; a user's lesson asked by the agent is 403 `user_owned`.
pub async fn remove_lesson(
    store: &VectorStoreHandle,
    file: &LessonFile,
    key: &str,
    who: Authority,
) -> Result<StoredIn, ApiError> {
    match store.delete_lesson(key, who.source()).await {
        Ok(()) => Ok(StoredIn::MemoryDb),
        Err(e) if e.is_fatal() || matches!(e, VectorStoreError::Unavailable(_)) => {
            tracing::warn!(error = %e, "memory.db unavailable; lesson removed from lessons.jsonl");
            let file = file.clone();
            let key = key.to_owned();
            actix_web::web::block(move || {
                if who == Authority::Agent {
                    let lessons = file.load()?;
                    let owner = lessons.iter().find(|l| lesson_key(&l.rule) == key);
                    if owner.is_some_and(|l| l.source == USER_EXPLICIT) {
                        return Ok(Err(VectorStoreError::UserOwned(key)));
                    }
                }
                file.remove(&key).map(Ok)
            })
            .await
            .map_err(|e| ApiError::internal("lessons_file_io", &e))???;
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
