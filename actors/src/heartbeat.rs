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
use serde::{Deserialize, Serialize};

use crate::clock::{format_ts, SharedClock};
use crate::memory_files::{MemoryFilesHandle, PruneReport};

/// The default tick interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);
/// Ticks between full-text index rebuilds.
pub const FTS_REBUILD_TICKS: u64 = 15;
/// Ticks between history prunes.
pub const PRUNE_TICKS: u64 = 1_440;
/// Largest accepted `history_idle_hours` (one year).
pub const MAX_IDLE_HOURS: f64 = 8_760.0;
/// Largest accepted `history_max_days` (a hundred years).
pub const MAX_HISTORY_DAYS: u32 = 36_500;

/// The settings behind `GET/PUT /api/memory/settings`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistorySettings {
    /// A session idle this long gets its history consolidated.
    pub history_idle_hours: f64,
    /// Daily history files older than this are pruned.
    pub history_max_days: u32,
}

impl Default for HistorySettings {
    fn default() -> Self {
        Self {
            history_idle_hours: 3.0,
            history_max_days: 365,
        }
    }
}

impl HistorySettings {
    /// Range checks: idle hours in (0, 8760], max days in [1, 36500].
    pub fn validate(&self) -> Result<(), HeartbeatError> {
        let h = self.history_idle_hours;
        if !(h.is_finite() && h > 0.0 && h <= MAX_IDLE_HOURS) {
            return Err(HeartbeatError::InvalidSetting {
                key: "history_idle_hours",
                reason: format!("must be a number in (0, {MAX_IDLE_HOURS}], got {h}"),
            });
        }
        if !(1..=MAX_HISTORY_DAYS).contains(&self.history_max_days) {
            return Err(HeartbeatError::InvalidSetting {
                key: "history_max_days",
                reason: format!(
                    "must be between 1 and {MAX_HISTORY_DAYS}, got {}",
                    self.history_max_days
                ),
            });
        }
        Ok(())
    }

    /// The idle threshold as a duration.
    pub fn idle_after(&self) -> chrono::Duration {
        chrono::Duration::milliseconds((self.history_idle_hours * 3_600_000.0) as i64)
    }
}

/// What tick number `tick` (counted from 1) must do besides the idle check.
pub fn tick_duties(tick: u64) -> (bool, bool) {
    (
        tick > 0 && tick % FTS_REBUILD_TICKS == 0,
        tick > 0 && tick % PRUNE_TICKS == 0,
    )
}

/// Errors of the heartbeat.
#[derive(Debug, thiserror::Error)]
pub enum HeartbeatError {
    /// A setting is out of range.
    #[error("invalid {key}: {reason}")]
    InvalidSetting {
        /// The setting.
        key: &'static str,
        /// Why.
        reason: String,
    },
    /// The actor is not running.
    #[error("heartbeat unavailable: {0}")]
    Unavailable(String),
}

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

/// A cloneable reference to the running heartbeat.
#[derive(Clone)]
pub struct HeartbeatHandle {
    addr: Addr<Heartbeat>,
}

impl std::fmt::Debug for HeartbeatHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeartbeatHandle")
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl HeartbeatHandle {
    /// Starts ticking. Must run inside an actix `System`.
    pub fn start(files: MemoryFilesHandle, config: HeartbeatConfig) -> Self {
        let settings = config.settings;
        let interval_secs = config.interval.as_secs();
        let addr = Heartbeat {
            files,
            config,
            settings,
            subscribers: Vec::new(),
            status: HeartbeatStatus {
                interval_secs,
                ..HeartbeatStatus::default()
            },
        }
        .start();
        Self { addr }
    }

    fn unavailable(e: MailboxError) -> HeartbeatError {
        HeartbeatError::Unavailable(e.to_string())
    }

    /// Runs one tick now and waits for its work.
    pub async fn tick(&self) -> Result<TickReport, HeartbeatError> {
        self.addr.send(Tick).await.map_err(Self::unavailable)
    }

    /// Adds an idle-check subscriber.
    pub async fn subscribe_idle(
        &self,
        recipient: Recipient<CheckIdleSessions>,
    ) -> Result<(), HeartbeatError> {
        self.addr
            .send(SubscribeIdle(recipient))
            .await
            .map_err(Self::unavailable)
    }

    /// The live settings.
    pub async fn history_settings(&self) -> Result<HistorySettings, HeartbeatError> {
        self.addr
            .send(GetHistorySettings)
            .await
            .map_err(Self::unavailable)
    }

    /// Applies new settings from the next tick on.
    pub async fn set_history_settings(
        &self,
        settings: HistorySettings,
    ) -> Result<(), HeartbeatError> {
        self.addr
            .send(SetHistorySettings(settings))
            .await
            .map_err(Self::unavailable)?
    }

    /// A status snapshot.
    pub async fn status(&self) -> Result<HeartbeatStatus, HeartbeatError> {
        self.addr
            .send(GetHeartbeatStatus)
            .await
            .map_err(Self::unavailable)
    }

    /// Stops ticking.
    pub fn stop(&self) {
        // Dropping every address stops the actor; this one is explicit so a
        // shutdown does not wait for the handles to go.
        self.addr.do_send(StopHeartbeat);
    }
}

/// Stops the actor.
#[derive(Debug, Message)]
#[rtype(result = "()")]
struct StopHeartbeat;

impl Handler<StopHeartbeat> for Heartbeat {
    type Result = ();

    fn handle(&mut self, _: StopHeartbeat, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duties_by_tick() {
        assert_eq!(tick_duties(1), (false, false));
        assert_eq!(tick_duties(14), (false, false));
        assert_eq!(tick_duties(15), (true, false));
        assert_eq!(tick_duties(30), (true, false));
        assert_eq!(tick_duties(1_439), (false, false));
        assert_eq!(tick_duties(1_440), (true, true));
        assert_eq!(tick_duties(2_880), (true, true));
    }

    #[test]
    fn settings_ranges() {
        assert!(HistorySettings::default().validate().is_ok());
        for (h, d) in [
            (0.0, 1),
            (-1.0, 1),
            (f64::NAN, 1),
            (8_761.0, 1),
            (1.0, 0),
            (1.0, 36_501),
        ] {
            let s = HistorySettings {
                history_idle_hours: h,
                history_max_days: d,
            };
            assert!(s.validate().is_err(), "{h} {d}");
        }
        let s = HistorySettings {
            history_idle_hours: 0.5,
            history_max_days: 30,
        };
        assert_eq!(s.idle_after(), chrono::Duration::minutes(30));
    }
}
