//! `POST /api/sessions/{key}/import` `{turns: [{source_id, role, text,
//! ts?}]}` → `{added, duplicates, refused: [{source_id, reason}], session}`:
//! appends a transcript kept elsewhere to the session's transcript, each
//! `source_id` at most once, so a client may re-send a whole transcript
//! (Claude Code's `Stop`/`SessionEnd`/`PreCompact` hooks do) and only new
//! turns are added. The consolidator is told, as for a message.

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use super::extract::json_config;
use super::resource::resource;
use super::sessions::{check_key, note_turn};
use crate::app::AppState;
use crate::error::ApiError;
use kirocrew_actors::transcripts::ImportedTurn;

/// Most turns one import may carry (a long Claude Code session has a few
/// thousand; the body limit bounds the bytes).
pub const MAX_IMPORT_TURNS: usize = 20_000;

/// Registers the import route, with the import body limit
/// (`server.import_limit_bytes`: a transcript is larger than a message).
pub fn config_session_import(cfg: &mut web::ServiceConfig, import_limit: usize) {
    cfg.service(
        resource("/sessions/{key}/import")
            .app_data(json_config(import_limit))
            .route(web::post().to(import)),
    );
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportBody {
    turns: Vec<ImportedTurn>,
}

async fn import(
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<ImportBody>,
) -> Result<HttpResponse, ApiError> {
    let key = check_key(&path.into_inner())?;
    let turns = body.into_inner().turns;
    if turns.len() > MAX_IMPORT_TURNS {
        return Err(ApiError::validation(
            "too_many_turns",
            format!("an import carries at most {MAX_IMPORT_TURNS} turns"),
        ));
    }
    let outcome = state.transcripts.import(&key, turns).await?;
    if outcome.added > 0 {
        if let Some(meta) = outcome.session.clone() {
            note_turn(&state, meta).await;
        }
    }
    Ok(HttpResponse::Ok().json(outcome))
}
