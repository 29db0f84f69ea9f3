//! The heartbeat's plain data: its configuration, what a tick did, its
//! status, and the idle check it sends subscribers.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::settings::HistorySettings;
use crate::clock::SharedClock;
use crate::memory_files::PruneReport;

/// Sent to idle-check subscribers on every tick, through the channel they
/// subscribed with.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckIdleSessions {
    /// The tick's time.
    pub now: DateTime<Utc>,
    /// Sessions idle longer than this are due.
    pub idle_after: chrono::Duration,
}

/// What one tick did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TickReport {
    /// The tick's number, from 1.
    pub tick: u64,
    /// Idle-check subscribers notified.
    pub idle_checks: usize,
    /// Sections indexed, if this tick rebuilt the index.
    pub rebuilt: Option<usize>,
    /// What was pruned, if this tick pruned.
    pub pruned: Option<PruneReport>,
}

/// The heartbeat's state for the dashboard.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HeartbeatStatus {
    /// Ticks so far.
    pub ticks: u64,
    /// Seconds between ticks.
    pub interval_secs: u64,
    /// When the last tick ran.
    pub last_tick_at: Option<String>,
    /// When the index was last rebuilt by a tick.
    pub last_rebuild_at: Option<String>,
    /// When history was last pruned.
    pub last_prune_at: Option<String>,
}

/// How to start the heartbeat.
#[derive(Clone)]
pub struct HeartbeatConfig {
    /// Time between ticks.
    pub interval: Duration,
    /// Initial settings (from config).
    pub settings: HistorySettings,
    /// Time source.
    pub clock: SharedClock,
    /// Prune once when starting.
    pub prune_on_start: bool,
}
