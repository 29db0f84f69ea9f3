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

mod actor;
mod attempt;
mod error;
mod files;
mod handle;
mod http;
mod messages;
mod salvage;
mod source;
mod types;

pub use error::DownloadError;
pub use handle::DownloadHandle;
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
