//! `GET /healthz` (the process answers) and `GET /readyz` (every actor is
//! started and the database answers). No auth: systemd and probes call these.

use actix_web::{web, HttpResponse};
use serde_json::json;

use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;

/// Registers the probes.
pub fn config_health(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/healthz").route(web::get().to(healthz)))
        .service(resource("/readyz").route(web::get().to(readyz)));
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    state
        .store
        .check_health()
        .await
        .map_err(|e| ApiError::unavailable("not_ready", &e))?;
    Ok(HttpResponse::Ok().json(json!({"status": "ready", "checks": {"memory_store": "ok"}})))
}
