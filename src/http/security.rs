//! `GET /api/security/events?limit=&category=` → `{"events": [...]}`,
//! newest first: the security event log (hook decisions, denied reads,
//! injection blocks, skill toggles, auth failures) for the dashboard.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::extract::limit;
use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;

/// Longest category name accepted as a filter.
const MAX_CATEGORY_CHARS: usize = 64;

/// Registers the security routes.
pub fn config_security(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/security/events").route(web::get().to(events)));
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventsQuery {
    limit: Option<u32>,
    category: Option<String>,
}

async fn events(
    state: web::Data<AppState>,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let limit = limit(query.limit, 50, 10_000)?;
    let category = query.category.as_deref().map(str::trim);
    if let Some(c) = category {
        let valid = !c.is_empty()
            && c.chars().count() <= MAX_CATEGORY_CHARS
            && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
        if !valid {
            return Err(ApiError::validation(
                "invalid_category",
                "category must be 1-64 letters, digits or underscores",
            ));
        }
    }
    let events = state.security_log.recent(limit as usize, category).await?;
    Ok(HttpResponse::Ok().json(json!({ "events": events })))
}
