//! Skills over HTTP (spec: "Dashboard endpoints", "Context Budget
//! endpoint", "Setting it from the dashboard", "Direct reads"):
//!
//! - `GET /api/skills` → `{"skills": [SkillInfo]}` (name, description,
//!   source, always, triggers, inject_on_trigger, size_bytes, deliveries —
//!   null when untracked —, owned, dir, path, parsed_with, error)
//! - `POST /api/skills` `{name, content?, description?}` → 201 SkillInfo;
//!   the name is sanitized (lowercase, hyphens, slashes); without `content`
//!   a template is written. 409 `skill_exists`, 422 `invalid_skill_name` /
//!   `invalid_skill_content`, 403 `not_owned` (a symlink leading out).
//! - `GET /api/skills/{name}` → SkillInfo + `content`; 404 `skill_not_found`
//! - `PUT /api/skills/{name}` `{content}` overwrites SKILL.md; or the
//!   structured fields `{name?, description?, always?, triggers?,
//!   inject_on_trigger?, body?}` rebuild the frontmatter and keep every
//!   other key's lines byte for byte. 403 `not_owned` for project and extra
//!   skills.
//! - `DELETE /api/skills/{name}` → `{"deleted": name}`; 409
//!   `has_nested_skills`
//! - `GET /api/skills/-/search?q=&limit=` → `{"hits": [...]}` (records
//!   nothing)
//! - `GET /api/skills/-/budget` → `{window_days, total_chars, rows}`
//! - `POST /api/skills/-/inject-on-trigger` `{name, inject}` → the outcome;
//!   refusals are 404 `skill_not_found`, 403 `not_owned`, 422
//!   `no_frontmatter`. Every outcome is a `skill_toggle` security event.
//! - `POST /api/skills/-/tool-events` one event `{tool_call_id, tool_name,
//!   kind?, raw_input?, command?, status?}` or `{"events": [...]}` (at most
//!   100) → `{"results": [{tool_call_id, candidates, credited, duplicate}]}`
//!
//! Every write (POST, PUT) is screened (issue 42): the description and body
//! are read by the injection rules. A flagged skill is held in the
//! quarantine, not written: 202 `{"outcome": "quarantined", "id", "rule",
//! "category", "message"}` (release it with `POST
//! /api/memory/quarantine/{id}/release`); a blocked one is 422
//! `injection_detected`. Both are security events.
//!
//! `-` is never a skill name, so `/api/skills/-/…` cannot shadow a skill.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};

use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;
use kirocrew_actors::skills::store::template;
use kirocrew_actors::skills::{SkillEdit, ToggleRefusal, ToolEvent};

/// Most tool events in one request.
const MAX_EVENTS: usize = 100;

/// Who the skills' security events name for a REST write.
const WRITER: &str = "http";

/// Registers the skills routes (the `-/…` ones before `{name:.+}`).
pub fn config_skills(cfg: &mut web::ServiceConfig) {
    cfg.service(
        resource("/skills")
            .route(web::get().to(list))
            .route(web::post().to(create)),
    )
    .service(resource("/skills/-/search").route(web::get().to(search)))
    .service(resource("/skills/-/budget").route(web::get().to(budget)))
    .service(resource("/skills/-/inject-on-trigger").route(web::post().to(toggle)))
    .service(resource("/skills/-/tool-events").route(web::post().to(tool_events)))
    .service(
        resource("/skills/{name:.+}")
            .route(web::get().to(show))
            .route(web::put().to(update))
            .route(web::delete().to(delete)),
    );
}

