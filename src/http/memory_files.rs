//! The Markdown memory layers over HTTP (spec: "Memory", "Configuration",
//! "Migration"):
//!
//! - `GET /api/memory/search?q=&limit=` → `{"query", "results": [{file,
//!   section, snippet, score}]}`: full-text search of preferences.md,
//!   projects.md and history/ (Porter-stemmed; irregular forms such as
//!   "ran" match "running"). 422 `empty_query` / `query_too_long`.
//! - `GET /api/memory/settings` → `{history_idle_hours, history_max_days,
//!   heartbeat, migrated}` (`migrated`: the live `memory.migrated`); `PUT` with either or both fields applies them to the
//!   running heartbeat at once and persists them to config.json.
//!   422 `invalid_setting`, `empty_settings`.
//! - `POST /api/memory/migrate` → 202 with the status; the migration runs
//!   in the background (409 `migration_in_progress` while one runs).
//!   `GET /api/memory/migrate` → `{status, migrated,
//!   legacy_content_present}`; `migrated` turns true when a migration
//!   finishes, without a restart.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::extract::limit;
use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;
use kirocrew_actors::heartbeat::HistorySettings;

/// Registers the search, settings and migrate routes.
pub fn config_memory_files(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/memory/search").route(web::get().to(search)))
        .service(
            resource("/memory/settings")
                .route(web::get().to(get_settings))
                .route(web::put().to(put_settings)),
        )
        .service(
            resource("/memory/migrate")
                .route(web::get().to(migration_status))
                .route(web::post().to(migrate)),
        );
}

async fn search(
    state: web::Data<AppState>,
    q: web::Query<super::extract::SearchQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = q.into_inner();
    let limit = limit(q.limit, 20, 100)?;
    let results = state.layers.files.search(&q.q, limit).await?;
    Ok(HttpResponse::Ok().json(json!({"query": q.q, "results": results})))
}

async fn settings_body(state: &AppState) -> Result<serde_json::Value, ApiError> {
    let settings = state.layers.heartbeat.history_settings().await?;
    let heartbeat = state.layers.heartbeat.status().await?;
    Ok(json!({
        "history_idle_hours": settings.history_idle_hours,
        "history_max_days": settings.history_max_days,
        "heartbeat": heartbeat,
        "migrated": state.layers.migration.migrated(),
    }))
}

async fn get_settings(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(settings_body(&state).await?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsBody {
    history_idle_hours: Option<f64>,
    history_max_days: Option<u32>,
}

async fn put_settings(
    state: web::Data<AppState>,
    body: web::Json<SettingsBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    if body.history_idle_hours.is_none() && body.history_max_days.is_none() {
        return Err(ApiError::validation(
            "empty_settings",
            "give history_idle_hours and/or history_max_days",
        ));
    }
    let current = state.layers.heartbeat.history_settings().await?;
    let next = HistorySettings {
        history_idle_hours: body
            .history_idle_hours
            .unwrap_or(current.history_idle_hours),
        history_max_days: body.history_max_days.unwrap_or(current.history_max_days),
    };
    // Check everything before writing anything, so a bad value never
    // leaves config.json half-updated.
    next.validate()?;
    let home = state.embeddings.home().root().to_path_buf();
    let writes = [
        body.history_idle_hours
            .map(|h| ("memory.history_idle_hours", h.to_string())),
        body.history_max_days
            .map(|d| ("memory.history_max_days", d.to_string())),
    ];
    for (key, raw) in writes.into_iter().flatten() {
        crate::config::set_value(&home, key, &raw).map_err(ApiError::from_config)?;
    }
    state.layers.heartbeat.set_history_settings(next).await?;
    Ok(HttpResponse::Ok().json(settings_body(&state).await?))
}

async fn migrate(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let status = state.layers.migration.start("api")?;
    Ok(HttpResponse::Accepted().json(json!({ "status": status })))
}

async fn migration_status(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let migration = &state.layers.migration;
    Ok(HttpResponse::Ok().json(json!({
        "status": migration.status(),
        "migrated": migration.migrated(),
        "legacy_content_present": migration.legacy_present(),
    })))
}
