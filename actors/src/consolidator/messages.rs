//! The consolidator's protocol: one struct per request, each with its thin
//! handler. Runs are spawned (`Consolidator::start_run`) or awaited as a
//! spawned future, never computed on the mailbox turn.

use actix::prelude::*;

use super::actor::{CheckIdle, Consolidator};
use super::error::ConsolidatorError;
use super::run::run_path;
use super::schema::ConsolidationPath;
use super::triggers::{history_due, idle_secs, prefs_due};
use super::types::{ConsolidationStatus, RunReport, SessionStatus};
use crate::transcripts::SessionMeta;

/// A turn was recorded: start the prefs path if it is due.
#[derive(Debug, Message)]
#[rtype(result = "Result<bool, ConsolidatorError>")]
pub(crate) struct NoteTurn(pub SessionMeta);

/// Start both paths of a session now (`POST …/run`).
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<ConsolidationPath>, ConsolidatorError>")]
pub(crate) struct RunSession {
    pub key: String,
}

/// Run one path of a session and wait for its report (CLI, bench, tests).
#[derive(Debug, Message)]
#[rtype(result = "Result<RunReport, ConsolidatorError>")]
pub(crate) struct ConsolidateSession {
    pub key: String,
    pub path: ConsolidationPath,
}

/// The status snapshot.
#[derive(Debug, Message)]
#[rtype(result = "Result<ConsolidationStatus, ConsolidatorError>")]
pub(crate) struct GetConsolidationStatus;

impl Handler<NoteTurn> for Consolidator {
    type Result = Result<bool, ConsolidatorError>;

    fn handle(&mut self, msg: NoteTurn, ctx: &mut Context<Self>) -> Self::Result {
        let meta = msg.0;
        let state = self.sessions.entry(meta.key.clone()).or_default();
        let offset = *state.prefs_offset.get_or_insert(meta.last_consolidated);
        if !prefs_due(meta.turns, offset, self.config.settings.prefs_every) {
            return Ok(false);
        }
        Ok(self.start_run(ctx, meta.key, ConsolidationPath::Prefs, offset, false))
    }
}

impl Handler<CheckIdle> for Consolidator {
    type Result = ResponseActFuture<Self, Result<Vec<String>, ConsolidatorError>>;

    fn handle(&mut self, msg: CheckIdle, _: &mut Context<Self>) -> Self::Result {
        let transcripts = self.config.transcripts.clone();
        Box::pin(
            async move { transcripts.sessions().await }
                .into_actor(self)
                .map(move |sessions, act, ctx| {
                    let mut started = Vec::new();
                    for meta in sessions? {
                        if history_due(&meta, msg.0.now, msg.0.idle_after)
                            && act.start_run(
                                ctx,
                                meta.key.clone(),
                                ConsolidationPath::History,
                                meta.last_consolidated,
                                false,
                            )
                        {
                            started.push(meta.key);
                        }
                    }
                    Ok(started)
                }),
        )
    }
}

async fn find_session(
    transcripts: &crate::transcripts::TranscriptsHandle,
    key: &str,
) -> Result<SessionMeta, ConsolidatorError> {
    match transcripts.turns_since(key, u64::MAX).await {
        Ok((_, Some(meta))) => Ok(meta),
        Ok((_, None)) | Err(crate::transcripts::TranscriptError::InvalidKey(_)) => {
            Err(ConsolidatorError::UnknownSession(key.to_owned()))
        }
        Err(e) => Err(e.into()),
    }
}

impl Handler<RunSession> for Consolidator {
    type Result = ResponseActFuture<Self, Result<Vec<ConsolidationPath>, ConsolidatorError>>;

    fn handle(&mut self, msg: RunSession, _: &mut Context<Self>) -> Self::Result {
        let transcripts = self.config.transcripts.clone();
        Box::pin(
            async move { find_session(&transcripts, &msg.key).await }
                .into_actor(self)
                .map(|meta, act, ctx| {
                    let meta = meta?;
                    let state = act.sessions.entry(meta.key.clone()).or_default();
                    let offset = *state.prefs_offset.get_or_insert(meta.last_consolidated);
                    let mut started = Vec::new();
                    if act.start_run(
                        ctx,
                        meta.key.clone(),
                        ConsolidationPath::Prefs,
                        offset,
                        true,
                    ) {
                        started.push(ConsolidationPath::Prefs);
                    }
                    if act.start_run(
                        ctx,
                        meta.key.clone(),
                        ConsolidationPath::History,
                        meta.last_consolidated,
                        true,
                    ) {
                        started.push(ConsolidationPath::History);
                    }
                    Ok(started)
                }),
        )
    }
}

impl Handler<ConsolidateSession> for Consolidator {
    type Result = ResponseActFuture<Self, Result<RunReport, ConsolidatorError>>;

    fn handle(&mut self, msg: ConsolidateSession, _: &mut Context<Self>) -> Self::Result {
        let transcripts = self.config.transcripts.clone();
        let key = msg.key.clone();
        let path = msg.path;
        Box::pin(
            async move { find_session(&transcripts, &key).await }
                .into_actor(self)
                .then(move |meta, act, _| {
                    let config = act.config.clone();
                    let claimed = meta.map(|meta| {
                        let state = act.sessions.entry(meta.key.clone()).or_default();
                        let offset = *state.prefs_offset.get_or_insert(meta.last_consolidated);
                        let from = match path {
                            ConsolidationPath::Prefs => offset,
                            ConsolidationPath::History => meta.last_consolidated,
                        };
                        (state.running.insert(path), meta.key, from)
                    });
                    async move {
                        let (free, key, from) = claimed?;
                        if !free {
                            return Err(ConsolidatorError::AlreadyRunning(key));
                        }
                        let result = run_path(&config, &key, path, from, true).await;
                        Ok((key, result))
                    }
                    .into_actor(act)
                })
                .map(move |outcome, act, _| {
                    let (key, result) = outcome?;
                    act.finish(&key, path, &result);
                    result
                }),
        )
    }
}

impl Handler<GetConsolidationStatus> for Consolidator {
    type Result = ResponseActFuture<Self, Result<ConsolidationStatus, ConsolidatorError>>;

    fn handle(&mut self, _: GetConsolidationStatus, _: &mut Context<Self>) -> Self::Result {
        let transcripts = self.config.transcripts.clone();
        Box::pin(
            async move { transcripts.sessions().await }
                .into_actor(self)
                .map(|sessions, act, _| {
                    let now = act.config.clock.now();
                    let model = act.config.llm.info();
                    let model_ready = matches!(model.state.as_str(), "ready" | "configured");
                    let sessions = sessions?
                        .into_iter()
                        .map(|meta| {
                            let state = act.sessions.get(&meta.key);
                            let offset = state
                                .and_then(|s| s.prefs_offset)
                                .unwrap_or(meta.last_consolidated);
                            let mut running: Vec<ConsolidationPath> = state
                                .map(|s| s.running.iter().copied().collect())
                                .unwrap_or_default();
                            running.sort_by_key(|p| *p == ConsolidationPath::History);
                            SessionStatus {
                                waiting_for_model: !running.is_empty() && !model_ready,
                                messages_since: meta.turns.saturating_sub(offset),
                                unconsolidated: meta.turns.saturating_sub(meta.last_consolidated),
                                idle_secs: idle_secs(&meta, now),
                                last_run: state.and_then(|s| s.last_run.clone()),
                                last_error: state.and_then(|s| s.last_error.clone()),
                                running,
                                session: meta.key,
                            }
                        })
                        .collect();
                    Ok(ConsolidationStatus { sessions, model })
                }),
        )
    }
}
