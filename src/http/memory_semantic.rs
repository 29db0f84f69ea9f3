//! Semantic memory over HTTP (spec: "Dashboard Endpoints").
//!
//! - `GET /api/memory/semantic?q=&limit=&prefix=` → `{"entries": [...]}`
//!   (newest first; with `q`, only matching entries, best first, each with a
//!   `score`, and `"quarantined": [...]`: held writes sharing words with `q`,
//!   marked, never ranked as results)
//! - `PUT /api/memory/semantic` `{key, value, confidence?, source?}` → 200
//!   `{"outcome": "created"|"updated", "entry": {...}}`, 409 `conflict_skip`
//!   when the stored row wins the conflict ladder, 422 on validation or
//!   a blocked injection, 202 `{"outcome": "quarantined", "id", "rule",
//!   "category"}` when the screen held it for review
//! - `GET /api/memory/semantic/{key}` → the entry
//! - `DELETE /api/memory/semantic/{key}` → 200 `{"deleted": key}` (tombstone)
//! - `GET /api/memory/context-preview?q=&cap=` → the `[Semantic Memory]` and
//!   `[Episodic Memory]` blocks with their receipt (every candidate's fate)

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};

use super::extract::limit;
use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;
use kirocrew_actors::vector_store::SemanticWrite;

/// Registers the semantic routes.
pub fn config_semantic(cfg: &mut web::ServiceConfig) {
    cfg.service(
        resource("/memory/semantic")
            .route(web::get().to(list))
            .route(web::put().to(put)),
    )
    .service(
        resource("/memory/semantic/{key}")
            .route(web::get().to(get_one))
            .route(web::delete().to(delete)),
    )
    .service(resource("/memory/context-preview").route(web::get().to(context_preview)));
}

/// Listing and search parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    q: Option<String>,
    limit: Option<u32>,
    prefix: Option<String>,
}

async fn list(
    state: web::Data<AppState>,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let limit = limit(query.limit, 100, 10_000)?;
    match query.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        Some(q) => {
            let mut found = state.store.search_semantic(q, limit as usize).await?;
            if let Some(prefix) = &query.prefix {
                found.retain(|s| s.entry.key.starts_with(prefix.as_str()));
            }
            let held = super::memory_quarantine::held_matching(&state, q, "semantic").await?;
            Ok(HttpResponse::Ok().json(json!({ "entries": found, "quarantined": held })))
        }
        None => {
            let entries = state.store.list_semantic(query.prefix, limit).await?;
            Ok(HttpResponse::Ok().json(json!({ "entries": entries })))
        }
    }
}

/// The body of `PUT /api/memory/semantic`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PutBody {
    key: String,
    value: Value,
    confidence: Option<f64>,
    source: Option<String>,
}

async fn put(
    state: web::Data<AppState>,
    body: web::Json<PutBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let write = SemanticWrite::stated(body.key, body.value, body.confidence, body.source)?;
    let (outcome, entry) = state.store.write_semantic(write).await?;
    Ok(HttpResponse::Ok().json(json!({ "outcome": outcome, "entry": entry })))
}

async fn get_one(
    state: web::Data<AppState>,
    key: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let entry = state.store.get_semantic(&key).await?;
    Ok(HttpResponse::Ok().json(entry))
}

async fn delete(
    state: web::Data<AppState>,
    key: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    state.store.delete_semantic(&key, "dashboard").await?;
    Ok(HttpResponse::Ok().json(json!({ "deleted": key.into_inner() })))
}

/// Preview parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PreviewQuery {
    q: Option<String>,
    cap: Option<usize>,
}

async fn context_preview(
    state: web::Data<AppState>,
    query: web::Query<PreviewQuery>,
) -> Result<HttpResponse, ApiError> {
    let default_cap = state.settings.memory.semantic_context_cap;
    let cap = query.cap.unwrap_or(default_cap).min(default_cap);
    let q = query.q.clone().unwrap_or_default();
    let deadline = std::time::Duration::from_millis(state.settings.context.embed_deadline_ms);
    let embedding = state.store.embed_query_within(&q, deadline).await;
    let semantic = state.store.semantic_block(&q, cap, &embedding).await?;
    let (episodic, retrieval) = state.store.episodic_block(&q, cap, &embedding).await?;
    Ok(HttpResponse::Ok().json(json!({
        "semantic": semantic.text,
        "episodic": episodic.text,
        "episodic_retrieval": retrieval,
        "cap": cap,
        "receipt": {
            "query_embedding": embedding.status,
            "sections": [
                {"name": "semantic", "chars": semantic.text.chars().count(), "cap": cap, "items": semantic.items},
                {"name": "episodic", "chars": episodic.text.chars().count(), "cap": cap.min(kirocrew_actors::vector_store::episodic::CONTEXT_CAP), "items": episodic.items},
            ],
        },
    })))
}
