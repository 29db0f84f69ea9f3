//! The quarantine lane over REST (issue 41): writes the screen flagged on
//! uncertain evidence, held for a person (the REST API is the operator's:
//! it needs the API token, which no agent surface hands out).
//!
//! - `GET /api/memory/quarantine?limit=` → `{"items": [{id, layer, key?,
//!   text, rule, category, source, created_at}], "total"}`, newest first.
//! - `POST /api/memory/quarantine/{id}/release` → 200 `{"released": {id,
//!   layer, key?, episode_id?}}`: the write is replayed through its writer
//!   with the verdict set aside (the ladder, dedup and audit still apply:
//!   409 `conflict_skip` / `duplicate_memory` leave the item held).
//! - `POST /api/memory/quarantine/{id}/drop` → 200 `{"dropped": id}`.
//!
//! 404 `quarantine_not_found` for an unknown id. Release and drop are
//! audited in memory.db and recorded as security events.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::extract::limit;
use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;

/// Who the audit trail names for a release or drop over REST.
const REVIEWER: &str = "dashboard";

/// Held items a search names beside its results.
const MARKED_IN_SEARCH: usize = 5;

/// Held items of `layer` that share words with a search's query, each
/// marked `"quarantined": true`: a search answers them apart from its
/// results (`"quarantined": [...]`), so a person sees the write exists
/// without it ever ranking as trusted memory.
pub(crate) async fn held_matching(
    state: &AppState,
    query: &str,
    layer: &str,
) -> Result<Vec<serde_json::Value>, ApiError> {
    let found = state.store.search_quarantine(query, 50).await?;
    let marked = found
        .into_iter()
        .filter(|item| item.layer == layer)
        .take(MARKED_IN_SEARCH)
        .filter_map(|item| {
            let mut value = serde_json::to_value(item).ok()?;
            value
                .as_object_mut()?
                .insert("quarantined".into(), true.into());
            Some(value)
        })
        .collect();
    Ok(marked)
}

/// Registers the quarantine routes.
pub fn config_quarantine(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/memory/quarantine").route(web::get().to(list)))
        .service(resource("/memory/quarantine/{id}/release").route(web::post().to(release)))
        .service(resource("/memory/quarantine/{id}/drop").route(web::post().to(drop_item)));
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    limit: Option<u32>,
}

async fn list(
    state: web::Data<AppState>,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let limit = limit(query.limit, 100, 10_000)?;
    let (items, total) = state.store.list_quarantine(limit).await?;
    Ok(HttpResponse::Ok().json(json!({ "items": items, "total": total })))
}

async fn release(state: web::Data<AppState>, id: web::Path<i64>) -> Result<HttpResponse, ApiError> {
    let released = state.store.release_quarantined(*id, REVIEWER).await?;
    Ok(HttpResponse::Ok().json(json!({ "released": released })))
}

async fn drop_item(
    state: web::Data<AppState>,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let item = state.store.drop_quarantined(*id, REVIEWER).await?;
    Ok(HttpResponse::Ok().json(json!({ "dropped": item.id })))
}
