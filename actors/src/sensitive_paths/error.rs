//! Why a guarded read refused or failed.

use std::path::PathBuf;

/// The error of [`SafeReader`](super::SafeReader)'s reads.
#[derive(Debug, thiserror::Error)]
pub enum SafeReadError {
    /// The path is sensitive; nothing was read (recorded as `read_denied`).
    #[error("refused to read {path}: {reason} (sensitive paths are never read)")]
    Sensitive {
        /// The path as resolved.
        path: PathBuf,
        /// The rule that matched.
        reason: String,
    },
    /// The file is larger than the reader's bound.
    #[error("refused to read {path}: {size} bytes exceeds the limit of {limit}")]
    TooLarge {
        /// The path as resolved.
        path: PathBuf,
        /// Its size, or the bytes seen before the bound was passed.
        size: u64,
        /// The bound.
        limit: u64,
    },
    /// The path is not a regular file (a directory, a device, a FIFO).
    #[error("refused to read {0}: not a regular file")]
    NotAFile(PathBuf),
    /// The file holds a PEM private-key block whatever its name.
    #[error("refused to read {0}: it contains a private key")]
    PrivateKey(PathBuf),
    /// `read_id` is not on the internal allowlist.
    #[error("unknown internal read id {0:?}")]
    UnknownReadId(String),
    /// The audit record of an internal read could not be made durable, so
    /// the bytes were withheld (fail-closed).
    #[error("internal read {read_id:?} withheld: its audit could not be recorded ({cause})")]
    AuditFailed {
        /// The read.
        read_id: String,
        /// Why the security log refused.
        cause: String,
    },
    /// The file could not be opened or read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The path as resolved.
        path: PathBuf,
        /// The system error.
        message: String,
    },
}

impl SafeReadError {
    /// Whether the policy refused (recorded as `read_denied`), rather than
    /// the file failing to open or read.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Self::Sensitive { .. }
                | Self::TooLarge { .. }
                | Self::NotAFile(_)
                | Self::PrivateKey(_)
        )
    }
}
