//! The security log's data: events as callers describe them, records as
//! they are stored, and the log's configuration.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::SharedClock;

/// The log's file name in the data home.
pub const LOG_FILE_NAME: &str = "security-events.jsonl";

/// One security-relevant decision, as the caller describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecurityEvent {
    /// What kind of decision: `hook_decision`, `read_denied`,
    /// `read_sensitive`, `injection_blocked`, `skill_toggle`,
    /// `skill_trigger`, `auth_failure`, `channel_denied`, …
    pub category: String,
    /// Who caused it: the surface and, where known, the client
    /// (`http`, `cli`, `gateway`, `mcp:<client>`, `hook:<command>`).
    pub actor: String,
    /// The decision: `allow`, `deny`, `ask`, `blocked`, `ok`, `refused`, …
    pub outcome: String,
    /// Free-form facts (tool name, path, rule matched, reason).
    pub detail: Value,
    /// Flush to disk before acknowledging (fail-closed callers).
    #[serde(skip)]
    pub durable: bool,
}

impl SecurityEvent {
    /// An event; `detail` is usually a `serde_json::json!({…})` object.
    pub fn new(category: &str, actor: &str, outcome: &str, detail: Value) -> Self {
        Self {
            category: category.to_owned(),
            actor: actor.to_owned(),
            outcome: outcome.to_owned(),
            detail,
            durable: false,
        }
    }

    /// Marks the event as one that must reach the disk before the caller
    /// goes on (used where the record is the permission, e.g. an audited
    /// read of a sensitive file).
    pub fn durable(mut self) -> Self {
        self.durable = true;
        self
    }
}

/// A stored event: when it was recorded, then the event's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecurityRecord {
    /// RFC 3339 UTC time of recording.
    pub ts: String,
    /// The event.
    #[serde(flatten)]
    pub event: SecurityEvent,
}

/// Where the log lives and how large it may grow.
#[derive(Clone)]
pub struct SecurityLogConfig {
    /// The live file (`<home>/security-events.jsonl`).
    pub path: PathBuf,
    /// Rotate when the next line would take the file past this size.
    pub max_bytes: u64,
    /// Rotated files kept (`.1` newest … `.keep` oldest).
    pub keep: u32,
    /// Time source for `ts`.
    pub clock: SharedClock,
}

impl std::fmt::Debug for SecurityLogConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecurityLogConfig")
            .field("path", &self.path)
            .field("max_bytes", &self.max_bytes)
            .field("keep", &self.keep)
            .finish()
    }
}
