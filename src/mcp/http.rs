//! `/mcp`: the MCP server over Streamable HTTP (rmcp's transport, mounted
//! in actix-web by `rmcp-actix-web`). It sits behind the same guard as
//! `/api`: the app-wide Host/Origin/content-type rules, and the bearer
//! token ([`crate::app::auth::require_token`]). rmcp's own DNS-rebinding
//! check is given the guard's host list, so the two can never disagree.
//!
//! The service (and its session manager) is built once, outside actix's
//! per-worker app factory, so a session started on one worker is found by
//! the others; its cancellation token ends every open session and SSE
//! stream when the daemon shuts down, so none holds the shutdown up.
//!
//! Sessions are bounded like the console's (issue 42: 6,000 `initialize`
//! calls held 450 MB): at most [`MAX_SESSIONS`] at once (a new one past
//! that is 409 `mcp_sessions_full`), and a session idle for
//! [`SESSION_IDLE`] is closed (rmcp's keep-alive), as is one that never
//! sends `initialize` within a minute.

use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::{from_fn, Next};
use actix_web::web;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp_actix_web::transport::StreamableHttpService;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::server::{factory, KirocrewMcp};
use crate::app::auth::require_token;
use crate::app::AppState;
use crate::error::ApiError;

/// MCP sessions open at once, at most.
pub const MAX_SESSIONS: usize = 256;

/// How long a session may stay silent before it is closed.
pub const SESSION_IDLE: Duration = Duration::from_secs(300);

/// The session table, for the cap's count.
#[derive(Clone)]
struct Sessions(Arc<LocalSessionManager>);

/// The `/mcp` service, shared by every worker.
#[derive(Clone)]
pub struct McpService {
    service: StreamableHttpService<KirocrewMcp, LocalSessionManager>,
    sessions: Sessions,
}

impl McpService {
    /// Builds the service over the daemon's state. `allowed_hosts` is the
    /// guard's list; `shutdown` is cancelled when the daemon stops.
    pub fn new(
        state: AppState,
        allowed_hosts: Vec<String>,
        max_body_bytes: usize,
        shutdown: CancellationToken,
    ) -> Self {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(SESSION_IDLE);
        let manager = Arc::new(manager);
        let service = StreamableHttpService::builder()
            .service_factory(factory(state))
            .session_manager(Arc::clone(&manager))
            .allowed_hosts(allowed_hosts)
            .max_request_body_bytes(max_body_bytes)
            .cancellation_token(shutdown)
            .build();
        Self {
            service,
            sessions: Sessions(manager),
        }
    }

    /// Registers `/mcp` (token-guarded, then the session cap).
    pub fn config(&self, cfg: &mut web::ServiceConfig) {
        cfg.app_data(web::Data::new(self.sessions.clone())).service(
            web::scope("/mcp")
                .wrap(from_fn(limit_sessions))
                .wrap(from_fn(require_token))
                .service(self.service.clone().scope()),
        );
    }
}

/// Refuses a request that would open a session (a POST without
/// `Mcp-Session-Id`) while [`MAX_SESSIONS`] are open.
async fn limit_sessions(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let opens = req.method() == Method::POST && !req.headers().contains_key("mcp-session-id");
    if opens {
        let open = match req.app_data::<web::Data<Sessions>>() {
            Some(sessions) => sessions.0.sessions.read().await.len(),
            None => 0,
        };
        if open >= MAX_SESSIONS {
            let e = ApiError::Conflict {
                code: "mcp_sessions_full",
                message: format!(
                    "{open} MCP sessions are open, the most allowed; close one (HTTP DELETE with its Mcp-Session-Id) or wait: a session idle for {} s is closed",
                    SESSION_IDLE.as_secs()
                ),
            };
            return Ok(req.error_response(e).map_into_right_body());
        }
    }
    Ok(next.call(req).await?.map_into_left_body())
}
