//! Lessons over HTTP (spec: "Lessons", the learn_add tool and dashboard):
//!
//! - `GET /api/lessons` → `{"lessons": [{key, rule, negative, category, source, created_at}]}`
//! - `POST /api/lessons` `{rule, negative?, category?}` → 201 `{"status":
//!   "created"|"updated"|"replaced", "key", "replaced"?, "stored_in":
//!   "memory.db"|"lessons.jsonl"}`; 422 `invalid_lesson` / `invalid_category`
//!   / `injection_detected` / `control_characters`; 409 `duplicate_lesson`
//!   (an active lesson already says it) or `conflict_skip` (the lesson it
//!   would replace outranks the writer). While memory.db is unavailable
//!   (the store answers `Unavailable` or a fatal database error) the lesson
//!   goes to lessons.jsonl through the same checks, as `kirocrew learn add`
//!   does, and `stored_in` says so; the migration carries it into the store
//!   later (`kirocrew memory migrate`).
//! - `DELETE /api/lessons/{key}` → `{"deleted": key}`; 404 `not_found`
//! - `GET /api/lessons/context?q=&budget=` → `{"block"}`: the `[Learned
//!   corrections]` block a prompt would get for that request

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::resource::resource;
use crate::app::lessons::Authority;
use crate::app::AppState;
use crate::error::ApiError;
use kirocrew_actors::lessons_file::LessonFileError;

/// Default character budget of the context preview (the reference's
/// lessons cap at its default window).
const DEFAULT_BUDGET: usize = 37_290;

/// Registers the lesson routes.
pub fn config_lessons(cfg: &mut web::ServiceConfig) {
    cfg.service(
        resource("/lessons")
            .route(web::get().to(list))
            .route(web::post().to(create)),
    )
    .service(resource("/lessons/context").route(web::get().to(context)))
    .service(resource("/lessons/{key}").route(web::delete().to(delete)));
}

async fn list(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let lessons = state.store.list_lessons().await?;
    Ok(HttpResponse::Ok().json(json!({ "lessons": lessons })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    rule: String,
    negative: Option<String>,
    category: Option<String>,
}

async fn create(
    state: web::Data<AppState>,
    body: web::Json<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let answer = crate::app::lessons::teach(
        &state.store,
        &state.lessons_file,
        Authority::User,
        body.rule,
        body.negative,
        body.category.as_deref(),
    )
    .await?;
    Ok(HttpResponse::Created().json(answer))
}

async fn delete(
    state: web::Data<AppState>,
    key: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let key = key.into_inner();
    let from = crate::app::lessons::remove_lesson(
        &state.store,
        &state.lessons_file,
        &key,
        Authority::User,
    )
    .await?;
    Ok(HttpResponse::Ok().json(json!({ "deleted": key, "stored_in": from.as_str() })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextQuery {
    #[serde(default)]
    q: String,
    budget: Option<usize>,
}

async fn context(
    state: web::Data<AppState>,
    q: web::Query<ContextQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = q.into_inner();
    let block = state
        .store
        .lessons_context(&q.q, q.budget.unwrap_or(DEFAULT_BUDGET))
        .await?;
    Ok(HttpResponse::Ok().json(json!({ "block": block })))
}

/// The lessons.jsonl fallback's errors, with the store's codes for the same
/// refusals (a client cannot tell where the lesson would have gone).
impl From<LessonFileError> for ApiError {
    fn from(err: LessonFileError) -> Self {
        let message = err.to_string();
        match err {
            LessonFileError::Invalid(_) => ApiError::validation("invalid_lesson", message),
            LessonFileError::ControlCharacter(_) => {
                ApiError::validation("control_characters", message)
            }
            LessonFileError::InjectionDetected { .. } => {
                ApiError::validation("injection_detected", message)
            }
            LessonFileError::Duplicate { .. } => ApiError::Conflict {
                code: "duplicate_lesson",
                message,
            },
            LessonFileError::NotFound(_) => ApiError::NotFound {
                code: "not_found",
                message,
            },
            LessonFileError::Io { .. } => ApiError::internal("lessons_file_io", &err),
        }
    }
}
