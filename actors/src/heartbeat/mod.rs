//! # Heartbeat: the maintenance clock
//!
//! Owns the tick counter and the live history settings
//! (`history_idle_hours`, `history_max_days`). Every tick (60 s by default,
//! `memory.heartbeat_interval_secs`):
//!
//! - tells every idle-check subscriber (the consolidator, once it exists)
//!   to check for sessions idle longer than `history_idle_hours`
//!   ([`CheckIdleSessions`] on the channel each subscribed with; spec: "Consolidation → Idle detection");
//! - every [`FTS_REBUILD_TICKS`] = 15 ticks, rebuilds the full-text index
//!   (spec: "Memory", `_FTS_REBUILD_TICKS`);
//! - every [`PRUNE_TICKS`] = 1,440 ticks (once a day at the default
//!   interval), prunes history older than `history_max_days` (spec:
//!   "History Pruning", `_PRUNE_TICKS`).
//!
//! Choice beyond the spec: the daemon also prunes once at start-up, so a
//! daemon restarted more often than daily still prunes.
//!
//! "Now" comes from the injected clock; tests drive ticks with
//! [`HeartbeatHandle::tick`] instead of waiting. `PUT /api/memory/settings`
//! changes the settings through [`HeartbeatHandle::set_history_settings`],
//! so they apply from the next tick on without a restart.

mod actor;
mod handle;
mod messages;
mod settings;
mod types;

pub use handle::HeartbeatHandle;
pub use settings::{
    tick_duties, HeartbeatError, HistorySettings, DEFAULT_INTERVAL, FTS_REBUILD_TICKS,
    MAX_HISTORY_DAYS, MAX_IDLE_HOURS, PRUNE_TICKS,
};
pub use types::{CheckIdleSessions, HeartbeatConfig, HeartbeatStatus, TickReport};
