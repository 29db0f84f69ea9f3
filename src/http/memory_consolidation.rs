//! The consolidator's routes (issue 14):
//!
//! - `GET /api/memory/consolidation` → `{sessions: [{session,
//!   messages_since, unconsolidated, idle_secs, last_run, last_error,
//!   running}], model: {backend, model, state, error, download}, enabled}`
//!   (`download`: the default chat model's download status, `null` when
//!   the daemon does not fetch it; `state` is `downloading` meanwhile);
//! - `POST /api/memory/consolidation/{session}/run` → 202 `{session,
//!   started, waiting_for_model}`: both paths of that session start now (a
//!   path already running is not started twice); a model still loading is
//!   waited for (`consolidation.forced_run_wait_secs`; the session's
//!   `waiting_for_model` in the status); the outcome shows in the status.
//!   A model that cannot answer soon is refused at once rather than
//!   accepted and dropped: 409 `model_loading` while the default model
//!   downloads, 409 `model_unavailable` when its file is missing or it
//!   failed to load.

use actix_web::{web, HttpResponse};
use serde_json::json;

use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;
use kirocrew_actors::consolidator::ConsolidatorError;

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
    let model = state.chat_model.status().await;
    let waiting = match forced_run_gate(&model.info) {
        Ok(waiting) => waiting,
        Err(refusal) => {
            // An unknown session is 404 whatever the model's state.
            let known = state.transcripts.sessions().await?;
            if !known.iter().any(|m| m.key == session) {
                return Err(ConsolidatorError::UnknownSession(session).into());
            }
            return Err(refusal);
        }
    };
    let started = state.consolidator.run_now(&session).await?;
    Ok(HttpResponse::Accepted().json(json!({
        "session": session,
        "started": started,
        "waiting_for_model": waiting && !started.is_empty(),
    })))
}

/// Whether a forced run may start with the model in this state (pure):
/// `Ok(true)` when it will wait for a load in progress, `Ok(false)` when
/// the model is ready, a 409 when it cannot answer within a wait.
fn forced_run_gate(model: &kirocrew_actors::llm::ModelInfo) -> Result<bool, ApiError> {
    let detail = model
        .error
        .as_deref()
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    match model.state.as_str() {
        "ready" | "configured" => Ok(false),
        "loading" | "idle" => Ok(true),
        "downloading" => Err(ApiError::Conflict {
            code: "model_loading",
            message: format!(
                "the chat model {} is still downloading{detail}; run again once the status shows it ready",
                model.model
            ),
        }),
        _ => Err(ApiError::Conflict {
            code: "model_unavailable",
            message: format!(
                "the chat model {} is {}{detail}; configure consolidation.chat_model_path or an endpoint (consolidation.llm_base_url)",
                model.model, model.state
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kirocrew_actors::llm::ModelInfo;

    fn model(state: &str) -> ModelInfo {
        ModelInfo {
            backend: "llama_cpp",
            model: "chat.gguf".into(),
            state: state.into(),
            error: None,
        }
    }

    #[test]
    fn a_forced_run_waits_for_a_load_and_refuses_what_cannot_answer() {
        assert!(!forced_run_gate(&model("ready")).unwrap());
        assert!(!forced_run_gate(&model("configured")).unwrap());
        assert!(forced_run_gate(&model("loading")).unwrap());
        assert!(forced_run_gate(&model("idle")).unwrap());
        for (state, code) in [
            ("downloading", "model_loading"),
            ("missing", "model_unavailable"),
            ("failed", "model_unavailable"),
        ] {
            match forced_run_gate(&model(state)) {
                Err(ApiError::Conflict { code: c, .. }) => assert_eq!(c, code, "{state}"),
                other => panic!("{state}: {other:?}"),
            }
        }
    }
}
