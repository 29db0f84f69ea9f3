//! The `Consolidator` actor: per-session prefs offsets (in memory, as the
//! spec's `_prefs_offset`), which paths are running, and each session's
//! last outcome. Runs are tasks it spawns (`run.rs`), so its mailbox keeps
//! answering while a model generates. Its handle is in `handle.rs`.

use std::collections::{HashMap, HashSet};

use actix::prelude::*;
use tokio::sync::mpsc;

use super::error::ConsolidatorError;
use super::run::run_path;
use super::schema::ConsolidationPath;
use super::types::{ConsolidatorConfig, RunReport};
use crate::clock::format_ts;
use crate::heartbeat::CheckIdleSessions;
use crate::llm::LlmError;

/// A heartbeat idle check, forwarded from the subscription channel into
/// the mailbox. Handled in `messages.rs`.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<String>, ConsolidatorError>")]
pub(crate) struct CheckIdle(pub CheckIdleSessions);

/// What the actor knows of one session.
#[derive(Debug, Default)]
pub(super) struct SessionState {
    /// The prefs path's offset: turns already covered by it (first set to
    /// the persisted history marker when the session is first seen).
    pub(super) prefs_offset: Option<u64>,
    /// Paths running now.
    pub(super) running: HashSet<ConsolidationPath>,
    /// Last success.
    pub(super) last_run: Option<String>,
    /// Last failure (cleared by a success).
    pub(super) last_error: Option<String>,
}

/// The actor. Start it with `ConsolidatorHandle::start`.
pub(crate) struct Consolidator {
    pub(super) config: ConsolidatorConfig,
    pub(super) sessions: HashMap<String, SessionState>,
    /// Idle checks from the heartbeat, taken over when the actor starts.
    pub(super) idle_checks: Option<mpsc::Receiver<CheckIdleSessions>>,
}

impl Actor for Consolidator {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(mut checks) = self.idle_checks.take() {
            let addr = ctx.address();
            actix::spawn(async move {
                while let Some(check) = checks.recv().await {
                    // Waiting for the check keeps at most one in flight; the
                    // heartbeat skips ticks while the channel is full.
                    if addr.send(CheckIdle(check)).await.is_err() {
                        break;
                    }
                }
            });
        }
    }
}

impl Consolidator {
    /// Starts `path` for `key` from `from` as a task, unless it is running
    /// already; answers whether it started. A `forced` run waits for a
    /// chat model that is still loading (see [`run_path`]).
    pub(super) fn start_run(
        &mut self,
        ctx: &mut Context<Self>,
        key: String,
        path: ConsolidationPath,
        from: u64,
        forced: bool,
    ) -> bool {
        let state = self.sessions.entry(key.clone()).or_default();
        if !state.running.insert(path) {
            return false;
        }
        let config = self.config.clone();
        let task_key = key.clone();
        ctx.spawn(
            async move { run_path(&config, &task_key, path, from, forced).await }
                .into_actor(self)
                .map(move |result, act, _| {
                    act.finish(&key, path, &result);
                }),
        );
        true
    }

    /// Records a run's outcome: a success moves the prefs offset (the
    /// history marker was persisted by the run); a failure moves nothing.
    pub(super) fn finish(
        &mut self,
        key: &str,
        path: ConsolidationPath,
        result: &Result<RunReport, ConsolidatorError>,
    ) {
        let now = format_ts(self.config.clock.now());
        let state = self.sessions.entry(key.to_owned()).or_default();
        state.running.remove(&path);
        match result {
            Ok(report) => {
                if path == ConsolidationPath::Prefs {
                    state.prefs_offset = Some(report.upto);
                }
                state.last_run = Some(now);
                state.last_error = None;
            }
            Err(e @ ConsolidatorError::Model(LlmError::NotReady(_))) => {
                // Waiting for the model (downloading, loading) is not a
                // fault: the next trigger tries the same messages again.
                tracing::info!(session = key, ?path, error = %e, "consolidation waits for the chat model; offsets unchanged");
                state.last_error = Some(e.to_string());
            }
            Err(e) => {
                tracing::warn!(session = key, ?path, error = %e, "consolidation failed; offsets unchanged");
                state.last_error = Some(e.to_string());
            }
        }
    }
}
