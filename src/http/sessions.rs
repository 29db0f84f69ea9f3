//! The gateway API (issue 13):
//!
//! - `POST /api/sessions/{key}/start` `{message?, model?, model_window?,
//!   groups?, resumed?, agent_prompt?, thread_history?, runtime_source?,
//!   ui_language?, user?, backend?}` → `{context, receipt}`: the session's
//!   first context.
//! - `POST /api/sessions/{key}/messages` `{role, text, channel_id?, sender?,
//!   authorized?, interactive?, first_message?, model?, model_window?,
//!   runtime_source?, user?, record?}` → for a user message `{context, message,
//!   auto_reply?, blocked, reason?, receipt, turns}`, otherwise `{ok,
//!   turns}`. Every accepted message is appended to the session transcript
//!   (`sessions/<key>.jsonl`) for the consolidator, which is told about it
//!   (every 30 messages it starts the prefs path in the background). A message whose sender
//!   the gateway says is not authorized is refused (403
//!   `sender_not_authorized`) and recorded as a security event: it never
//!   reaches the agent or the transcript. `record: false` builds the context
//!   without appending the turn: for a caller that imports the transcript
//!   itself later (the Claude Code adapter), so no turn is stored twice.
//!   Episodic memory goes with a session's first user message: `first_message`
//!   says which one that is; without it the daemon infers it (no user turn
//!   recorded for the key and no earlier prompt answered), and the receipt's
//!   `episodic` says what was decided, by whom and why.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::resource::resource;
use crate::app::AppState;
use crate::context::{
    build_message, build_session_context, ContextGroups, HistoryMessage, MessageRequest,
    SessionRequest,
};
use crate::error::ApiError;
use kirocrew_actors::security_log::SecurityEvent;
use kirocrew_actors::transcripts::{NewTurn, Role};

/// Most thread-history messages a caller may send.
const MAX_THREAD_HISTORY: usize = 200;

