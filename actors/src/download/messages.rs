//! The `DownloadManager` protocol: the public requests, plus the private
//! reports the download thread sends back to the actor's mailbox.

use std::path::PathBuf;

use actix::prelude::*;

use super::actor::{AttemptFinished, AttemptProgress, CheckFinished, DownloadManager};
use super::error::DownloadError;
use super::types::{DownloadStatus, StartOutcome};

/// Kicks a background download and returns at once (dashboard Enable/Retry,
/// gateway start-up). An in-flight download is adopted, never duplicated;
/// one waiting out its backoff starts its next attempt now.
#[derive(Debug, Message)]
#[rtype(result = "Result<StartOutcome, DownloadError>")]
pub(crate) struct StartDownload {
    /// Attempts for a new download (ignored when one is adopted).
    pub attempts: u32,
}

/// Resolves once the model is installed or every attempt failed. Concurrent
/// callers share one in-flight download.
#[derive(Debug, Message)]
#[rtype(result = "Result<PathBuf, DownloadError>")]
pub(crate) struct EnsureModel {
    /// Attempts for a new download (ignored when one is adopted).
    pub attempts: u32,
}

/// A snapshot of the manager's status (dashboard polling).
#[derive(Debug, Message)]
#[rtype(result = "Result<DownloadStatus, DownloadError>")]
pub(crate) struct GetDownloadStatus;

/// The installed, verified model file, if there is one.
#[derive(Debug, Message)]
#[rtype(result = "Result<Option<PathBuf>, DownloadError>")]
pub(crate) struct GetModelPath;

impl Handler<StartDownload> for DownloadManager {
    type Result = Result<StartOutcome, DownloadError>;

    fn handle(&mut self, msg: StartDownload, ctx: &mut Context<Self>) -> Self::Result {
        self.kick(msg.attempts, true, ctx)
    }
}

impl Handler<EnsureModel> for DownloadManager {
    type Result = ResponseFuture<Result<PathBuf, DownloadError>>;

    fn handle(&mut self, msg: EnsureModel, ctx: &mut Context<Self>) -> Self::Result {
        let waiter = match self.kick(msg.attempts, false, ctx) {
            Ok(StartOutcome::AlreadyInstalled) => {
                let path = self.target.clone();
                return Box::pin(async move { Ok(path) });
            }
            Ok(StartOutcome::Started | StartOutcome::Adopted | StartOutcome::RetryStarted) => {
                self.add_waiter()
            }
            Err(e) => return Box::pin(async move { Err(e) }),
        };
        Box::pin(async move {
            waiter.await.unwrap_or_else(|_| {
                Err(DownloadError::Unavailable(
                    "the download manager stopped before the download finished".into(),
                ))
            })
        })
    }
}

impl Handler<GetDownloadStatus> for DownloadManager {
    type Result = Result<DownloadStatus, DownloadError>;

    fn handle(&mut self, _: GetDownloadStatus, _: &mut Context<Self>) -> Self::Result {
        self.forget_vanished_model();
        Ok(self.status.clone())
    }
}

impl Handler<GetModelPath> for DownloadManager {
    type Result = Result<Option<PathBuf>, DownloadError>;

    fn handle(&mut self, _: GetModelPath, _: &mut Context<Self>) -> Self::Result {
        self.forget_vanished_model();
        Ok(self.status.path.clone())
    }
}

impl Handler<CheckFinished> for DownloadManager {
    type Result = ();

    fn handle(&mut self, msg: CheckFinished, ctx: &mut Context<Self>) {
        self.on_check_finished(msg.0, ctx);
    }
}

impl Handler<AttemptProgress> for DownloadManager {
    type Result = ();

    fn handle(&mut self, msg: AttemptProgress, _: &mut Context<Self>) {
        self.on_progress(msg.job, msg.progress);
    }
}

impl Handler<AttemptFinished> for DownloadManager {
    type Result = ();

    fn handle(&mut self, msg: AttemptFinished, ctx: &mut Context<Self>) {
        self.on_attempt_finished(msg.job, msg.result, ctx);
    }
}