async fn list(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let skills = state.skills.list().await?;
    Ok(HttpResponse::Ok().json(json!({ "skills": skills })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    name: String,
    content: Option<String>,
    description: Option<String>,
}

async fn create(
    state: web::Data<AppState>,
    body: web::Json<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let content = match body.content {
        Some(c) => c,
        None => template(&body.name, body.description.as_deref()),
    };
    let info = state.skills.create(&body.name, &content, WRITER).await?;
    Ok(HttpResponse::Created().json(info))
}

async fn show(
    state: web::Data<AppState>,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.skills.get(&name).await?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateBody {
    content: Option<String>,
    name: Option<String>,
    description: Option<String>,
    always: Option<bool>,
    triggers: Option<Vec<String>>,
    inject_on_trigger: Option<bool>,
    body: Option<String>,
}

async fn update(
    state: web::Data<AppState>,
    name: web::Path<String>,
    body: web::Json<UpdateBody>,
) -> Result<HttpResponse, ApiError> {
    let f = body.into_inner();
    let structured = f.name.is_some()
        || f.description.is_some()
        || f.always.is_some()
        || f.triggers.is_some()
        || f.inject_on_trigger.is_some()
        || f.body.is_some();
    let info = match (f.content, structured) {
        (Some(_), true) => {
            return Err(ApiError::validation(
                "invalid_body",
                "send either content or structured fields, not both",
            ))
        }
        (Some(content), false) => state.skills.update(&name, &content, WRITER).await?,
        (None, true) => {
            let edit = SkillEdit {
                name: f.name,
                description: f.description,
                always: f.always,
                triggers: f.triggers,
                inject_on_trigger: f.inject_on_trigger,
                body: f.body,
            };
            state.skills.edit(&name, edit, WRITER).await?
        }
        (None, false) => {
            return Err(ApiError::validation(
                "invalid_body",
                "send content, or at least one of name, description, always, triggers, inject_on_trigger, body",
            ))
        }
    };
    Ok(HttpResponse::Ok().json(info))
}

async fn delete(
    state: web::Data<AppState>,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    state.skills.delete(&name).await?;
    Ok(HttpResponse::Ok().json(json!({ "deleted": name })))
}

async fn search(
    state: web::Data<AppState>,
    q: web::Query<super::extract::SearchQuery>,
) -> Result<HttpResponse, ApiError> {
    let limit = super::extract::limit(q.limit, 10, 50)?;
    let hits = state.skills.search(&q.q, limit as usize).await?;
    Ok(HttpResponse::Ok().json(json!({ "hits": hits })))
}

async fn budget(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.skills.budget().await?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToggleBody {
    name: String,
    inject: bool,
}

async fn toggle(
    state: web::Data<AppState>,
    body: web::Json<ToggleBody>,
) -> Result<HttpResponse, ApiError> {
    let outcome = state
        .skills
        .set_inject_on_trigger(&body.name, body.inject, "http")
        .await?;
    let message = |what: &str| {
        format!(
            "inject_on_trigger not changed for {:?}: {what}",
            outcome.name
        )
    };
    match outcome.refused {
        None => Ok(HttpResponse::Ok().json(outcome)),
        Some(ToggleRefusal::NotFound) => Err(ApiError::NotFound {
            code: "skill_not_found",
            message: message("no such skill"),
        }),
        Some(ToggleRefusal::NotOwned) => Err(ApiError::Forbidden {
            code: "not_owned",
            message: message("its SKILL.md is outside the skills directory kirocrew owns"),
        }),
        Some(ToggleRefusal::NoFrontmatter) => Err(ApiError::validation(
            "no_frontmatter",
            message("the SKILL.md has no frontmatter block to edit"),
        )),
    }
}

async fn tool_events(
    state: web::Data<AppState>,
    body: web::Json<Value>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let raw: Vec<Value> = match body.get("events") {
        Some(Value::Array(items)) if body.as_object().is_some_and(|o| o.len() == 1) => {
            items.clone()
        }
        Some(_) => {
            return Err(ApiError::validation(
                "invalid_body",
                "events must be the only field, and an array",
            ))
        }
        None => vec![body],
    };
    if raw.len() > MAX_EVENTS {
        return Err(ApiError::validation(
            "too_many_events",
            format!("at most {MAX_EVENTS} events per request, got {}", raw.len()),
        ));
    }
    let events: Vec<ToolEvent> = raw
        .into_iter()
        .map(serde_json::from_value)
        .collect::<Result<_, _>>()
        .map_err(|e| ApiError::validation("invalid_body", format!("invalid tool event: {e}")))?;
    let mut results = Vec::with_capacity(events.len());
    for event in events {
        results.push(state.skills.observe_tool_event(event).await?);
    }
    Ok(HttpResponse::Ok().json(json!({ "results": results })))
}
