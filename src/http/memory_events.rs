//! `GET /api/memory/events?limit=` → `{"events": [...]}`, newest first: the
//! audit trail (create, update, delete, conflict_skip, injection_blocked).

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::extract::limit;
use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;

/// Registers the audit route.
pub fn config_events(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/memory/events").route(web::get().to(list)));
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventsQuery {
    limit: Option<u32>,
}

async fn list(
    state: web::Data<AppState>,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let limit = limit(query.limit, 50, 10_000)?;
    let events = state.store.list_events(limit).await?;
    Ok(HttpResponse::Ok().json(json!({ "events": events })))
}
