//! # DownloadManager: the owner of the embedding model file
//!
//! Owns the installed GGUF at `models_dir/<file_name>`, the staging files
//! beside it, and the download status. Talked to by the gateway start-up
//! task (a background kick with [`DOWNLOAD_ATTEMPTS_BACKGROUND`] attempts),
//! the dashboard routes (`POST /api/memory/enable-embeddings` kicks with
//! [`DOWNLOAD_ATTEMPTS_INTERACTIVE`], `GET /api/memory/embedding-status`
//! polls the status) and, later, the embedder (which asks for the installed
//! path) — always through [`DownloadHandle`].
//!
//! Spec sections: "Model Download Manager", "Dashboard Enable Flow".
//!
//! ## Flow
//! One *job* is a run of up to N attempts; at most one job exists, and
//! every `StartDownload`/`EnsureModel` that arrives meanwhile adopts it.
//! Each attempt (see `attempt.rs`) checks for an installed file, tries to
//! salvage an Ollama blob (pinned sources only), then downloads into a
//! per-process staging file in the models directory, verifies size and
//! sha256, fsyncs and renames into place. A failed attempt waits
//! `base * 2^(n-1)` (capped) on an actor timer, then the next one starts,
//! resuming the staging file with a `Range` request when the server allows.
//!
//! ## Why a thread and messages
//! The transfer is blocking I/O (ureq), so it runs on its own detached
//! thread — not `spawn_blocking`, whose pool the runtime joins on shutdown,
//! so a finished CLI or Ctrl-C is never pinned by a 610 MB transfer (the
//! reference used a daemon thread for the same reason). The thread reports
//! progress and its result by `do_send` to this actor; the status is
//! mutated only here, so there is no lock around it.

mod attempt;
mod error;
mod files;
mod handle;
mod http;
mod messages;
mod salvage;
mod source;
mod types;

use std::path::PathBuf;

use actix::prelude::*;
use tokio::sync::oneshot;

use attempt::{AttemptFailure, AttemptPlan, Progress};

pub use error::DownloadError;
pub use handle::DownloadHandle;
pub use messages::{EnsureModel, GetDownloadStatus, GetModelPath, StartDownload};
pub use salvage::ollama_blobs_dir;
pub use source::{
    file_name_from_url, resolve_source, ModelSource, DEFAULT_MODEL_FILE_NAME, DEFAULT_MODEL_SHA256,
    DEFAULT_MODEL_URL, MODEL_SHA256_ENV, MODEL_URL_ENV,
};
pub use types::{
    backoff_delay, skip_requested, DownloadSettings, DownloadStatus, DownloadStep, StartOutcome,
    DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP, DOWNLOAD_ATTEMPTS_BACKGROUND,
    DOWNLOAD_ATTEMPTS_INTERACTIVE, GGUF_MIN_BYTES, PROGRESS_EVERY_BYTES, SKIP_DOWNLOAD_ENV,
};

use messages::{AttemptFinished, AttemptProgress, CheckFinished};
use types::DownloadStep as Step;

/// Someone waiting in `EnsureModel` for the current job to end.
type Waiter = oneshot::Sender<Result<PathBuf, DownloadError>>;

/// What the manager is doing.
enum Phase {
    /// No verified model and no job (also after a failed job).
    Idle,
    /// Verifying a file found at start-up. `pending` holds the attempts
    /// requested meanwhile, used if the file turns out bad.
    Checking { pending: Option<u32> },
    /// A job is between its first and last attempt.
    Running(Job),
    /// The model is installed and verified.
    Ready,
}

/// One run of attempts.
struct Job {
    /// Tags thread reports, so a stale report can never touch a newer job.
    id: u64,
    attempt: u32,
    max_attempts: u32,
    /// Kept across attempts so a cut-off transfer can resume.
    staging: PathBuf,
    /// The last attempt left a resumable prefix in `staging`.
    resume: bool,
}

/// The actor. Construct it with [`DownloadHandle::start`].
pub struct DownloadManager {
    source: ModelSource,
    settings: DownloadSettings,
    target: PathBuf,
    status: DownloadStatus,
    phase: Phase,
    waiters: Vec<Waiter>,
    next_job: u64,
}

