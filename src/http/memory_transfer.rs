//! `GET /api/memory/export` (one JSON document) and `POST /api/memory/import`
//! (restores such a document through the normal write validation; answers
//! `{imported, skipped, rejected, details}`).
//!
//! Import has its own body limit (`server.import_limit_bytes`, 64 MiB by
//! default), since a full export is far larger than an ordinary request.

use actix_web::{web, HttpResponse};
use serde_json::value::RawValue;

use super::extract::json_config;
use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;

/// Registers export.
pub fn config_transfer(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/memory/export").route(web::get().to(export)));
}

/// Registers import with its own body limit.
pub fn config_import(cfg: &mut web::ServiceConfig, import_limit: usize) {
    cfg.service(
        resource("/memory/import")
            .app_data(json_config(import_limit))
            .route(web::post().to(import)),
    );
}

async fn export(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let doc = state.store.export().await?;
    Ok(HttpResponse::Ok()
        .insert_header((
            "Content-Disposition",
            "attachment; filename=\"kirocrew-memory-export.json\"",
        ))
        .json(doc))
}

/// The body is taken as raw JSON text (its syntax checked, nothing built):
/// the store decodes each entry on its own, so one entry nested past the
/// parser's depth limit is rejected alone instead of failing the document.
async fn import(
    state: web::Data<AppState>,
    body: web::Json<Box<RawValue>>,
) -> Result<HttpResponse, ApiError> {
    let report = state.store.import_json(body.get()).await?;
    Ok(HttpResponse::Ok().json(report))
}
