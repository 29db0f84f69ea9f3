//! [`SafeReader`]: the one guarded file read (`safe_read_file`) and its
//! audited carve-out for system-internal readers
//! (`safe_read_file_internal`, `emit_internal_read_audit`).
//!
//! Every refusal is a `read_denied` security event. The carve-out reads an
//! allowlisted sensitive file only after a *durable* `read_sensitive`
//! record of the read succeeded; when the security log cannot record it,
//! the bytes are dropped and the caller gets [`SafeReadError::AuditFailed`]
//! (a log line is not an audit).

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::error::SafeReadError;
use super::policy::SensitivePaths;
use super::resolve::resolve;
use crate::security_log::{SecurityEvent, SecurityLogHandle};

/// Largest file [`SafeReader::safe_read_file`] returns by default.
pub const DEFAULT_MAX_READ_BYTES: u64 = 10 * 1024 * 1024;

/// Largest file an internal read returns (tokens and small state files).
const MAX_INTERNAL_READ_BYTES: u64 = 256 * 1024;

/// Sensitive files specific system-internal readers may read, by read id.
/// Adding an entry is a security-review event (spec:
/// `_INTERNAL_READ_ALLOWLIST`); the bytes never reach an LLM surface.
pub const INTERNAL_READ_ALLOWLIST: &[(&str, &str)] = &[
    // The kiro-cli SSO token, read to ask for the usage limits the
    // dashboard's credit pill shows.
    (
        "kiro_cli_sso_token",
        "~/.aws/sso/cache/kiro-auth-token.json",
    ),
];

/// Credential-bearing files that are *not* sensitive by path but whose
/// every read is audited the same way (spec: `_AUDIT_ONLY_READ_IDS`).
pub const AUDIT_ONLY_READ_IDS: &[(&str, &str)] = &[
    // kiro-cli's SQLite auth store.
    ("kiro_cli_auth_db", "~/.local/share/kiro-cli/data.sqlite3"),
];

/// The guarded reader: a [`SensitivePaths`] policy plus the security log
/// that hears every refusal and every internal read. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SafeReader {
    policy: SensitivePaths,
    log: SecurityLogHandle,
    actor: String,
    max_bytes: u64,
}

impl SafeReader {
    /// A reader recording as `actor` (the surface reading: `hooks`,
    /// `skills`, …), bounded by [`DEFAULT_MAX_READ_BYTES`].
    pub fn new(policy: SensitivePaths, log: SecurityLogHandle, actor: &str) -> Self {
        Self {
            policy,
            log,
            actor: actor.to_owned(),
            max_bytes: DEFAULT_MAX_READ_BYTES,
        }
    }

    /// The same reader recording as another actor.
    pub fn for_actor(&self, actor: &str) -> Self {
        Self {
            actor: actor.to_owned(),
            ..self.clone()
        }
    }

    /// The same reader with another size bound.
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The policy (for `is_sensitive` checks that do not read).
    pub fn policy(&self) -> &SensitivePaths {
        &self.policy
    }

    /// Reads `path` unless it is sensitive (`safe_read_file`): `~`
    /// expanded, links and `..` resolved before the check, re-checked on
    /// the opened file, at most the reader's bound, and never a file
    /// holding a private key. A refusal is recorded as `read_denied`.
    pub async fn safe_read_file(&self, path: &Path) -> Result<Vec<u8>, SafeReadError> {
        let policy = self.policy.clone();
        let asked = path.to_path_buf();
        let max = self.max_bytes;
        let outcome = run_blocking(move || read_checked(&policy, &asked, max)).await;
        if let Err(err) = &outcome {
            if is_refusal(err) {
                self.record_denied(path, err).await;
            }
        }
        outcome
    }

    /// Checks a path the caller was handed without reading it (a model
    /// file to load, a folder to scan): the resolved path when the policy
    /// allows it; a refusal is recorded as `read_denied`, like a refused
    /// read.
    pub async fn check_path(&self, path: &Path) -> Result<PathBuf, SafeReadError> {
        let checked = self
            .policy
            .check(path)
            .map_err(|m| SafeReadError::Sensitive {
                path: m.resolved,
                reason: m.reason,
            });
        if let Err(err) = &checked {
            self.record_denied(path, err).await;
        }
        checked
    }

