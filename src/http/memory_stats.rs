//! `GET /api/memory/stats`: row counts, database size and retrieval mode,
//! plus `legacy_content_present` (legacy Markdown memory or lessons.jsonl
//! exists; spec: `legacy_memory_present()`).

use actix_web::{web, HttpResponse};

use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;

/// Registers the stats route.
pub fn config_stats(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/memory/stats").route(web::get().to(stats)));
}

async fn stats(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let stats = state.store.stats().await?;
    let mut body =
        serde_json::to_value(stats).map_err(|e| ApiError::internal("serialization_failed", &e))?;
    if let Some(map) = body.as_object_mut() {
        map.insert(
            "legacy_content_present".into(),
            state.layers.migration.legacy_present().into(),
        );
    }
    Ok(HttpResponse::Ok().json(body))
}
