//! One download attempt, start to finish, as a plain blocking function:
//! already installed? → salvage → download → verify → atomic install.
//!
//! The actor runs it on a dedicated thread and learns about progress only
//! through the `report` callback, which forwards to its mailbox; nothing here
//! knows about actix.

use std::path::{Path, PathBuf};

use super::error::DownloadError;
use super::files;
use super::http::{self, Transferred};
use super::salvage::Salvage;
use super::source::ModelSource;

/// Everything one attempt needs, owned so it can move to the thread.
#[derive(Debug, Clone)]
pub(super) struct AttemptPlan {
    /// What to fetch.
    pub source: ModelSource,
    /// `models_dir/file_name`.
    pub target: PathBuf,
    /// This job's staging file (kept across attempts for resume).
    pub staging: PathBuf,
    /// Ollama blob store, if one could be located.
    pub blobs_dir: Option<PathBuf>,
    /// The staging file holds a resumable prefix from the previous attempt.
    pub resume: bool,
    /// Keep a resumable prefix on failure (false on the last attempt).
    pub keep_partial: bool,
    /// Minimum plausible model size.
    pub min_bytes: u64,
    /// Progress granularity.
    pub progress_every: u64,
}

/// A progress event from the attempt thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Progress {
    /// Bytes are arriving.
    Transfer(Transferred),
    /// Hashing a finished or pre-existing file.
    Verifying,
}

/// A failed attempt.
#[derive(Debug, Clone)]
pub(super) struct AttemptFailure {
    /// What went wrong.
    pub error: DownloadError,
    /// The staging file was kept and the next attempt may resume it.
    pub resumable: bool,
}

/// Runs one attempt; returns the installed path.
pub(super) fn run(
    plan: &AttemptPlan,
    report: &mut dyn FnMut(Progress),
) -> Result<PathBuf, AttemptFailure> {
    let pin = plan.source.sha256.as_deref();
    let fail = |error: DownloadError| AttemptFailure {
        error,
        resumable: false,
    };
    if let Some(dir) = plan.target.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| fail(DownloadError::Io(format!("{}: {e}", dir.display()))))?;
    }

    // Another process (or an earlier run) may have installed it meanwhile.
    if plan.target.exists() {
        report(Progress::Verifying);
        match files::check_installed(&plan.target, pin, plan.min_bytes) {
            Ok(()) => {
                files::remove_quietly(&plan.staging);
                return Ok(plan.target.clone());
            }
            Err(e) => tracing::warn!(
                path = %plan.target.display(),
                error = %e,
                "installed model failed verification; it will be replaced"
            ),
        }
    }

    if let (Some(sha256), Some(blobs_dir)) = (pin, plan.blobs_dir.as_deref()) {
        let salvage = Salvage {
            blobs_dir,
            sha256,
            staging: &files::salvage_staging_path(&plan.staging),
            target: &plan.target,
            min_bytes: plan.min_bytes,
            progress_every: plan.progress_every,
        };
        let mut on_copy = |bytes, total| {
            report(Progress::Transfer(Transferred {
                bytes,
                total: Some(total),
            }));
        };
        if salvage.run(&mut on_copy) {
            files::remove_quietly(&plan.staging);
            return Ok(plan.target.clone());
        }
    }

    let fetched = http::fetch(
        &plan.source.url,
        &plan.staging,
        plan.resume,
        plan.progress_every,
        &mut |t| report(Progress::Transfer(t)),
    );
    let (bytes, actual) = match fetched {
        Ok(done) => done,
        Err(f) => {
            let resumable = f.resumable && plan.keep_partial;
            if !resumable {
                files::remove_quietly(&plan.staging);
            }
            return Err(AttemptFailure {
                error: f.error,
                resumable,
            });
        }
    };

    report(Progress::Verifying);
    install(plan, bytes, &actual).map_err(|error| {
        files::remove_quietly(&plan.staging);
        fail(error)
    })?;
    Ok(plan.target.clone())
}

/// Verifies the finished staging file and renames it into place.
fn install(plan: &AttemptPlan, bytes: u64, actual: &str) -> Result<(), DownloadError> {
    let pin = plan.source.sha256.as_deref();
    files::verify(bytes, actual, pin, plan.min_bytes)?;
    if pin.is_none() {
        tracing::warn!(
            url = plan.source.url.as_str(),
            sha256 = actual,
            "installing the model without checksum verification (no sha256 pin configured)"
        );
    }
    files::commit(&plan.staging, &plan.target).map_err(|e| io_error(&plan.target, e))?;
    tracing::info!(path = %plan.target.display(), bytes, sha256 = actual, "model installed");
    Ok(())
}

fn io_error(path: &Path, e: std::io::Error) -> DownloadError {
    DownloadError::Io(format!("{}: {e}", path.display()))
}
