//! The consolidator's routes (issue 14):
//!
//! - `GET /api/memory/consolidation` → `{sessions: [{session,
//!   messages_since, unconsolidated, idle_secs, last_run, last_error,
//!   running}], model: {backend, model, state, error, download}, enabled}`
//!   (`download`: the default chat model's download status, `null` when
//!   the daemon does not fetch it; `state` is `downloading` meanwhile);
//! - `POST /api/memory/consolidation/{session}/run` → 202 `{session,
//!   started}`: both paths of that session start now (a path already
//!   running is not started twice); the outcome shows in the status.

use actix_web::{web, HttpResponse};
use serde_json::json;

use super::{resource, AppState};
use crate::error::ApiError;

/// Registers the consolidation routes.
pub fn config_consolidation(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/memory/consolidation").route(web::get().to(status)))
        .service(resource("/memory/consolidation/{session}/run").route(web::post().to(run)));
}

async fn status(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let status = state.consolidator.status().await?;
    let model = state.chat_model.status().await;
    let mut body =
        serde_json::to_value(status).map_err(|e| ApiError::internal("serialization_failed", &e))?;
    let model =
        serde_json::to_value(model).map_err(|e| ApiError::internal("serialization_failed", &e))?;
    if let Some(map) = body.as_object_mut() {
        map.insert("model".into(), model);
        map.insert(
            "enabled".into(),
            state.settings.consolidation.enabled.into(),
        );
    }
    Ok(HttpResponse::Ok().json(body))
}

async fn run(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let session = path.into_inner();
    if !state.settings.consolidation.enabled {
        return Err(ApiError::Conflict {
            code: "consolidation_disabled",
            message: "consolidation.enabled is false".into(),
        });
    }
    let started = state.consolidator.run_now(&session).await?;
    Ok(HttpResponse::Accepted().json(json!({"session": session, "started": started})))
}
