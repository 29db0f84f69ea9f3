//! [`DownloadHandle`]: the only way the rest of kirocrew talks to the
//! download manager. Cloneable, `Send`, and free of actix types in its
//! signatures.

use std::path::PathBuf;

use actix::prelude::*;

use super::actor::DownloadManager;
use super::error::DownloadError;
use super::messages::*;
use super::source::ModelSource;
use super::types::{DownloadSettings, DownloadStatus, StartOutcome};
use crate::ask::ask;

/// A cloneable reference to the running `DownloadManager` actor.
#[derive(Clone)]
pub struct DownloadHandle {
    addr: Addr<DownloadManager>,
}

impl std::fmt::Debug for DownloadHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DownloadHandle")
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl DownloadHandle {
    /// Starts the actor for `source`. Must run inside an actix `System`.
    ///
    /// Nothing is downloaded yet; if the model file already exists it is
    /// verified in the background and the status turns ready.
    pub fn start(source: ModelSource, settings: DownloadSettings) -> Self {
        let addr = DownloadManager::new(source, settings).start();
        Self { addr }
    }

    async fn ask<M, T>(&self, msg: M) -> Result<T, DownloadError>
    where
        M: Message<Result = Result<T, DownloadError>> + Send + 'static,
        T: Send + 'static,
        DownloadManager: Handler<M>,
    {
        ask(&self.addr, msg).await
    }

    /// Kicks a background download with `attempts` attempts (or adopts the
    /// running one, launching its next attempt now if it waits to retry)
    /// and returns at once. Fails with `Disabled` when
    /// downloads are switched off and the model is missing.
    pub async fn start_download(&self, attempts: u32) -> Result<StartOutcome, DownloadError> {
        self.ask(StartDownload { attempts }).await
    }

    /// Waits until the model is installed (starting a download with
    /// `attempts` attempts if none runs) and returns its path, or the last
    /// attempt's error.
    pub async fn ensure_model(&self, attempts: u32) -> Result<PathBuf, DownloadError> {
        self.ask(EnsureModel { attempts }).await
    }

    /// A snapshot of the status.
    pub async fn status(&self) -> Result<DownloadStatus, DownloadError> {
        self.ask(GetDownloadStatus).await
    }

    /// The installed model's path, if the file exists and has been verified.
    pub async fn model_path(&self) -> Result<Option<PathBuf>, DownloadError> {
        self.ask(GetModelPath).await
    }
}
