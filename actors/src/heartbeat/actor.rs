//! The `Heartbeat` actor: the tick counter, the live history settings, and
//! the idle-check subscribers. Its handle is in `handle.rs`.

use actix::prelude::*;
use tokio::sync::mpsc;

use super::settings::HeartbeatError;
use super::settings::HistorySettings;
use super::types::{CheckIdleSessions, HeartbeatConfig, HeartbeatStatus, TickReport};
use crate::clock::format_ts;
use crate::memory_files::MemoryFilesHandle;

/// One tick: sent by the actor's own interval timer (hence defined beside
/// the actor), and by `HeartbeatHandle::tick` in tests. Handled in
/// `messages.rs`.
#[derive(Debug, Message)]
#[rtype(result = "Result<TickReport, HeartbeatError>")]
pub(crate) struct Tick;

/// The actor. Start it with `HeartbeatHandle::start`.
pub(crate) struct Heartbeat {
    pub(super) files: MemoryFilesHandle,
    pub(super) config: HeartbeatConfig,
    pub(super) settings: HistorySettings,
    pub(super) subscribers: Vec<mpsc::Sender<CheckIdleSessions>>,
    pub(super) status: HeartbeatStatus,
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
