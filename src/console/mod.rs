//! The operator console: `GET /api/console`, a websocket that runs the
//! CLI's own commands and streams live events (design card: the operator
//! shell is one of kirocrew's three users beside the gateway; spec
//! "Dashboard"; README "Operator console" documents the protocol).
//!
//! - [`protocol`]: the versioned wire format (pure).
//! - [`argv`]: a request's `{cmd, args}` → the CLI's parsed command (pure,
//!   through the CLI's own clap parser).
//! - [`commands`]: runs that command with the same functions as the CLI,
//!   on the daemon's handles.
//! - [`session`]: one connection's loop (auth, keepalive, idle timeout,
//!   subscriptions with bounded queues, close on shutdown).
//! - [`streams`]: a session's subscriptions.
//! - the session limit, shutdown bell and progress sampler are the app
//!   layer's ([`crate::app::console_hub`]).
//! - [`client`]: the client side, for `kirocrew console` and the bench.
//!
//! Auth happens here, not in the `/api` scope's token middleware, because
//! a browser cannot set headers on a websocket: the token comes in the
//! `Authorization` header or as the first frame, and nothing is answered
//! before it. The Host rule applies as everywhere; the Origin, when sent,
//! must name the daemon (cross-site websocket hijacking).

pub mod argv;
pub mod client;
pub mod commands;
pub mod protocol;
pub mod session;
pub mod streams;

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;

use crate::app::auth::AuthPolicy;
use crate::app::AppState;
use crate::error::ApiError;

/// `GET /api/console`: the websocket upgrade. The server mounts it before
/// the `/api` scope, so that scope's token middleware does not answer for
/// it (auth happens here, see above).
pub async fn upgrade(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
    policy: web::Data<AuthPolicy>,
) -> Result<HttpResponse, ApiError> {
    let peer = req.peer_addr();
    let authenticated = match policy.check_console_upgrade(req.headers(), peer) {
        Ok(authenticated) => authenticated,
        Err(e) => {
            // A refused console is an auth failure like any other.
            let ip = peer.map(|p| p.ip().to_string());
            state.auth_failures.note(
                "console",
                ip.as_deref(),
                json!({"code": e.code(), "path": req.path(), "peer": ip}),
            );
            return Err(e);
        }
    };
    // Only an authenticated connection takes a session place; one that
    // will send its token in its first frame waits in the hub's waiting
    // room (which a flood of silent sockets cannot fill for good).
    let slot = if authenticated {
        let admitted = state.console.try_enter().ok_or_else(|| ApiError::Conflict {
            code: "console_busy",
            message: format!(
                "{} console sessions are open, the most server.console_max_sessions allows; close one and retry",
                state.console.max_sessions()
            ),
        })?;
        session::Slot::Admitted(admitted)
    } else {
        session::Slot::Waiting(state.console.enter_pending())
    };
    let (response, ws, stream) = actix_ws::handle(&req, body).map_err(|e| {
        ApiError::bad_request(
            "not_a_websocket",
            format!("GET /api/console upgrades to a websocket: {e}"),
        )
    })?;
    let stream = stream
        .max_frame_size(protocol::MAX_TRANSPORT_FRAME_BYTES)
        .aggregate_continuations()
        .max_continuation_size(protocol::MAX_TRANSPORT_FRAME_BYTES);
    let session = session::Session::new(
        ws,
        state.clone(),
        policy.clone(),
        peer.map(|p| p.ip().to_string()),
        slot,
    );
    actix_rt::spawn(session.run(stream));
    Ok(response)
}
