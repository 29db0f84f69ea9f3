//! Logging: tracing-subscriber to stderr, filter from `KIROCREW_LOG` (else
//! `RUST_LOG`, else the caller's default), text or JSON lines; and beside
//! it the live log feed of the operator console's `log` stream
//! ([`log_bus`]), with its own level, so an operator can
//! follow `debug` without the daemon writing debug lines to its journal.

pub mod log_bus;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Installs the global subscriber. Safe to call more than once (tests): later
/// calls are ignored.
pub fn init(json: bool, default_filter: &str) {
    let filter = std::env::var("KIROCREW_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok()
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new(default_filter));
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let stderr = if json {
        fmt.json().with_filter(filter).boxed()
    } else {
        fmt.with_filter(filter).boxed()
    };
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(log_bus::layer())
        .try_init();
}

/// Access log: one line per request with method, path, status and latency.
/// (actix's own `Logger` writes through the `log` facade; this keeps
/// request lines in the same structured tracing stream as everything else.)
pub async fn access_log(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody>,
) -> Result<actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>, actix_web::Error> {
    let started = std::time::Instant::now();
    let method = req.method().clone();
    let path = req.path().to_owned();
    let response = next.call(req).await?;
    let status = response.status().as_u16();
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    if status >= 500 {
        tracing::warn!(%method, %path, status, elapsed_ms, "request");
    } else {
        tracing::info!(%method, %path, status, elapsed_ms, "request");
    }
    Ok(response)
}