    /// Reads `path` as UTF-8 text (lossy), with [`Self::safe_read_file`]'s
    /// guards.
    pub async fn safe_read_to_string(&self, path: &Path) -> Result<String, SafeReadError> {
        let bytes = self.safe_read_file(path).await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Reads the allowlisted sensitive file `read_id` names
    /// (`safe_read_file_internal`). The path is re-resolved at every read:
    /// if the file has become a link (to anywhere) it is refused. The bytes are returned only
    /// after a durable `read_sensitive` record succeeded.
    pub async fn safe_read_file_internal(&self, read_id: &str) -> Result<Vec<u8>, SafeReadError> {
        let expected = self.allowlisted(INTERNAL_READ_ALLOWLIST, read_id).await?;
        let exact = expected.clone();
        let read = run_blocking(move || read_exact_target(&exact)).await;
        let bytes = match read {
            Ok(bytes) => bytes,
            Err(err) => {
                if is_refusal(&err) {
                    self.record_denied(&expected, &err).await;
                } else {
                    let detail = json!({"read_id": read_id, "error": err.to_string()});
                    self.note("read_sensitive", "error", detail).await;
                }
                return Err(err);
            }
        };
        let detail = json!({
            "read_id": read_id,
            "path": expected.display().to_string(),
            "bytes": bytes.len(),
        });
        self.audit_durably(read_id, "read_sensitive", detail)
            .await
            .map(|()| bytes)
    }

    /// Records a durable audit of reading the audit-only file `read_id`
    /// names and answers its path; the caller opens it only on `Ok`
    /// (`emit_internal_read_audit`).
    pub async fn emit_internal_read_audit(&self, read_id: &str) -> Result<PathBuf, SafeReadError> {
        let path = self.allowlisted(AUDIT_ONLY_READ_IDS, read_id).await?;
        let detail = json!({"read_id": read_id, "path": path.display().to_string()});
        self.audit_durably(read_id, "read_audited", detail)
            .await
            .map(|()| path)
    }

    /// The expanded path of `read_id` in `list`, or a recorded refusal.
    async fn allowlisted(
        &self,
        list: &[(&str, &str)],
        read_id: &str,
    ) -> Result<PathBuf, SafeReadError> {
        match list.iter().find(|(id, _)| *id == read_id) {
            Some((_, path)) => Ok(self.policy.as_written(Path::new(path))),
            None => {
                let err = SafeReadError::UnknownReadId(read_id.to_owned());
                let detail = json!({"read_id": read_id, "reason": err.to_string()});
                self.note("read_denied", "deny", detail).await;
                Err(err)
            }
        }
    }

    /// A durable record of an internal read; its failure is the read's.
    async fn audit_durably(
        &self,
        read_id: &str,
        category: &str,
        detail: serde_json::Value,
    ) -> Result<(), SafeReadError> {
        let event = SecurityEvent::new(category, &self.actor, "allow", detail).durable();
        match self.log.record(event).await {
            Ok(_) => Ok(()),
            Err(e) => {
                tracing::error!(read_id, error = %e, "internal read withheld: audit failed");
                Err(SafeReadError::AuditFailed {
                    read_id: read_id.to_owned(),
                    cause: e.to_string(),
                })
            }
        }
    }

    async fn record_denied(&self, asked: &Path, err: &SafeReadError) {
        let _ = self.log.record(denied_event(&self.actor, asked, err)).await;
    }

    /// Records a refusal or a failed read; the outcome stands whether or
    /// not it is recorded (the security log itself reports a failed write).
    async fn note(&self, category: &str, outcome: &str, detail: serde_json::Value) {
        let event = SecurityEvent::new(category, &self.actor, outcome, detail);
        let _ = self.log.record(event).await;
    }
}

/// The `read_denied` event for a refused read of `asked` by `actor`.
pub fn denied_event(actor: &str, asked: &Path, err: &SafeReadError) -> SecurityEvent {
    let detail = json!({"path": asked.display().to_string(), "reason": err.to_string()});
    SecurityEvent::new("read_denied", actor, "deny", detail)
}

/// Whether `err` is a policy refusal (recorded) rather than an I/O error.
fn is_refusal(err: &SafeReadError) -> bool {
    err.is_refusal()
}

/// [`SafeReader::safe_read_file`]'s read without the security log, for a
/// short process that runs no actors (the Claude Code hook adapter): the
/// same checks, in the same order. The caller records a refusal
/// ([`SafeReadError::is_refusal`], [`denied_event`]).
pub fn read_file_guarded(
    policy: &SensitivePaths,
    path: &Path,
    max_bytes: u64,
) -> Result<Vec<u8>, SafeReadError> {
    read_checked(policy, path, max_bytes)
}

/// Runs blocking file work off the async executor.
async fn run_blocking<F>(work: F) -> Result<Vec<u8>, SafeReadError>
where
    F: FnOnce() -> Result<Vec<u8>, SafeReadError> + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(SafeReadError::Io {
            path: PathBuf::new(),
            message: format!("read task failed: {e}"),
        })
    })
}

