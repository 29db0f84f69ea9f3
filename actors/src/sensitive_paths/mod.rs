//! # Sensitive paths and the guarded file read
//!
//! Implements the spec's "safe_read_file" section and `is_sensitive_path`
//! (spec: "Security" → `safe_read_file`, `safe_read_file_internal`; "User
//! kiro-cli Hooks" → commands "not in sensitive locations").
//!
//! - [`SensitivePaths`] decides whether a path is sensitive: `~` expanded
//!   (the home directory is injected, so tests never touch the real one),
//!   symbolic links and `..` resolved before the check, and the path
//!   checked both as written and as resolved. Refused: `~/.ssh`, `~/.aws`,
//!   `~/.gnupg`, `~/.kube`, `~/.azure`, `~/.netrc`, `~/.docker/config.json`,
//!   `.env` / `.env.*` files, private key files (`id_rsa`, `*.pem`,
//!   `*.key`, …), `/etc/shadow`, `/etc/gshadow`, `/etc/sudoers`, process
//!   `environ`/`mem`, and the data home's `api-token` (full list in
//!   `policy.rs`).
//! - [`SafeReader`] is the one way kirocrew reads a file it was handed
//!   (hook scripts, skill files, channel history): `safe_read_file` refuses
//!   sensitive paths, non-regular files, files over its bound and files
//!   holding a PEM private key, and records every refusal as a
//!   `read_denied` security event. `safe_read_file_internal(read_id)` is the
//!   audited carve-out: only the ids in [`INTERNAL_READ_ALLOWLIST`], only
//!   after a durable `read_sensitive` record (fail-closed).
//!
//! Not an actor: a policy with no state of its own; the records go to the
//! `SecurityLog` actor through its handle. Used by the channel history (its
//! files), the hook runner (hook commands) and any reader of
//! caller-supplied paths.

mod error;
mod policy;
mod read;
mod resolve;
#[cfg(test)]
mod tests;

pub use error::SafeReadError;
pub use policy::{SensitiveMatch, SensitivePaths};
pub use read::{
    denied_event, read_file_guarded, SafeReader, AUDIT_ONLY_READ_IDS, DEFAULT_MAX_READ_BYTES,
    INTERNAL_READ_ALLOWLIST,
};
