//! The `DownloadManager` actor: its phase machine (idle, checking, running a
//! job of attempts, ready), the status snapshot and the waiters. The
//! protocol is in `messages.rs`; one attempt is in `attempt.rs`.

use std::path::PathBuf;

use actix::prelude::*;
use tokio::sync::oneshot;

use super::attempt::{AttemptFailure, AttemptPlan, Progress};
use super::error::DownloadError;
use super::source::ModelSource;
use super::types::{backoff_delay, DownloadSettings, DownloadStatus, StartOutcome};

use super::types::DownloadStep as Step;

// What the attempt thread reports back (sent only by this actor's own
// threads, so defined beside it; handled in `messages.rs`).

/// The start-up check of an already-installed file finished.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(super) struct CheckFinished(pub Result<(), DownloadError>);

/// Progress from the attempt thread of job `job`.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(super) struct AttemptProgress {
    pub job: u64,
    pub progress: Progress,
}

/// The attempt thread of job `job` is done.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(super) struct AttemptFinished {
    pub job: u64,
    pub result: Result<PathBuf, AttemptFailure>,
}

/// Someone waiting in `EnsureModel` for the current job to end.
type Waiter = oneshot::Sender<Result<PathBuf, DownloadError>>;

/// What the manager is doing.
pub(super) enum Phase {
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
pub(super) struct Job {
    /// Tags thread reports, so a stale report can never touch a newer job.
    id: u64,
    attempt: u32,
    max_attempts: u32,
    /// Kept across attempts so a cut-off transfer can resume.
    staging: PathBuf,
    /// The last attempt left a resumable prefix in `staging`.
    resume: bool,
    /// The backoff timer while the job waits to retry; cancelled when a
    /// caller asks for the retry now.
    retry_timer: Option<SpawnHandle>,
}

/// The actor. Construct it with [`DownloadHandle::start`].
pub(crate) struct DownloadManager {
    pub(super) source: ModelSource,
    pub(super) settings: DownloadSettings,
    pub(super) target: PathBuf,
    pub(super) status: DownloadStatus,
    pub(super) phase: Phase,
    pub(super) waiters: Vec<Waiter>,
    pub(super) next_job: u64,
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
            let result = super::files::check_installed(&target, pin.as_deref(), min);
            addr.do_send(CheckFinished(result));
        });
        if let Err(e) = spawned {
            self.on_check_finished(Err(e), ctx);
        }
    }
}

impl DownloadManager {
    pub(super) fn new(source: ModelSource, settings: DownloadSettings) -> Self {
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
    /// With `retry_now`, a job waiting out its backoff launches its next
    /// attempt at once (the dashboard's Enable: "kicks or adopts"); a
    /// background caller (`EnsureModel`) leaves the backoff alone.
    pub(super) fn kick(
        &mut self,
        attempts: u32,
        retry_now: bool,
        ctx: &mut Context<Self>,
    ) -> Result<StartOutcome, DownloadError> {
        self.forget_vanished_model();
        if let Phase::Checking { pending } = &mut self.phase {
            *pending = Some(pending.unwrap_or(0).max(attempts));
            return Ok(StartOutcome::Adopted);
        }
        let waiting = match &mut self.phase {
            Phase::Running(job) if retry_now => job.retry_timer.take(),
            _ => None,
        };
        if let Some(timer) = waiting {
            ctx.cancel_future(timer);
            tracing::info!("model download retry started now");
            self.launch(ctx);
            return Ok(StartOutcome::RetryStarted);
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
    pub(super) fn add_waiter(&mut self) -> oneshot::Receiver<Result<PathBuf, DownloadError>> {
        let (tx, rx) = oneshot::channel();
        self.waiters.push(tx);
        rx
    }

    pub(super) fn resolve_waiters(&mut self, result: Result<PathBuf, DownloadError>) {
        for waiter in self.waiters.drain(..) {
            // A caller that gave up dropped its receiver; nothing to tell.
            let _ = waiter.send(result.clone());
        }
    }

    /// A ready model whose file was deleted is no longer ready.
    pub(super) fn forget_vanished_model(&mut self) {
        if matches!(self.phase, Phase::Ready) && !self.target.exists() {
            tracing::warn!(path = %self.target.display(), "installed model file disappeared");
            self.phase = Phase::Idle;
            self.status = DownloadStatus::idle();
            if self.settings.skip {
                self.mark_disabled();
            }
        }
    }

    pub(super) fn mark_disabled(&mut self) {
        self.status.step = Step::Failed;
        self.status.error = Some(DownloadError::Disabled.to_string());
    }

    pub(super) fn become_ready(&mut self) {
        self.phase = Phase::Ready;
        self.status.step = Step::Ready;
        self.status.error = None;
        self.status.path = Some(self.target.clone());
        self.resolve_waiters(Ok(self.target.clone()));
    }

    pub(super) fn on_check_finished(
        &mut self,
        result: Result<(), DownloadError>,
        ctx: &mut Context<Self>,
    ) {
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

    pub(super) fn begin(&mut self, attempts: u32, ctx: &mut Context<Self>) {
        let attempts = attempts.max(1);
        self.next_job += 1;
        let staging = super::files::staging_path(&self.settings.models_dir, &self.source.file_name);
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
            retry_timer: None,
        });
        self.status = DownloadStatus {
            max_attempts: attempts,
            ..DownloadStatus::idle()
        };
        self.launch(ctx);
    }

    /// Starts the next attempt of the current job on its own thread.
    pub(super) fn launch(&mut self, ctx: &mut Context<Self>) {
        let Phase::Running(job) = &mut self.phase else {
            return;
        };
        job.attempt += 1;
        job.retry_timer = None;
        let (id, attempt, max_attempts) = (job.id, job.attempt, job.max_attempts);
        let plan = AttemptPlan {
            source: self.source.clone(),
            target: self.target.clone(),
            staging: job.staging.clone(),
            blobs_dir: super::salvage::blobs_dir_from_env(
                self.settings.ollama_blobs_dir.as_deref(),
            ),
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
            let result = super::attempt::run(&plan, &mut report);
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

    pub(super) fn is_current(&self, id: u64) -> bool {
        matches!(&self.phase, Phase::Running(job) if job.id == id)
    }

    pub(super) fn on_progress(&mut self, id: u64, progress: Progress) {
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

    pub(super) fn on_attempt_finished(
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
            super::files::remove_quietly(&staging);
            super::files::remove_quietly(&super::files::salvage_staging_path(&staging));
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
        let timer = ctx.run_later(delay, move |act, ctx| {
            if act.is_current(id) {
                act.launch(ctx);
            }
        });
        if let Phase::Running(job) = &mut self.phase {
            job.retry_timer = Some(timer);
        }
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
