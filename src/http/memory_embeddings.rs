//! The embedding endpoints (spec: "Dashboard Endpoints", "Dashboard Enable
//! Flow"):
//!
//! - `GET /api/memory/embedding-status`: model, download and re-embed state
//! - `POST /api/memory/enable-embeddings`: non-blocking; kicks (or adopts)
//!   the download when the model is absent, loads it when present. While a
//!   download runs or waits to retry it is adopted: 202 with the current
//!   embedding status plus `download` (`adopted`, or `retry_started` when
//!   the wait was cut short and the next attempt launched now). 409
//!   `setup_in_progress` only while a model apply or re-embed runs
//! - `POST /api/memory/embedding-model` `{path, validate_only?}`: validate
//!   only, or apply with rollback; 409 `reembed_in_progress` /
//!   `env_override_active`
//! - `POST /api/memory/disable-embeddings`: 410 (embeddings are always on)

use std::path::Path;

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::resource::resource;
use crate::app::AppState;
use crate::embedder_wiring::{validate_model_file, ApplyError};
use crate::error::ApiError;
use kirocrew_actors::download::DOWNLOAD_ATTEMPTS_INTERACTIVE;

/// Registers the embedding routes.
pub fn config_embeddings(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/memory/embedding-status").route(web::get().to(status)))
        .service(resource("/memory/enable-embeddings").route(web::post().to(enable)))
        .service(resource("/memory/embedding-model").route(web::post().to(set_model)))
        .service(resource("/memory/disable-embeddings").route(web::post().to(disable)));
}

async fn status(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(state.embeddings.status().await)
}

async fn enable(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let runtime = &state.embeddings;
    let status = runtime.status().await;
    if status.setup_step == "downloading" {
        // The boot task already waits on this download; adopting it is all
        // Enable has to do (and a retry wait ends now).
        let outcome = runtime
            .download
            .start_download(DOWNLOAD_ATTEMPTS_INTERACTIVE)
            .await
            .map_err(|e| ApiError::unavailable("download_unavailable", &e))?;
        let mut body = serde_json::to_value(runtime.status().await)
            .map_err(|e| ApiError::internal("encode", &e))?;
        if let Some(fields) = body.as_object_mut() {
            fields.insert("ok".into(), true.into());
            fields.insert("status".into(), "downloading".into());
            fields.insert("download".into(), json!(outcome));
        }
        return Ok(HttpResponse::Accepted().json(body));
    }
    if status.reembed.is_busy() {
        return Err(ApiError::Conflict {
            code: "setup_in_progress",
            message: "an embedding setup is already running; poll embedding-status".into(),
        });
    }
    let path = runtime.serving_path().await;
    if path.exists() {
        // Present: make sure it is loaded (and its space recorded).
        let runtime = runtime.clone();
        actix_rt::spawn(async move { runtime.activate().await });
        let ready = status.model_state == "ready";
        return Ok(HttpResponse::Ok().json(json!({
            "ok": true,
            "status": if ready { "ready" } else { "loading" }
        })));
    }
    if path != runtime.default_path() {
        return Err(ApiError::validation(
            "model_missing",
            format!(
                "the configured model file {} does not exist",
                path.display()
            ),
        ));
    }
    runtime
        .download
        .start_download(DOWNLOAD_ATTEMPTS_INTERACTIVE)
        .await
        .map_err(|e| ApiError::unavailable("download_unavailable", &e))?;
    let runtime = runtime.clone();
    actix_rt::spawn(async move { runtime.boot().await });
    Ok(HttpResponse::Ok().json(json!({"ok": true, "status": "downloading"})))
}

/// The body of `POST /api/memory/embedding-model`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelBody {
    path: String,
    #[serde(default)]
    validate_only: bool,
}

async fn set_model(
    state: web::Data<AppState>,
    body: web::Json<ModelBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let runtime = &state.embeddings;
    // A path from the caller: the sensitive-path policy decides (as written,
    // `~` expanded, and as resolved) before the file is looked at. Empty
    // means the default model.
    let asked = body.path.trim();
    let path = if asked.is_empty() {
        String::new()
    } else {
        let reader = state.safe_reader.for_actor("http");
        reader.check_path(Path::new(asked)).await?;
        // `~` is the user's home, as everywhere a path is read; any other
        // path is used (and echoed) as given.
        if asked.starts_with('~') {
            let home = reader.policy().as_written(Path::new(asked));
            home.display().to_string()
        } else {
            asked.to_owned()
        }
    };
    if body.validate_only {
        let path = if path.is_empty() {
            runtime.default_path().to_path_buf()
        } else {
            path.into()
        };
        let check = validate_model_file(&path)?;
        return Ok(
            HttpResponse::Ok().json(json!({"ok": true, "validate_only": true, "model": check}))
        );
    }
    let check = runtime.apply_model(&path).await?;
    Ok(HttpResponse::Ok().json(json!({"ok": true, "model": check, "reembed": "running"})))
}

async fn disable() -> Result<HttpResponse, ApiError> {
    Err(ApiError::Gone(
        "embeddings are always on; this endpoint is kept only for older dashboards".into(),
    ))
}

impl From<ApplyError> for ApiError {
    fn from(err: ApplyError) -> Self {
        let message = err.to_string();
        match err {
            ApplyError::EnvOverride => ApiError::Conflict {
                code: "env_override_active",
                message,
            },
            ApplyError::Busy => ApiError::Conflict {
                code: "reembed_in_progress",
                message,
            },
            ApplyError::InvalidModel(_) => ApiError::validation("invalid_model", message),
            ApplyError::RolledBack(_) => ApiError::validation("model_rejected", message),
            ApplyError::Store(e) => e.into(),
        }
    }
}
