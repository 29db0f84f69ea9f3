//! The heartbeat's protocol: one struct per request, each with its thin
//! handler.

use actix::prelude::*;
use tokio::sync::mpsc;

use super::actor::{Heartbeat, Tick};
use super::settings::{tick_duties, HeartbeatError, HistorySettings};
use super::types::{CheckIdleSessions, HeartbeatStatus, TickReport};
use crate::clock::format_ts;

/// Registers an idle-check subscriber.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), HeartbeatError>")]
pub(crate) struct SubscribeIdle(pub mpsc::Sender<CheckIdleSessions>);

/// The current settings.
#[derive(Debug, Message)]
#[rtype(result = "Result<HistorySettings, HeartbeatError>")]
pub(crate) struct GetHistorySettings;

/// Replaces the settings (validated).
#[derive(Debug, Message)]
#[rtype(result = "Result<(), HeartbeatError>")]
pub(crate) struct SetHistorySettings(pub HistorySettings);

/// A status snapshot.
#[derive(Debug, Message)]
#[rtype(result = "Result<HeartbeatStatus, HeartbeatError>")]
pub(crate) struct GetHeartbeatStatus;

impl Handler<Tick> for Heartbeat {
    type Result = ResponseActFuture<Self, Result<TickReport, HeartbeatError>>;

    fn handle(&mut self, _: Tick, _: &mut Context<Self>) -> Self::Result {
        self.status.ticks += 1;
        let tick = self.status.ticks;
        let now = self.config.clock.now();
        self.status.last_tick_at = Some(format_ts(now));
        let check = CheckIdleSessions {
            now,
            idle_after: self.settings.idle_after(),
        };
        self.subscribers.retain(|s| !s.is_closed());
        for subscriber in &self.subscribers {
            // A subscriber still busy with the last check misses this one;
            // the next tick asks again, so nothing piles up behind it.
            if let Err(mpsc::error::TrySendError::Full(_)) = subscriber.try_send(check.clone()) {
                tracing::debug!("idle-check subscriber busy; skipped this tick");
            }
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
                Ok(report)
            }),
        )
    }
}

impl Handler<SubscribeIdle> for Heartbeat {
    type Result = Result<(), HeartbeatError>;

    fn handle(&mut self, msg: SubscribeIdle, _: &mut Context<Self>) -> Self::Result {
        self.subscribers.push(msg.0);
        Ok(())
    }
}

impl Handler<GetHistorySettings> for Heartbeat {
    type Result = Result<HistorySettings, HeartbeatError>;

    fn handle(&mut self, _: GetHistorySettings, _: &mut Context<Self>) -> Self::Result {
        Ok(self.settings)
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
    type Result = Result<HeartbeatStatus, HeartbeatError>;

    fn handle(&mut self, _: GetHeartbeatStatus, _: &mut Context<Self>) -> Self::Result {
        Ok(self.status.clone())
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
