//! Building and running the daemon: open the data home, start the actors,
//! bind the listener, serve until told to stop, then shut down in order.
//!
//! [`Application::build`] does everything that can fail before serving, so
//! a bad config, an unreadable database or a taken port is reported at once
//! with a clear error and exit code. Integration tests use the same entry
//! point on port 0 with a temporary home (`tests/api/helpers.rs`).
//!
//! Shutdown order (SIGTERM/SIGINT or the test's trigger): tell systemd we
//! are stopping → close the operator console's sessions (a close frame
//! with the reason) and cancel the MCP sessions and streams (open websockets
//! and SSE streams would otherwise hold the graceful stop until its
//! timeout) → stop accepting and let in-flight requests finish (up to
//! `server.shutdown_timeout_secs`) → stop the background boot (embedding
//! and chat model) and migration tasks → stop the heartbeat and close the
//! memory index → flush the skill usage ledger and stop the skills actor →
//! close the embedder and the chat model → close the memory store (WAL
//! checkpoint, connections closed) → remove daemon.json.

use std::future::Future;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use anyhow::Context;
use tokio_util::sync::CancellationToken;

use crate::app::auth::{guard_request, require_token, AuthPolicy};
use crate::app::AppState;
use crate::config::Settings;
use crate::home::DataHome;
use crate::http::body_timeout::{limit_body_time, BodyTimeout};
use crate::http::extract::{json_config, path_config, query_config};
use crate::http::request_id::assign_request_id;
use crate::http::{config_api, dashboard, health, linger, not_found};
use crate::lifecycle;
use crate::mcp::McpService;

/// A built, bound, not yet running daemon.
pub struct Application {
    server: Server,
    address: SocketAddr,
    state: AppState,
    token: String,
    /// Ends every MCP session and stream at shutdown.
    mcp_shutdown: CancellationToken,
}

impl Application {
    /// Opens the home, binds the listener (a taken port fails before any
    /// actor starts), starts the actors ([`AppState::start`]) and puts the
    /// HTTP server in front of them. Must run inside an actix `System`.
    pub async fn build(home: DataHome, settings: Settings) -> anyhow::Result<Self> {
        home.ensure()?;
        home.tighten_permissions()?;
        let token = home.load_or_create_token()?;
        let settings = Arc::new(settings);
        let ip: IpAddr = settings.server.bind.parse().with_context(|| {
            format!(
                "server.bind {:?} is not an IP address",
                settings.server.bind
            )
        })?;
        let listener = TcpListener::bind((ip, settings.server.port))
            .with_context(|| format!("binding {ip}:{}", settings.server.port))?;
        let address = listener.local_addr()?;
        let state = AppState::start(&home, Arc::clone(&settings)).await?;
        let policy = web::Data::new(AuthPolicy::new(
            token.clone(),
            address.ip(),
            address.port(),
            &settings.server.allowed_hosts,
            settings.auth.loopback_trusted,
        ));
        let mcp_shutdown = CancellationToken::new();
        let mcp = McpService::new(
            state.clone(),
            policy.allowed_hosts().to_vec(),
            settings.server.body_limit_bytes,
            mcp_shutdown.clone(),
        );
        let server = serve(
            listener,
            web::Data::new(state.clone()),
            policy,
            mcp,
            &settings,
        )?;
        Ok(Self {
            server,
            address,
            state,
            token,
            mcp_shutdown,
        })
    }

    /// The bound address (the real port when 0 was asked for).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The API bearer token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Serves until `shutdown` resolves (or the server fails), then shuts
    /// down in order. Returns once the store is closed.
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        let handle = self.server.handle();
        let mut serving = actix_rt::spawn(self.server);
        let home = &self.state.home;
        if let Err(e) = lifecycle::write_daemon_record(home, self.address) {
            tracing::warn!(error = %e, "could not write daemon.json");
        }
        tracing::info!(address = %self.address, "kirocrew listening on http://{}", self.address);
        lifecycle::notify_ready(self.address);
        let watchdog = lifecycle::spawn_watchdog(self.state.store.clone());
        // Readiness never waits for the models or the migration.
        let background = self.state.spawn_background();

        let server_result = tokio::select! {
            () = shutdown => {
                tracing::info!("shutdown requested; finishing in-flight requests");
                lifecycle::notify_stopping();
                // Open MCP streams and console sessions would otherwise hold
                // the graceful stop until its timeout.
                self.mcp_shutdown.cancel();
                self.state.console.shutdown();
                handle.stop(true).await;
                serving.await
            }
            result = &mut serving => result,
        };
        if let Some(watchdog) = watchdog {
            watchdog.abort();
        }
        background.abort();
        // Also when the server ended on its own.
        let closed = self.state.close().await;
        lifecycle::remove_daemon_record(home);
        server_result
            .context("server task failed")?
            .context("server error")?;
        closed.context("closing the memory store")?;
        tracing::info!("kirocrew stopped cleanly");
        Ok(())
    }
}

/// The HTTP server on `listener`: the guard, the API under `/api` (token
/// required), the dashboard, health, the console upgrade and MCP.
fn serve(
    listener: TcpListener,
    state: web::Data<AppState>,
    policy: web::Data<AuthPolicy>,
    mcp: McpService,
    settings: &Arc<Settings>,
) -> std::io::Result<Server> {
    let body_timeout = web::Data::new(BodyTimeout(Duration::from_secs(
        settings.server.body_timeout_secs,
    )));
    let app_settings = Arc::clone(settings);
    Ok(HttpServer::new(move || {
        let settings = Arc::clone(&app_settings);
        let mcp = mcp.clone();
        // The last `wrap` runs first: request id (so every log line and
        // error names it) → access log → guard → body deadline.
        App::new()
            .wrap(from_fn(limit_body_time))
            .wrap(from_fn(guard_request))
            .wrap(from_fn(crate::telemetry::access_log))
            .wrap(from_fn(assign_request_id))
            .app_data(state.clone())
            .app_data(policy.clone())
            .app_data(body_timeout.clone())
            .app_data(json_config(settings.server.body_limit_bytes))
            .app_data(query_config())
            .app_data(path_config())
            .configure(health::config_health)
            .configure(dashboard::config_dashboard)
            .service(
                crate::http::resource("/api/console").route(web::get().to(crate::console::upgrade)),
            )
            .service(
                web::scope("/api")
                    .wrap(from_fn(require_token))
                    .configure(|cfg| config_api(cfg, &settings))
                    .default_service(web::to(not_found)),
            )
            .configure(|cfg| mcp.config(cfg))
            .default_service(web::to(not_found))
    })
    .on_connect(linger::on_connect)
    // Also how long a connection whose body was left unread keeps
    // reading before it closes (actix-http's own lingering close).
    .client_disconnect_timeout(Duration::from_secs(1))
    .workers(settings.server.workers)
    .shutdown_timeout(settings.server.shutdown_timeout_secs)
    .disable_signals()
    .listen(listener)?
    .run())
}

/// Resolves on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot install signal handlers; stop the daemon with SIGKILL");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received"),
        _ = int.recv() => tracing::info!("SIGINT received"),
    }
}
