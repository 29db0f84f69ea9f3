//! [`HeartbeatHandle`]: the heartbeat's cloneable, actix-free interface.

use actix::prelude::*;
use tokio::sync::mpsc;

use super::actor::{Heartbeat, Tick};
use super::messages::{
    GetHeartbeatStatus, GetHistorySettings, SetHistorySettings, StopHeartbeat, SubscribeIdle,
};
use super::settings::{HeartbeatError, HistorySettings};
use super::types::{CheckIdleSessions, HeartbeatConfig, HeartbeatStatus, TickReport};
use crate::ask::ask;
use crate::memory_files::MemoryFilesHandle;

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

    /// Runs one tick now and waits for its work.
    pub async fn tick(&self) -> Result<TickReport, HeartbeatError> {
        ask(&self.addr, Tick).await
    }

    /// Adds an idle-check subscriber: every tick sends it a
    /// [`CheckIdleSessions`] on `sender` (skipped while its queue is full;
    /// dropped once its receiver is gone).
    pub async fn subscribe_idle(
        &self,
        sender: mpsc::Sender<CheckIdleSessions>,
    ) -> Result<(), HeartbeatError> {
        ask(&self.addr, SubscribeIdle(sender)).await
    }

    /// The live settings.
    pub async fn history_settings(&self) -> Result<HistorySettings, HeartbeatError> {
        ask(&self.addr, GetHistorySettings).await
    }

    /// Applies new settings from the next tick on.
    pub async fn set_history_settings(
        &self,
        settings: HistorySettings,
    ) -> Result<(), HeartbeatError> {
        ask(&self.addr, SetHistorySettings(settings)).await
    }

    /// A status snapshot.
    pub async fn status(&self) -> Result<HeartbeatStatus, HeartbeatError> {
        ask(&self.addr, GetHeartbeatStatus).await
    }

    /// Stops ticking.
    pub fn stop(&self) {
        // Dropping every address stops the actor; this one is explicit so a
        // shutdown does not wait for the handles to go.
        self.addr.do_send(StopHeartbeat);
    }
}
