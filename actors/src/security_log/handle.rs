//! [`SecurityLogHandle`]: the security log's cloneable, actix-free
//! interface.

use actix::prelude::*;
use tokio::sync::broadcast;

use super::actor::SecurityLog;
use super::error::SecurityLogError;
use super::messages::{ListSecurityEvents, RecordSecurityEvent};
use super::types::{SecurityEvent, SecurityLogConfig, SecurityRecord};
use crate::ask::ask;

/// Records a live subscriber may fall behind by before it is told it
/// lagged (and how many it missed).
const LIVE_QUEUE: usize = 256;

/// A cloneable reference to the running security log.
#[derive(Clone)]
pub struct SecurityLogHandle {
    addr: Addr<SecurityLog>,
    live: broadcast::Sender<SecurityRecord>,
}

impl std::fmt::Debug for SecurityLogHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecurityLogHandle")
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl SecurityLogHandle {
    /// Starts the log. Must run inside an actix `System`. The file is
    /// opened on the first event.
    pub fn start(config: SecurityLogConfig) -> Self {
        let (live, _) = broadcast::channel(LIVE_QUEUE);
        let addr = SecurityLog {
            config,
            file: None,
            live: live.clone(),
        }
        .start();
        Self { addr, live }
    }

    /// Appends `event`; answers the stored record. A `durable` event is on
    /// disk when this returns `Ok`.
    pub async fn record(&self, event: SecurityEvent) -> Result<SecurityRecord, SecurityLogError> {
        ask(&self.addr, RecordSecurityEvent(event)).await
    }

    /// Records `event` without waiting; a failure is logged by the actor.
    /// For paths that must not slow down on the log (auth failures, hook
    /// decisions on the hot path).
    pub fn record_later(&self, event: SecurityEvent) {
        self.addr.do_send(RecordSecurityEvent(event));
    }

    /// The newest `limit` events, newest first, optionally of one category.
    pub async fn recent(
        &self,
        limit: usize,
        category: Option<&str>,
    ) -> Result<Vec<SecurityRecord>, SecurityLogError> {
        let category = category.map(str::to_owned);
        ask(&self.addr, ListSecurityEvents { limit, category }).await
    }

    /// A live feed of every event recorded from now on. A receiver that
    /// falls more than a bounded queue behind gets `RecvError::Lagged(n)`
    /// with the count it missed; it never blocks the log.
    pub fn subscribe(&self) -> broadcast::Receiver<SecurityRecord> {
        self.live.subscribe()
    }
}
