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

use actix_web::middleware::from_fn;
use actix_web::web;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp_actix_web::transport::StreamableHttpService;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::server::{factory, KirocrewMcp};
use crate::app::auth::require_token;
use crate::app::AppState;

/// The `/mcp` service, shared by every worker.
#[derive(Clone)]
pub struct McpService {
    service: StreamableHttpService<KirocrewMcp, LocalSessionManager>,
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
        let service = StreamableHttpService::builder()
            .service_factory(factory(state))
            .session_manager(Arc::new(LocalSessionManager::default()))
            .allowed_hosts(allowed_hosts)
            .max_request_body_bytes(max_body_bytes)
            .cancellation_token(shutdown)
            .build();
        Self { service }
    }

    /// Registers `/mcp` (token-guarded).
    pub fn config(&self, cfg: &mut web::ServiceConfig) {
        cfg.service(
            web::scope("/mcp")
                .wrap(from_fn(require_token))
                .service(self.service.clone().scope()),
        );
    }
}
