//! systemd integration (sd_notify protocol) and the daemon's runtime record.
//!
//! `config/kirocrew.service` runs the daemon as `Type=notify`: systemd
//! considers it started only when we send `READY=1` (after the database is
//! open and the listener bound), and with `WatchdogSec` it restarts a daemon
//! that stops sending `WATCHDOG=1`. Pings are sent only while the memory
//! store answers a health check, so a wedged actor gets the process
//! restarted instead of kept alive by a timer. Without `NOTIFY_SOCKET` (not
//! under systemd) every call here is a no-op.

use std::net::SocketAddr;
use std::time::Duration;

use kirocrew_actors::vector_store::VectorStoreHandle;
use sd_notify::NotifyState;
use serde::{Deserialize, Serialize};

use crate::home::DataHome;

fn notify(states: &[NotifyState<'_>]) {
    if let Err(e) = sd_notify::notify(false, states) {
        tracing::warn!(error = %e, "sd_notify failed");
    }
}

/// Tells systemd the daemon is ready.
pub fn notify_ready(address: SocketAddr) {
    let status = format!("listening on http://{address}");
    notify(&[NotifyState::Ready, NotifyState::Status(&status)]);
}

/// Tells systemd the daemon is shutting down.
pub fn notify_stopping() {
    notify(&[NotifyState::Stopping]);
}

/// Starts the watchdog task when systemd asked for one (`WATCHDOG_USEC`).
pub fn spawn_watchdog(store: VectorStoreHandle) -> Option<actix_rt::task::JoinHandle<()>> {
    let usec = watchdog_usec(
        std::env::var("WATCHDOG_USEC").ok().as_deref(),
        std::env::var("WATCHDOG_PID").ok().as_deref(),
        std::process::id(),
    )?;
    // Ping at half the deadline, the interval systemd recommends.
    let period = Duration::from_micros(usec / 2).max(Duration::from_millis(100));
    tracing::info!(?period, "systemd watchdog enabled");
    Some(actix_rt::spawn(async move {
        let mut ticks = actix_rt::time::interval(period);
        loop {
            ticks.tick().await;
            match store.check_health().await {
                Ok(()) => notify(&[NotifyState::Watchdog]),
                Err(e) => {
                    tracing::error!(error = %e, "health check failed; withholding watchdog ping")
                }
            }
        }
    }))
}

/// The watchdog interval systemd asked for, per sd_watchdog_enabled(3): set
/// when `WATCHDOG_USEC` is a positive number and `WATCHDOG_PID` is absent or
/// names this process. (`sd_notify::watchdog_enabled` insists on
/// `WATCHDOG_PID`, which the man page makes optional.)
fn watchdog_usec(usec: Option<&str>, pid: Option<&str>, own_pid: u32) -> Option<u64> {
    let usec: u64 = usec?.trim().parse().ok().filter(|&u| u > 0)?;
    match pid.map(|p| p.trim().parse::<u32>()) {
        None => Some(usec),
        Some(Ok(p)) if p == own_pid => Some(usec),
        Some(_) => None,
    }
}

/// `$KIROCREW_HOME/daemon.json`: how local tools find the running daemon.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DaemonRecord {
    /// Process id.
    pub pid: u32,
    /// `ip:port` the API listens on.
    pub address: String,
    /// The port alone.
    pub port: u16,
    /// Start time (RFC 3339).
    pub started_at: String,
}

/// Writes the runtime record (atomically).
pub fn write_daemon_record(home: &DataHome, address: SocketAddr) -> std::io::Result<()> {
    let record = DaemonRecord {
        pid: std::process::id(),
        address: address.to_string(),
        port: address.port(),
        started_at: chrono::Utc::now().to_rfc3339(),
    };
    let bytes = serde_json::to_vec_pretty(&record)?;
    kirocrew_actors::atomic_file::replace_atomic(&home.daemon_file(), &bytes)
}

/// Reads the runtime record, if a daemon wrote one.
pub fn read_daemon_record(home: &DataHome) -> Option<DaemonRecord> {
    let text = std::fs::read_to_string(home.daemon_file()).ok()?;
    serde_json::from_str(&text).ok()
}

/// Removes the runtime record on a clean stop.
pub fn remove_daemon_record(home: &DataHome) {
    let _ = std::fs::remove_file(home.daemon_file());
}

#[cfg(test)]
mod tests {
    use super::watchdog_usec;

    #[test]
    fn watchdog_follows_sd_watchdog_enabled_rules() {
        assert_eq!(watchdog_usec(Some("2000000"), None, 7), Some(2_000_000));
        assert_eq!(
            watchdog_usec(Some("2000000"), Some("7"), 7),
            Some(2_000_000)
        );
        assert_eq!(watchdog_usec(Some("2000000"), Some("8"), 7), None);
        assert_eq!(watchdog_usec(Some("0"), None, 7), None);
        assert_eq!(watchdog_usec(Some("soon"), None, 7), None);
        assert_eq!(watchdog_usec(None, Some("7"), 7), None);
    }
}