impl Actor for DownloadManager {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if !self.target.exists() {
            if self.settings.skip {
                self.mark_disabled();
            }
            return;
        }
        // Hashing 610 MB takes seconds: never on the actor's thread.
        self.phase = Phase::Checking { pending: None };
        self.status.step = Step::Verifying;
        let (target, pin, min) = (
            self.target.clone(),
            self.source.sha256.clone(),
            self.settings.min_bytes,
        );
        let addr = ctx.address();
        let spawned = spawn_worker("kc-model-check", move || {
            let result = files::check_installed(&target, pin.as_deref(), min);
            addr.do_send(CheckFinished(result));
        });
        if let Err(e) = spawned {
            self.on_check_finished(Err(e), ctx);
        }
    }
}

impl DownloadManager {
    fn new(source: ModelSource, settings: DownloadSettings) -> Self {
        Self {
            target: settings.models_dir.join(&source.file_name),
            source,
            settings,
            status: DownloadStatus::idle(),
            phase: Phase::Idle,
            waiters: Vec::new(),
            next_job: 0,
        }
    }

    /// Starts a job unless the model is ready or one is already running.
    fn kick(
        &mut self,
        attempts: u32,
        ctx: &mut Context<Self>,
    ) -> Result<StartOutcome, DownloadError> {
        self.forget_vanished_model();
        if let Phase::Checking { pending } = &mut self.phase {
            *pending = Some(pending.unwrap_or(0).max(attempts));
            return Ok(StartOutcome::Adopted);
        }
        match self.phase {
            Phase::Ready => Ok(StartOutcome::AlreadyInstalled),
            Phase::Running(_) | Phase::Checking { .. } => Ok(StartOutcome::Adopted),
            Phase::Idle if self.settings.skip => {
                self.mark_disabled();
                Err(DownloadError::Disabled)
            }
            Phase::Idle => {
                self.begin(attempts, ctx);
                Ok(StartOutcome::Started)
            }
        }
    }

    /// Registers an `EnsureModel` caller for the end of the current job.
    fn add_waiter(&mut self) -> oneshot::Receiver<Result<PathBuf, DownloadError>> {
        let (tx, rx) = oneshot::channel();
        self.waiters.push(tx);
        rx
    }

    fn resolve_waiters(&mut self, result: Result<PathBuf, DownloadError>) {
        for waiter in self.waiters.drain(..) {
            // A caller that gave up dropped its receiver; nothing to tell.
            let _ = waiter.send(result.clone());
        }
    }

    /// A ready model whose file was deleted is no longer ready.
    fn forget_vanished_model(&mut self) {
        if matches!(self.phase, Phase::Ready) && !self.target.exists() {
            tracing::warn!(path = %self.target.display(), "installed model file disappeared");
            self.phase = Phase::Idle;
            self.status = DownloadStatus::idle();
            if self.settings.skip {
                self.mark_disabled();
            }
        }
    }

    fn mark_disabled(&mut self) {
        self.status.step = Step::Failed;
        self.status.error = Some(DownloadError::Disabled.to_string());
    }

    fn become_ready(&mut self) {
        self.phase = Phase::Ready;
        self.status.step = Step::Ready;
        self.status.error = None;
        self.status.path = Some(self.target.clone());
        self.resolve_waiters(Ok(self.target.clone()));
    }

    fn on_check_finished(&mut self, result: Result<(), DownloadError>, ctx: &mut Context<Self>) {
        let Phase::Checking { pending } = self.phase else {
            return;
        };
        if let Err(e) = result {
            tracing::warn!(path = %self.target.display(), error = %e, "installed model failed verification");
            self.phase = Phase::Idle;
            self.status = DownloadStatus::idle();
            self.status.error = Some(format!("installed model failed verification: {e}"));
            if self.settings.skip {
                self.mark_disabled();
                self.resolve_waiters(Err(DownloadError::Disabled));
            } else if let Some(attempts) = pending {
                self.begin(attempts, ctx);
            }
            return;
        }
        tracing::info!(path = %self.target.display(), "installed model verified");
        self.become_ready();
    }

    fn begin(&mut self, attempts: u32, ctx: &mut Context<Self>) {
        let attempts = attempts.max(1);
        self.next_job += 1;
        let staging = files::staging_path(&self.settings.models_dir, &self.source.file_name);
        tracing::info!(
            url = self.source.url.as_str(),
            path = %self.target.display(),
            attempts,
            "starting model download"
        );
        self.phase = Phase::Running(Job {
            id: self.next_job,
            attempt: 0,
            max_attempts: attempts,
            staging,
            resume: false,
        });
        self.status = DownloadStatus {
            max_attempts: attempts,
            ..DownloadStatus::idle()
        };
        self.launch(ctx);
    }

