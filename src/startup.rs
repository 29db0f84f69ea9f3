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
use crate::config::Settings;
use crate::embedder_wiring::EmbeddingRuntime;
use crate::home::DataHome;
use crate::http::body_timeout::{limit_body_time, BodyTimeout};
use crate::http::extract::{json_config, path_config, query_config};
use crate::http::request_id::assign_request_id;
use crate::http::{config_api, dashboard, health, linger, not_found, AppState};
use crate::lifecycle;
use crate::mcp::McpService;
use crate::memory_layers::MemoryLayers;
use kirocrew_actors::channel_history::ChannelHistoryHandle;
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::hooks::{HookRunnerConfig, HookRunnerHandle, RulesLoader};
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::security_log::SecurityLogHandle;
use kirocrew_actors::sensitive_paths::SafeReader;
use kirocrew_actors::skills::SkillLedgerHandle;
use kirocrew_actors::transcripts::{TranscriptsConfig, TranscriptsHandle};
use kirocrew_actors::vector_store::VectorStoreHandle;

/// How often the daemon looks for rows still without a vector.
const CATCH_UP_EVERY: Duration = Duration::from_secs(5);

/// Script hooks running at once, at most; more wait their turn.
const MAX_CONCURRENT_SCRIPTS: usize = 8;

/// Re-reads the `hooks` section of the effective configuration (defaults ←
/// config.json ← environment), for the hook runner's reload on change.
fn rules_loader(home: std::path::PathBuf) -> RulesLoader {
    Arc::new(move || {
        crate::config::load(&home, std::env::vars())
            .map(|c| c.settings.hooks)
            .map_err(|e| e.to_string())
    })
}

/// A built, bound, not yet running daemon.
pub struct Application {
    server: Server,
    address: SocketAddr,
    store: VectorStoreHandle,
    embeddings: EmbeddingRuntime,
    chat_model: crate::consolidator_wiring::ChatModel,
    layers: MemoryLayers,
    skills: SkillLedgerHandle,
    console: crate::app::console_hub::ConsoleHub,
    home: DataHome,
    token: String,
    /// Ends every MCP session and stream at shutdown.
    mcp_shutdown: CancellationToken,
}

