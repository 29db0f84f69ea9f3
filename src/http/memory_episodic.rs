//! Episodic memory over HTTP (spec: "Dashboard Endpoints"):
//!
//! - `GET /api/memory/episodic?offset=&limit=` → `{"entries", "total", "offset", "limit"}`
//! - `GET /api/memory/episodic/search?q=&limit=&mode=&mmr=&gate=` → `{"results":
//!   [{id, text, tags, importance, created_at, score, cosine, decay, passed_gate,
//!   speaker_mismatch, parts?}]}` (the full ranked set with each result's
//!   score parts: in hybrid mode `parts` names the fused relevance, episode
//!   context, session score, speaker boost and the speaker gate's margin), and
//!   `"quarantined": [...]`: held writes sharing words with `q`, marked,
//!   never ranked as results
//! - `POST /api/memory/episodic` `{text, tags?, importance?}` → 201 `{"id"}`;
//!   422 `invalid_text` / `injection_detected`, 409 `duplicate_memory`, 202
//!   `{"outcome": "quarantined", "id", "rule", "category"}` when the screen
//!   held it for review
//! - `DELETE /api/memory/episodic/{id}` → tombstone
//! - `POST /api/memory/episodic/{id}/restore` → 200 `{"restored": id}`: clears
//!   a tombstone (delete, retirement, merge); 404 `not_found` when the id is
//!   not a tombstoned row, 409 when an active row holds the same text or the
//!   store is full

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::extract::limit;
use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;
use kirocrew_actors::vector_store::episodic::{EpisodicQuery, EpisodicWrite, SearchMode};

/// Registers the episodic routes.
pub fn config_episodic(cfg: &mut web::ServiceConfig) {
    cfg.service(
        resource("/memory/episodic")
            .route(web::get().to(list))
            .route(web::post().to(create)),
    )
    .service(resource("/memory/episodic/search").route(web::get().to(search)))
    .service(resource("/memory/episodic/{id}").route(web::delete().to(delete)))
    .service(resource("/memory/episodic/{id}/restore").route(web::post().to(restore)));
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PageQuery {
    offset: Option<u32>,
    limit: Option<u32>,
}

async fn list(
    state: web::Data<AppState>,
    q: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let limit = limit(q.limit, 50, 1000)?;
    let offset = q.offset.unwrap_or(0);
    let (entries, total) = state.store.list_episodic(offset, limit).await?;
    Ok(HttpResponse::Ok()
        .json(json!({"entries": entries, "total": total, "offset": offset, "limit": limit})))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchQuery {
    q: String,
    limit: Option<u32>,
    mode: Option<SearchMode>,
    mmr: Option<bool>,
    gate: Option<bool>,
}

async fn search(
    state: web::Data<AppState>,
    q: web::Query<SearchQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = q.into_inner();
    let mut query = EpisodicQuery::new(q.q, limit(q.limit, 20, 1000)? as usize);
    query.mode = q.mode.unwrap_or_default();
    query.mmr = q.mmr.unwrap_or(true);
    query.relevance_filter = q.gate.unwrap_or(false);
    let held = super::memory_quarantine::held_matching(&state, &query.text, "episodic").await?;
    let results = state.store.search_episodic(query).await?;
    Ok(HttpResponse::Ok().json(json!({ "results": results, "quarantined": held })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    text: String,
    #[serde(default)]
    tags: Vec<String>,
    importance: Option<f64>,
}

async fn create(
    state: web::Data<AppState>,
    body: web::Json<CreateBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let importance = body.importance.unwrap_or(0.5);
    if !importance.is_finite() {
        return Err(ApiError::validation(
            "invalid_importance",
            "importance must be a finite number",
        ));
    }
    let mut write = EpisodicWrite::new(body.text, "dashboard");
    write.tags = body.tags;
    write.importance = importance;
    let id = state.store.write_episodic(write).await?;
    Ok(HttpResponse::Created().json(json!({ "id": id })))
}

async fn restore(state: web::Data<AppState>, id: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    state.store.restore_episodic(id, "dashboard").await?;
    Ok(HttpResponse::Ok().json(json!({ "restored": id })))
}

async fn delete(state: web::Data<AppState>, id: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    state.store.delete_episodic(id, "dashboard").await?;
    Ok(HttpResponse::Ok().json(json!({ "deleted": id })))
}
