//! `GET /api/memory/stats`: row counts, database size and retrieval mode.

use actix_web::{web, HttpResponse};

use super::{resource, AppState};
use crate::error::ApiError;

/// Registers the stats route.
pub fn config_stats(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/memory/stats").route(web::get().to(stats)));
}

async fn stats(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.store.stats().await?))
}
