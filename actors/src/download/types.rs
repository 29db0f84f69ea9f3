//! Settings, the status snapshot, and the retry schedule of the download
//! manager. Numbers come from the spec's "Model Download Manager" section.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// Attempts of the background download kicked at gateway start-up.
pub const DOWNLOAD_ATTEMPTS_BACKGROUND: u32 = 6;

/// Attempts of a dashboard Enable/Retry click (fast feedback).
pub const DOWNLOAD_ATTEMPTS_INTERACTIVE: u32 = 3;

/// Environment variable that switches downloads off (`=1`; tests and CI).
pub const SKIP_DOWNLOAD_ENV: &str = "KIROCREW_SKIP_MODEL_DOWNLOAD";

/// First retry delay; doubles per failed attempt.
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_secs(60);

/// Longest retry delay.
pub const DEFAULT_BACKOFF_CAP: Duration = Duration::from_secs(30 * 60);

/// Files smaller than this are rejected as truncated (1 MiB).
pub const GGUF_MIN_BYTES: u64 = 1024 * 1024;

/// Progress granularity reported to the status (16 MiB).
pub const PROGRESS_EVERY_BYTES: u64 = 16 * 1024 * 1024;

/// Tunables of the download manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadSettings {
    /// Directory the model is installed in (and staged in: same filesystem,
    /// so the final rename is atomic).
    pub models_dir: PathBuf,
    /// Never download (`KIROCREW_SKIP_MODEL_DOWNLOAD=1`).
    pub skip: bool,
    /// Ollama blob store to salvage from; `None` means `$OLLAMA_MODELS/blobs`,
    /// else `~/.ollama/models/blobs`.
    pub ollama_blobs_dir: Option<PathBuf>,
    /// Delay after the first failed attempt.
    pub backoff_base: Duration,
    /// Upper bound of any retry delay.
    pub backoff_cap: Duration,
    /// Smaller files are rejected as truncated.
    pub min_bytes: u64,
    /// Status progress is updated at least every this many bytes.
    pub progress_every: u64,
}

impl DownloadSettings {
    /// The spec's defaults for `models_dir`; downloads enabled, Ollama blobs
    /// found through the environment.
    pub fn new(models_dir: PathBuf) -> Self {
        Self {
            models_dir,
            skip: false,
            ollama_blobs_dir: None,
            backoff_base: DEFAULT_BACKOFF_BASE,
            backoff_cap: DEFAULT_BACKOFF_CAP,
            min_bytes: GGUF_MIN_BYTES,
            progress_every: PROGRESS_EVERY_BYTES,
        }
    }

    /// Production settings: [`DownloadSettings::new`] plus the
    /// `KIROCREW_SKIP_MODEL_DOWNLOAD` escape hatch from the environment.
    pub fn from_env(models_dir: PathBuf) -> Self {
        Self {
            skip: skip_requested(std::env::var(SKIP_DOWNLOAD_ENV).ok().as_deref()),
            ..Self::new(models_dir)
        }
    }
}

/// Whether a `KIROCREW_SKIP_MODEL_DOWNLOAD` value asks to skip downloads.
pub fn skip_requested(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// The delay after failed attempt number `attempt` (1-based):
/// `base * 2^(attempt-1)`, never more than `cap`.
pub fn backoff_delay(attempt: u32, base: Duration, cap: Duration) -> Duration {
    let doublings = attempt.saturating_sub(1).min(31);
    base.checked_mul(1u32 << doublings).unwrap_or(cap).min(cap)
}

/// Where the manager is (the dashboard polls this).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DownloadStep {
    /// Nothing installed and nothing running.
    Idle,
    /// Bytes are arriving (download or Ollama-blob salvage).
    Downloading,
    /// Hashing a finished or already-installed file.
    Verifying,
    /// An attempt failed; the next one starts after the backoff.
    WaitingRetry,
    /// The model is installed and verified.
    Ready,
    /// Every attempt failed, or downloads are disabled.
    Failed,
}

/// A snapshot of the manager's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DownloadStatus {
    /// Current step.
    pub step: DownloadStep,
    /// The latest failure, kept through retries so the dashboard can show
    /// why it is waiting; cleared when the model is ready.
    pub error: Option<String>,
    /// The current (or last) attempt, 1-based; 0 before any.
    pub attempt: u32,
    /// Attempts this download may use.
    pub max_attempts: u32,
    /// Bytes in the staging file so far (including a resumed prefix).
    pub bytes_downloaded: u64,
    /// Full size when the server announced it.
    pub bytes_total: Option<u64>,
    /// The installed model, once ready.
    pub path: Option<PathBuf>,
}

impl DownloadStatus {
    /// Nothing done yet.
    pub(super) fn idle() -> Self {
        Self {
            step: DownloadStep::Idle,
            error: None,
            attempt: 0,
            max_attempts: 0,
            bytes_downloaded: 0,
            bytes_total: None,
            path: None,
        }
    }

    /// Whether a download (or the start-up check) is in progress.
    pub fn is_busy(&self) -> bool {
        matches!(
            self.step,
            DownloadStep::Downloading | DownloadStep::Verifying | DownloadStep::WaitingRetry
        )
    }

    /// Whether the dashboard should offer Retry (spec: `can_retry`).
    pub fn can_retry(&self) -> bool {
        self.step == DownloadStep::Failed
    }
}

/// What a `StartDownload` kick did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StartOutcome {
    /// A new download began.
    Started,
    /// A download (or the start-up check) was already running; it was adopted.
    Adopted,
    /// A download was waiting to retry; its next attempt started now.
    RetryStarted,
    /// The model is already installed; nothing to do.
    AlreadyInstalled,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_base_up_to_the_cap() {
        let (base, cap) = (DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP);
        let secs: Vec<u64> = (1..=7)
            .map(|a| backoff_delay(a, base, cap).as_secs())
            .collect();
        assert_eq!(secs, vec![60, 120, 240, 480, 960, 1800, 1800]);
    }

    #[test]
    fn backoff_never_overflows() {
        let cap = DEFAULT_BACKOFF_CAP;
        assert_eq!(
            backoff_delay(0, DEFAULT_BACKOFF_BASE, cap),
            DEFAULT_BACKOFF_BASE
        );
        assert_eq!(backoff_delay(u32::MAX, DEFAULT_BACKOFF_BASE, cap), cap);
        let huge = Duration::from_secs(u64::MAX / 2);
        assert_eq!(backoff_delay(40, huge, Duration::MAX), Duration::MAX);
    }

    #[test]
    fn skip_flag_values() {
        assert!(skip_requested(Some("1")));
        assert!(skip_requested(Some(" TRUE ")));
        assert!(!skip_requested(Some("0")));
        assert!(!skip_requested(Some("")));
        assert!(!skip_requested(None));
    }

    #[test]
    fn steps_serialize_in_snake_case() {
        let json = serde_json::to_string(&DownloadStep::WaitingRetry).unwrap();
        assert_eq!(json, "\"waiting_retry\"");
    }
}
