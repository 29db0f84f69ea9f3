//! [`HeartbeatHandle`]: the heartbeat's cloneable, actix-free interface.

use actix::prelude::*;

use super::{
    CheckIdleSessions, GetHeartbeatStatus, GetHistorySettings, Heartbeat, HeartbeatConfig,
    HeartbeatError, HeartbeatStatus, HistorySettings, SetHistorySettings, StopHeartbeat,
    SubscribeIdle, Tick, TickReport,
};
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