/// The ordinary guarded read (see [`SafeReader::safe_read_file`]).
fn read_checked(policy: &SensitivePaths, path: &Path, max: u64) -> Result<Vec<u8>, SafeReadError> {
    let resolved = policy.check(path).map_err(|m| SafeReadError::Sensitive {
        path: m.resolved,
        reason: m.reason,
    })?;
    let file = open_no_follow(&resolved)?;
    // The check and the open are two steps: if a directory on the way was
    // swapped for a link in between, the file actually opened is checked
    // again by its kernel-reported path.
    if let Some(opened) = opened_path(&file) {
        if let Err(m) = policy.check(&opened) {
            return Err(SafeReadError::Sensitive {
                path: m.resolved,
                reason: m.reason,
            });
        }
    }
    let bytes = read_bounded(file, &resolved, max)?;
    if holds_private_key(&bytes) {
        return Err(SafeReadError::PrivateKey(resolved));
    }
    Ok(bytes)
}

/// The carve-out's read: the allowlisted file itself. Links in its
/// directories are followed (a home under `/home → /usr/home` is fine), but
/// the file must not be a link: the allowlist names a file, not whatever
/// that name points at today (defense in depth).
fn read_exact_target(expected: &Path) -> Result<Vec<u8>, SafeReadError> {
    let io = |message: String| SafeReadError::Io {
        path: expected.to_path_buf(),
        message,
    };
    let (Some(parent), Some(name)) = (expected.parent(), expected.file_name()) else {
        return Err(io("not a file path".into()));
    };
    let target = resolve(parent, Path::new("/"))
        .map_err(|e| io(e.to_string()))?
        .join(name);
    let is_link = std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        return Err(SafeReadError::Sensitive {
            path: target,
            reason: "the allowlisted file is a symbolic link".to_owned(),
        });
    }
    let file = open_no_follow(&target)?;
    if opened_path(&file).is_some_and(|opened| opened != target) {
        return Err(SafeReadError::Sensitive {
            path: target,
            reason: "the allowlisted file changed while opening".to_owned(),
        });
    }
    read_bounded(file, &target, MAX_INTERNAL_READ_BYTES)
}

/// Opens `path` for reading without following a link in its last
/// component (every link was resolved before; one appearing now is a swap).
fn open_no_follow(path: &Path) -> Result<File, SafeReadError> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| SafeReadError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}

/// The path the kernel reports for an open file (Linux `/proc`), if any.
fn opened_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

/// Reads a regular file of at most `max` bytes.
fn read_bounded(file: File, path: &Path, max: u64) -> Result<Vec<u8>, SafeReadError> {
    let io = |e: std::io::Error| SafeReadError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(SafeReadError::NotAFile(path.to_path_buf()));
    }
    let too_large = |size| SafeReadError::TooLarge {
        path: path.to_path_buf(),
        size,
        limit: max,
    };
    if meta.len() > max {
        return Err(too_large(meta.len()));
    }
    // The file may grow after the size check: read one byte past the bound
    // to notice.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Whether `bytes` hold a PEM private-key block (`-----BEGIN … PRIVATE
/// KEY-----`), whatever the file is called.
fn holds_private_key(bytes: &[u8]) -> bool {
    const MARK: &[u8] = b"PRIVATE KEY-----";
    bytes.windows(MARK.len()).any(|w| w == MARK) && bytes.windows(11).any(|w| w == b"-----BEGIN ")
}
