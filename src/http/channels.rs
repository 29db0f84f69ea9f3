//! Channel history routes, for the chat gateway and the dashboard:
//!
//! - `POST /api/channels/{id}/messages` `{sender, text, authorized,
//!   mention?, ts?}` → 200 `{recorded, reason?, mode, entries}`. The
//!   gateway pushes *every* message it sees and states the facts; the
//!   service applies the channel's mode. `authorized` is required (no
//!   default: a gateway that forgets it records nothing rather than
//!   everything). `mention` (default false) means the bot acts on this
//!   message: an @mention, a reply in a thread it has a session for, any
//!   DM. `ts` is when it was sent: RFC 3339, or epoch seconds as a number
//!   or a string (Slack's `"1712345678.000100"`); default now.
//!
//!   A message that is not recorded is still a 200 with `recorded: false`
//!   and a stable `reason` (`unauthorized_sender`, `channel_off`,
//!   `not_addressed`, `expired`): the request was right, the channel just
//!   does not keep that message, and a gateway pushing a stranger's message
//!   in a busy channel must not see a stream of errors. An unauthorized
//!   sender's push is a `channel_denied` security event, recorded before
//!   the answer. Errors are for bad requests only: 422
//!   `invalid_channel_id` (e.g. `../../etc`), `invalid_message`,
//!   `control_characters`, `invalid_ts`.
//! - `GET /api/channels/{id}/context` → `{channel, mode, lines, text}`:
//!   the neutralized context lines (`context_for`), oldest first, and the
//!   same joined with newlines.
//! - `GET /api/channels/{id}/mode` → `{channel, mode, entries}`;
//!   `PUT /api/channels/{id}/mode` `{mode: mention|observe|off}` → the
//!   same after the switch. The mode survives a restart.

use actix_web::{web, HttpResponse};
use chrono::{DateTime, TimeZone, Utc};
use serde::Deserialize;
use serde_json::{json, Value};

use super::resource::resource;
use crate::app::AppState;
use crate::error::ApiError;
use kirocrew_actors::channel_history::{ChannelMode, IncomingMessage};

/// Registers the channel routes.
pub fn config_channels(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/channels/{id}/messages").route(web::post().to(push)))
        .service(resource("/channels/{id}/context").route(web::get().to(context)))
        .service(
            resource("/channels/{id}/mode")
                .route(web::get().to(get_mode))
                .route(web::put().to(put_mode)),
        );
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PushBody {
    sender: String,
    text: String,
    authorized: bool,
    #[serde(default)]
    mention: bool,
    #[serde(default)]
    ts: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModeBody {
    mode: ChannelMode,
}

async fn push(
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: web::Json<PushBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let sent_at = body.ts.as_ref().map(parse_ts).transpose()?;
    let message = IncomingMessage {
        sender: body.sender,
        text: body.text,
        authorized: body.authorized,
        mention: body.mention,
        sent_at,
    };
    let report = state.channels.push(&id, message).await?;
    Ok(HttpResponse::Ok().json(report))
}

async fn context(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let context = state.channels.context_for(&id).await?;
    let text = context.lines.join("\n");
    Ok(HttpResponse::Ok().json(json!({
        "channel": context.channel,
        "mode": context.mode,
        "lines": context.lines,
        "text": text,
    })))
}

async fn get_mode(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.channels.status(&id).await?))
}

async fn put_mode(
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: web::Json<ModeBody>,
) -> Result<HttpResponse, ApiError> {
    let status = state.channels.set_mode(&id, body.mode).await?;
    Ok(HttpResponse::Ok().json(status))
}

/// `ts` as RFC 3339, or epoch seconds (a number, or a numeric string as
/// Slack sends them).
fn parse_ts(value: &Value) -> Result<DateTime<Utc>, ApiError> {
    let invalid =
        || ApiError::validation("invalid_ts", "ts must be an RFC 3339 time or epoch seconds");
    let seconds = match value {
        Value::String(s) => {
            if let Ok(t) = DateTime::parse_from_rfc3339(s) {
                return Ok(t.with_timezone(&Utc));
            }
            s.trim().parse::<f64>().map_err(|_| invalid())?
        }
        Value::Number(n) => n.as_f64().ok_or_else(invalid)?,
        _ => return Err(invalid()),
    };
    // Up to the year 5138: anything later is a unit mistake (millis).
    if !(0.0..1e11).contains(&seconds) {
        return Err(invalid());
    }
    let micros = (seconds * 1e6).round() as i64;
    Utc.timestamp_micros(micros).single().ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_in_the_shapes_gateways_send() {
        let expected = Utc.with_ymd_and_hms(2024, 4, 5, 19, 21, 18).unwrap();
        for ts in [
            json!("2024-04-05T19:21:18Z"),
            json!("2024-04-05T21:21:18+02:00"),
            json!(1_712_344_878),
            json!("1712344878.000000"),
        ] {
            assert_eq!(parse_ts(&ts).unwrap(), expected, "{ts}");
        }
        for bad in [json!("yesterday"), json!(-1), json!(true), json!(1e300)] {
            assert!(parse_ts(&bad).is_err(), "{bad}");
        }
    }
}