    /// Starts the next attempt of the current job on its own thread.
    fn launch(&mut self, ctx: &mut Context<Self>) {
        let Phase::Running(job) = &mut self.phase else {
            return;
        };
        job.attempt += 1;
        let (id, attempt, max_attempts) = (job.id, job.attempt, job.max_attempts);
        let plan = AttemptPlan {
            source: self.source.clone(),
            target: self.target.clone(),
            staging: job.staging.clone(),
            blobs_dir: salvage::blobs_dir_from_env(self.settings.ollama_blobs_dir.as_deref()),
            resume: job.resume,
            keep_partial: attempt < max_attempts,
            min_bytes: self.settings.min_bytes,
            progress_every: self.settings.progress_every,
        };
        tracing::info!(
            attempt,
            max_attempts,
            resume = plan.resume,
            "model download attempt starting"
        );
        self.status.step = Step::Downloading;
        self.status.attempt = attempt;
        self.status.bytes_downloaded = 0;
        self.status.bytes_total = None;

        let addr = ctx.address();
        let spawned = spawn_worker("kc-model-download", move || {
            let mut report = |progress| addr.do_send(AttemptProgress { job: id, progress });
            let result = attempt::run(&plan, &mut report);
            addr.do_send(AttemptFinished { job: id, result });
        });
        if let Err(error) = spawned {
            let failure = AttemptFailure {
                error,
                resumable: false,
            };
            self.on_attempt_finished(id, Err(failure), ctx);
        }
    }

    fn is_current(&self, id: u64) -> bool {
        matches!(&self.phase, Phase::Running(job) if job.id == id)
    }

    fn on_progress(&mut self, id: u64, progress: Progress) {
        if !self.is_current(id) {
            return;
        }
        match progress {
            Progress::Transfer(t) => {
                self.status.step = Step::Downloading;
                self.status.bytes_downloaded = t.bytes;
                self.status.bytes_total = t.total;
            }
            Progress::Verifying => self.status.step = Step::Verifying,
        }
    }

    fn on_attempt_finished(
        &mut self,
        id: u64,
        result: Result<PathBuf, AttemptFailure>,
        ctx: &mut Context<Self>,
    ) {
        let Phase::Running(job) = &mut self.phase else {
            return;
        };
        if job.id != id {
            return;
        }
        let failure = match result {
            Ok(path) => {
                tracing::info!(attempt = job.attempt, path = %path.display(), "model ready");
                self.become_ready();
                return;
            }
            Err(failure) => failure,
        };
        job.resume = failure.resumable;
        let (attempt, max_attempts) = (job.attempt, job.max_attempts);
        let staging = job.staging.clone();
        self.status.error = Some(failure.error.to_string());

        if attempt >= max_attempts {
            tracing::error!(attempt, max_attempts, error = %failure.error, "model download failed; giving up");
            // The thread already dropped its partial file on the last
            // attempt; this is the safety net for every exit path.
            files::remove_quietly(&staging);
            files::remove_quietly(&files::salvage_staging_path(&staging));
            self.phase = Phase::Idle;
            self.status.step = Step::Failed;
            self.resolve_waiters(Err(failure.error));
            return;
        }
        let delay = backoff_delay(
            attempt,
            self.settings.backoff_base,
            self.settings.backoff_cap,
        );
        tracing::warn!(
            attempt,
            max_attempts,
            error = %failure.error,
            resumable = failure.resumable,
            retry_in_secs = delay.as_secs_f64(),
            "model download attempt failed; will retry"
        );
        self.status.step = Step::WaitingRetry;
        ctx.run_later(delay, move |act, ctx| {
            if act.is_current(id) {
                act.launch(ctx);
            }
        });
    }
}

/// Runs `work` on a detached, named thread.
fn spawn_worker(name: &str, work: impl FnOnce() + Send + 'static) -> Result<(), DownloadError> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(work)
        .map(drop)
        .map_err(|e| DownloadError::Io(format!("cannot start the {name} thread: {e}")))
}
