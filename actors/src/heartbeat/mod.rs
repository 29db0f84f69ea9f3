//! # Heartbeat: the maintenance clock
//!
//! Owns the tick counter and the live history settings
//! (`history_idle_hours`, `history_max_days`). Every tick (60 s by default,
//! `memory.heartbeat_interval_secs`):
//!
//! - tells every idle-check subscriber (the consolidator, once it exists)
//!   to check for sessions idle longer than `history_idle_hours`
//!   ([`CheckIdleSessions`]; spec: "Consolidation → Idle detection");
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

use std::time::Duration;

use actix::prelude::*;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::clock::{format_ts, SharedClock};
use crate::memory_files::{MemoryFilesHandle, PruneReport};

/// The default tick interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);
/// Ticks between full-text index rebuilds.
pub const FTS_REBUILD_TICKS: u64 = 15;
/// Ticks between history prunes.
pub const PRUNE_TICKS: u64 = 1_440;

mod handle;
mod settings;

pub use handle::HeartbeatHandle;
pub use settings::{
    tick_duties, HeartbeatError, HistorySettings, MAX_HISTORY_DAYS, MAX_IDLE_HOURS,
};
/// Sent to idle-check subscribers on every tick.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct CheckIdleSessions {
    /// The tick's time.
    pub now: DateTime<Utc>,
    /// Sessions idle longer than this are due.
    pub idle_after: chrono::Duration,
}

/// One tick (sent by the interval timer, or by tests).
#[derive(Debug, Message)]
#[rtype(result = "TickReport")]
pub struct Tick;

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

/// Registers an idle-check subscriber.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct SubscribeIdle(pub Recipient<CheckIdleSessions>);

/// The current settings.
#[derive(Debug, Message)]
#[rtype(result = "HistorySettings")]
pub struct GetHistorySettings;

/// Replaces the settings (validated).
#[derive(Debug, Message)]
#[rtype(result = "Result<(), HeartbeatError>")]
pub struct SetHistorySettings(pub HistorySettings);

/// A status snapshot.
#[derive(Debug, Message)]
#[rtype(result = "HeartbeatStatus")]
pub struct GetHeartbeatStatus;

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

/// The actor. Start it with [`HeartbeatHandle::start`].
pub struct Heartbeat {
    files: MemoryFilesHandle,
    config: HeartbeatConfig,
    settings: HistorySettings,
    subscribers: Vec<Recipient<CheckIdleSessions>>,
    status: HeartbeatStatus,
}

impl Actor for Heartbeat {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.config.interval, |_, ctx| ctx.notify(Tick));
        if self.config.prune_on_start {
            let files = self.files.clone();
            let keep = self.settings.history_max_days;
            ctx.spawn(
                async move { files.prune_history(keep).await }
                    .into_actor(self)
                    .map(|res, act, _| match res {
                        Ok(_) => act.status.last_prune_at = Some(format_ts(act.config.clock.now())),
                        Err(e) => tracing::warn!(error = %e, "start-up prune failed"),
                    }),
            );
        }
    }
}

impl Handler<Tick> for Heartbeat {
    type Result = ResponseActFuture<Self, TickReport>;

    fn handle(&mut self, _: Tick, _: &mut Context<Self>) -> Self::Result {
        self.status.ticks += 1;
        let tick = self.status.ticks;
        let now = self.config.clock.now();
        self.status.last_tick_at = Some(format_ts(now));
        let check = CheckIdleSessions {
            now,
            idle_after: self.settings.idle_after(),
        };
        self.subscribers.retain(|s| s.connected());
        for subscriber in &self.subscribers {
            subscriber.do_send(check.clone());
        }
        let idle_checks = self.subscribers.len();
        let (rebuild, prune) = tick_duties(tick);
        let files = self.files.clone();
        let keep = self.settings.history_max_days;
        Box::pin(
            async move {
                let mut report = TickReport {
                    tick,
                    idle_checks,
                    ..TickReport::default()
                };
                if rebuild {
                    match files.rebuild_index().await {
                        Ok(r) => report.rebuilt = Some(r.sections),
                        Err(e) => {
                            tracing::warn!(error = %e, "index rebuild failed; next one in 15 ticks")
                        }
                    }
                }
                if prune {
                    match files.prune_history(keep).await {
                        Ok(r) => report.pruned = Some(r),
                        Err(e) => {
                            tracing::warn!(error = %e, "history prune failed; retried tomorrow")
                        }
                    }
                }
                report
            }
            .into_actor(self)
            .map(|report, act, _| {
                let stamp = Some(format_ts(act.config.clock.now()));
                if report.rebuilt.is_some() {
                    act.status.last_rebuild_at = stamp.clone();
                }
                if report.pruned.is_some() {
                    act.status.last_prune_at = stamp;
                }
                report
            }),
        )
    }
}

impl Handler<SubscribeIdle> for Heartbeat {
    type Result = ();

    fn handle(&mut self, msg: SubscribeIdle, _: &mut Context<Self>) {
        self.subscribers.push(msg.0);
    }
}

impl Handler<GetHistorySettings> for Heartbeat {
    type Result = MessageResult<GetHistorySettings>;

    fn handle(&mut self, _: GetHistorySettings, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.settings)
    }
}

impl Handler<SetHistorySettings> for Heartbeat {
    type Result = Result<(), HeartbeatError>;

    fn handle(&mut self, msg: SetHistorySettings, _: &mut Context<Self>) -> Self::Result {
        msg.0.validate()?;
        self.settings = msg.0;
        Ok(())
    }
}

impl Handler<GetHeartbeatStatus> for Heartbeat {
    type Result = MessageResult<GetHeartbeatStatus>;

    fn handle(&mut self, _: GetHeartbeatStatus, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.status.clone())
    }
}

/// Stops the actor.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(crate) struct StopHeartbeat;

impl Handler<StopHeartbeat> for Heartbeat {
    type Result = ();

    fn handle(&mut self, _: StopHeartbeat, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