impl Application {
    /// Opens the home and the database, starts the actors and binds the
    /// listener. Must run inside an actix `System`.
    pub async fn build(home: DataHome, settings: Settings) -> anyhow::Result<Self> {
        home.ensure()?;
        home.tighten_permissions()?;
        // Off the runtime: the build is CPU work and nothing waits for it.
        std::thread::spawn(kirocrew_actors::security::warm);
        let token = home.load_or_create_token()?;
        let settings = Arc::new(settings);
        let store =
            VectorStoreHandle::open(home.memory_db(), settings.store_settings(), system_clock())
                .await
                .with_context(|| format!("opening {}", home.memory_db().display()))?;

        let ip: IpAddr = settings.server.bind.parse().with_context(|| {
            format!(
                "server.bind {:?} is not an IP address",
                settings.server.bind
            )
        })?;
        let listener = TcpListener::bind((ip, settings.server.port))
            .with_context(|| format!("binding {ip}:{}", settings.server.port))?;
        let address = listener.local_addr()?;

        let policy = web::Data::new(AuthPolicy::new(
            token.clone(),
            address.ip(),
            address.port(),
            &settings.server.allowed_hosts,
            settings.auth.loopback_trusted,
        ));
        let embeddings = EmbeddingRuntime::start(&home, &settings, store);
        let store = embeddings.store.clone();
        let layers = MemoryLayers::start(&home, &settings, store.clone(), system_clock());
        let security_log =
            SecurityLogHandle::start(crate::app::builders::security_log_config(&home, &settings));
        // Every memory writer's injection blocks become security events too.
        store
            .attach_security_log(security_log.clone())
            .await
            .context("attaching the security log to the store")?;
        let skills = SkillLedgerHandle::start(crate::skills_wiring::skills_config(
            &home,
            &settings,
            system_clock(),
            Some(security_log.clone()),
        ));
        let hooks = HookRunnerHandle::start(
            HookRunnerConfig {
                config_file: home.root().join("config.json"),
                hooks_file: home.hooks_file(),
                load_rules: rules_loader(home.root().to_path_buf()),
                max_concurrent_scripts: MAX_CONCURRENT_SCRIPTS,
                security_log: Some(security_log.clone()),
            },
            settings.hooks.clone(),
        );
        let sensitive_paths = home.sensitive_paths();
        let channels = ChannelHistoryHandle::start(crate::app::builders::channel_history_config(
            &home,
            &settings,
            security_log.clone(),
            sensitive_paths.clone(),
        ))
        .with_context(|| {
            format!(
                "starting the channel history in {}",
                home.history_dir().display()
            )
        })?;
        let safe_reader = SafeReader::new(sensitive_paths, security_log.clone(), "daemon");
        let transcripts = TranscriptsHandle::start(TranscriptsConfig {
            dir: home.sessions_dir(),
            clock: system_clock(),
        });
        let chat_model = crate::consolidator_wiring::ChatModel::start(&settings, &home);
        let (consolidator, idle_checks) = crate::consolidator_wiring::start(
            &settings,
            &home,
            crate::consolidator_wiring::ConsolidatorParts {
                transcripts: transcripts.clone(),
                store: store.clone(),
                files: layers.files.clone(),
                migrated: layers.migration.migrated_flag(),
                clock: system_clock(),
            },
            chat_model.llm(),
        );
        if settings.consolidation.enabled {
            layers
                .heartbeat
                .subscribe_idle(idle_checks)
                .await
                .context("subscribing the consolidator to the heartbeat")?;
        }
        let console = crate::app::console_hub::ConsoleHub::new(
            settings.server.console_max_sessions,
            Duration::from_secs(settings.server.console_idle_secs),
        );
        console.spawn_progress_sampler(embeddings.clone(), layers.migration.clone());
        let state = web::Data::new(AppState {
            store: store.clone(),
            settings: Arc::clone(&settings),
            embeddings: embeddings.clone(),
            layers: layers.clone(),
            lessons_file: LessonFile::new(home.lessons_file())
                .with_security_log(security_log.clone()),
            security_log,
            skills: skills.clone(),
            hooks,
            home: home.clone(),
            channels,
            safe_reader,
            transcripts,
            consolidator,
            thread_compressor: crate::context::ThreadCompressor::new(
                chat_model.llm(),
                Duration::from_millis(settings.context.history_compress_deadline_ms),
            ),
            chat_model: chat_model.clone(),
            console: console.clone(),
        });
        let mcp_shutdown = CancellationToken::new();
        let mcp = McpService::new(
            state.get_ref().clone(),
            policy.allowed_hosts().to_vec(),
            settings.server.body_limit_bytes,
            mcp_shutdown.clone(),
        );
        let body_timeout = web::Data::new(BodyTimeout(Duration::from_secs(
            settings.server.body_timeout_secs,
        )));
        let app_settings = Arc::clone(&settings);
        let server = HttpServer::new(move || {
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
                    crate::http::resource("/api/console")
                        .route(web::get().to(crate::console::upgrade)),
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
        .run();

        Ok(Self {
            server,
            address,
            store,
            embeddings,
            chat_model,
            layers,
            skills,
            console,
            home,
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
        if let Err(e) = lifecycle::write_daemon_record(&self.home, self.address) {
            tracing::warn!(error = %e, "could not write daemon.json");
        }
        tracing::info!(address = %self.address, "kirocrew listening on http://{}", self.address);
        lifecycle::notify_ready(self.address);
        let watchdog = lifecycle::spawn_watchdog(self.store.clone());
        // Model download, load, space reconcile and backfill run in the
        // background; readiness never waits for them.
        let boot = actix_rt::spawn(self.embeddings.clone().boot());
        // Rows written while the model was busy get their vectors soon
        // after, not at the next restart.
        let catch_up = actix_rt::spawn(self.embeddings.clone().catch_up(CATCH_UP_EVERY));
        // Likewise the default consolidation model's download and load.
        let chat_boot = actix_rt::spawn(self.chat_model.clone().boot());
        // Markdown migration (when memory.migrated is false), likewise in
        // the background.
        let migration = actix_rt::spawn(self.layers.migration.clone().boot());

        let server_result = tokio::select! {
            () = shutdown => {
                tracing::info!("shutdown requested; finishing in-flight requests");
                lifecycle::notify_stopping();
                // Open MCP streams would otherwise hold the graceful stop
                // until its timeout.
                self.mcp_shutdown.cancel();
                self.console.shutdown();
                handle.stop(true).await;
                serving.await
            }
            result = &mut serving => result,
        };
        // Also when the server ended on its own: the sampler stops.
        self.console.shutdown();
        if let Some(watchdog) = watchdog {
            watchdog.abort();
        }
        boot.abort();
        catch_up.abort();
        chat_boot.abort();
        migration.abort();
        self.layers.close().await;
        // Flushes the skill usage ledger's pending hits.
        if let Err(e) = self.skills.close().await {
            tracing::warn!(error = %e, "closing the skills actor");
        }
        self.embeddings.close().await;
        self.chat_model.close();
        let closed = self.store.close().await;
        lifecycle::remove_daemon_record(&self.home);
        server_result
            .context("server task failed")?
            .context("server error")?;
        closed.context("closing the memory store")?;
        tracing::info!("kirocrew stopped cleanly");
        Ok(())
    }
}

/// The security event log's configuration for `home` (the daemon and the
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
