//! [`ConsolidatorHandle`]: the consolidator's cloneable, actix-free
//! interface.

use std::collections::HashMap;

use actix::prelude::*;
use tokio::sync::mpsc;

use super::actor::{CheckIdle, Consolidator};
use super::error::ConsolidatorError;
use super::messages::{ConsolidateSession, GetConsolidationStatus, NoteTurn, RunSession};
use super::schema::ConsolidationPath;
use super::types::{ConsolidationStatus, ConsolidatorConfig, RunReport};
use crate::ask::ask;
use crate::heartbeat::CheckIdleSessions;
use crate::transcripts::SessionMeta;

/// How many idle checks may wait in the subscription channel (one: the
/// heartbeat skips a tick while the consolidator is still on the last).
const IDLE_QUEUE: usize = 1;

/// A cloneable reference to the running consolidator.
#[derive(Clone)]
pub struct ConsolidatorHandle {
    addr: Addr<Consolidator>,
}

impl std::fmt::Debug for ConsolidatorHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsolidatorHandle")
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl ConsolidatorHandle {
    /// Starts the consolidator. Returns the handle and the sender to
    /// subscribe to the heartbeat with (`HeartbeatHandle::subscribe_idle`).
    /// Must run inside an actix `System`.
    pub fn start(config: ConsolidatorConfig) -> (Self, mpsc::Sender<CheckIdleSessions>) {
        let (tx, rx) = mpsc::channel(IDLE_QUEUE);
        let addr = Consolidator {
            config,
            sessions: HashMap::new(),
            idle_checks: Some(rx),
        }
        .start();
        (Self { addr }, tx)
    }

    /// A turn was recorded (`meta` is the session's metadata after it):
    /// starts the prefs path when 30 messages passed its offset. Answers
    /// whether a run started; never waits for it.
    pub async fn note_turn(&self, meta: SessionMeta) -> Result<bool, ConsolidatorError> {
        ask(&self.addr, NoteTurn(meta)).await
    }

    /// Runs an idle check now (what a heartbeat tick sends); answers the
    /// sessions whose history path started.
    pub async fn check_idle(
        &self,
        check: CheckIdleSessions,
    ) -> Result<Vec<String>, ConsolidatorError> {
        ask(&self.addr, CheckIdle(check)).await
    }

    /// Starts both paths of `key` now; answers the paths that started
    /// (a path already running is not started twice).
    pub async fn run_now(&self, key: &str) -> Result<Vec<ConsolidationPath>, ConsolidatorError> {
        ask(
            &self.addr,
            RunSession {
                key: key.to_owned(),
            },
        )
        .await
    }

    /// Runs one path of `key` and waits for its report.
    pub async fn consolidate(
        &self,
        key: &str,
        path: ConsolidationPath,
    ) -> Result<RunReport, ConsolidatorError> {
        ask(
            &self.addr,
            ConsolidateSession {
                key: key.to_owned(),
                path,
            },
        )
        .await
    }

    /// Every session's consolidation state and the model's.
    pub async fn status(&self) -> Result<ConsolidationStatus, ConsolidatorError> {
        ask(&self.addr, GetConsolidationStatus).await
    }
}