/// Registers the session routes.
pub fn config_sessions(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/sessions/{key}/start").route(web::post().to(start)))
        .service(resource("/sessions/{key}/messages").route(web::post().to(message)));
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StartBody {
    #[serde(default)]
    message: String,
    model: Option<String>,
    model_window: Option<u64>,
    groups: Option<Vec<String>>,
    #[serde(default)]
    resumed: bool,
    agent_prompt: Option<String>,
    thread_history: Option<Vec<HistoryMessage>>,
    runtime_source: Option<String>,
    ui_language: Option<String>,
    user: Option<String>,
    backend: Option<String>,
}

pub(super) fn check_key(key: &str) -> Result<String, ApiError> {
    let key = key.trim();
    if key.is_empty()
        || key.chars().count() > kirocrew_actors::transcripts::MAX_KEY_CHARS
        || key.chars().any(char::is_control)
    {
        return Err(ApiError::validation(
            "invalid_session_key",
            "a session key is 1-200 characters without control characters",
        ));
    }
    Ok(key.to_owned())
}

fn check_text(field: &'static str, text: &str, max: usize) -> Result<(), ApiError> {
    if text.chars().count() > max {
        return Err(ApiError::validation(
            "text_too_long",
            format!("{field} is longer than {max} characters"),
        ));
    }
    kirocrew_actors::control_chars::check_text(field, text)
        .map_err(|e| ApiError::validation("control_characters", e.to_string()))
}

async fn start(
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<StartBody>,
) -> Result<HttpResponse, ApiError> {
    let key = check_key(&path.into_inner())?;
    let body = body.into_inner();
    let groups = ContextGroups::from_names(body.groups.as_deref())
        .map_err(|e| ApiError::validation("invalid_groups", e.to_string()))?;
    check_text(
        "message",
        &body.message,
        kirocrew_actors::transcripts::MAX_TURN_CHARS,
    )?;
    if let Some(p) = &body.agent_prompt {
        check_text("agent_prompt", p, 200_000)?;
    }
    if let Some(h) = &body.thread_history {
        if h.len() > MAX_THREAD_HISTORY {
            return Err(ApiError::validation(
                "thread_history_too_long",
                format!("at most {MAX_THREAD_HISTORY} messages of thread history"),
            ));
        }
        for m in h {
            check_text(
                "thread_history.text",
                &m.text,
                kirocrew_actors::transcripts::MAX_TURN_CHARS,
            )?;
            if Role::parse(&m.role).is_none() {
                return Err(ApiError::validation(
                    "invalid_role",
                    "thread_history roles are user, assistant or system",
                ));
            }
        }
    }
    let request = SessionRequest {
        session_key: key,
        message: body.message,
        model: body.model,
        model_window: body.model_window,
        groups,
        resumed: body.resumed,
        agent_prompt: body.agent_prompt,
        thread_history: body.thread_history,
        runtime_source: body.runtime_source,
        ui_language: body.ui_language,
        user: body.user,
        backend: body.backend,
    };
    let built = build_session_context(&state.context_sources(), &request).await;
    Ok(HttpResponse::Ok().json(built))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageBody {
    role: String,
    text: String,
    channel_id: Option<String>,
    sender: Option<String>,
    authorized: Option<bool>,
    #[serde(default)]
    interactive: bool,
    first_message: Option<bool>,
    model: Option<String>,
    model_window: Option<u64>,
    runtime_source: Option<String>,
    user: Option<String>,
    record: Option<bool>,
}

async fn message(
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<MessageBody>,
) -> Result<HttpResponse, ApiError> {
    let key = check_key(&path.into_inner())?;
    let body = body.into_inner();
    let role = Role::parse(&body.role)
        .ok_or_else(|| ApiError::validation("invalid_role", "role is user, assistant or system"))?;
    if body.authorized == Some(false) {
        state.security_log.record_later(SecurityEvent::new(
            "session_denied",
            "http",
            "deny",
            json!({"session_key": key, "sender": body.sender, "channel_id": body.channel_id}),
        ));
        return Err(ApiError::Forbidden {
            code: "sender_not_authorized",
            message: "the gateway marked this sender as not authorized; nothing was recorded"
                .into(),
        });
    }
    let turn = NewTurn {
        session_key: key.clone(),
        role,
        text: body.text.clone(),
        channel_id: body.channel_id.clone(),
        sender: body.sender.clone(),
        user: body.user.clone(),
    };
    if role != Role::User {
        if body.record == Some(false) {
            return Ok(HttpResponse::Ok().json(json!({"ok": true, "turns": null})));
        }
        let meta = state.transcripts.append(turn).await?;
        let turns = meta.turns;
        note_turn(&state, meta).await;
        return Ok(HttpResponse::Ok().json(json!({"ok": true, "turns": turns})));
    }
    check_text(
        "text",
        &body.text,
        kirocrew_actors::transcripts::MAX_TURN_CHARS,
    )?;
    let request = MessageRequest {
        session_key: key,
        text: body.text,
        channel_id: body.channel_id,
        interactive: body.interactive,
        first_message: body.first_message,
        model: body.model,
        model_window: body.model_window,
        runtime_source: body.runtime_source,
        actor: "http".into(),
    };
    let built = build_message(&state.context_sources(), &request).await;
    // A blocked message never reaches the agent, so it is not part of the
    // conversation either; everything else is recorded as the user wrote it.
    let turns = if built.blocked || body.record == Some(false) {
        None
    } else {
        let meta = state.transcripts.append(turn).await?;
        let turns = meta.turns;
        note_turn(&state, meta).await;
        Some(turns)
    };
    let mut out = serde_json::to_value(&built).map_err(|e| ApiError::internal("encode", &e))?;
    if let Some(fields) = out.as_object_mut() {
        fields.insert("turns".into(), json!(turns));
    }
    Ok(HttpResponse::Ok().json(out))
}

/// Tells the consolidator a turn was recorded (it starts the prefs path
/// every 30 messages, in the background). Consolidation never fails a
/// message: a consolidator error is logged and the message goes on.
pub(super) async fn note_turn(state: &AppState, meta: kirocrew_actors::transcripts::SessionMeta) {
    if !state.settings.consolidation.enabled {
        return;
    }
    if let Err(e) = state.consolidator.note_turn(meta).await {
        tracing::warn!(error = %e, "consolidator not told about a turn");
    }
}
