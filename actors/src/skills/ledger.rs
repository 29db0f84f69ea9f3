//! The usage ledger's state (spec: "Usage ledger (skill_usage.py)"): an
//! in-memory per-skill hit tally persisted to `skill-usage.json`.
//!
//! A hit means a skill's body reached a prompt (a delivered trigger match,
//! a `$skillname`, a completed direct read). Entries whose last hit is
//! older than [`TTL_DAYS`] are dropped on load and on every flush, so a
//! stale skill stops occupying a top-K slot. Writes are atomic
//! ([`super::atomic`]); the actor debounces them.
//!
//! Best effort: a file that cannot be read or parsed puts the ledger in a
//! *degraded* state — it records and writes nothing (the unreadable file is
//! left for the user to inspect rather than overwritten), and ranking falls
//! back to recency only. Skill loading never fails because of the ledger.
//!
//! File format: `{"version": 1, "skills": {"<key>": {"hits": n,
//! "first_used": rfc3339, "last_used": rfc3339}}}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::atomic_file::write_atomic;

/// Entries idle longer than this many days are dropped.
pub const TTL_DAYS: i64 = 30;
/// The file's name in the data home.
pub const USAGE_FILE: &str = "skill-usage.json";
const VERSION: u32 = 1;

/// One skill's tally.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// Deliveries counted.
    pub hits: u64,
    /// The first one.
    pub first_used: DateTime<Utc>,
    /// The latest one.
    pub last_used: DateTime<Utc>,
}

#[derive(Debug, Serialize, Deserialize)]
struct LedgerFile {
    version: u32,
    skills: BTreeMap<String, LedgerEntry>,
}

/// The tally and where it lives.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    entries: BTreeMap<String, LedgerEntry>,
    degraded: Option<String>,
    dirty: bool,
}

impl Ledger {
    /// Loads `path` (missing: empty), dropping expired entries.
    pub fn load(path: &Path, now: DateTime<Utc>) -> Self {
        let mut ledger = Self {
            path: path.to_path_buf(),
            entries: BTreeMap::new(),
            degraded: None,
            dirty: false,
        };
        match std::fs::read(path) {
            Ok(bytes) => match serde_json::from_slice::<LedgerFile>(&bytes) {
                Ok(file) => ledger.entries = file.skills,
                Err(e) => {
                    ledger.degraded = Some(format!("{} is not a valid ledger: {e}", path.display()))
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => ledger.degraded = Some(format!("cannot read {}: {e}", path.display())),
        }
        if let Some(reason) = &ledger.degraded {
            tracing::warn!(
                "{reason}; skill ranking is recency-only and no usage is recorded until the file is repaired or removed"
            );
        }
        // Dropping expired entries on load does not dirty the ledger: the
        // next real hit's flush rewrites the file anyway.
        ledger.prune(now);
        ledger.dirty = false;
        ledger
    }

    /// An empty ledger that records nothing (no data home file).
    pub fn degraded(reason: &str) -> Self {
        Self {
            path: PathBuf::new(),
            entries: BTreeMap::new(),
            degraded: Some(reason.to_owned()),
            dirty: false,
        }
    }

    /// Why the ledger is not in use, if it is not.
    pub fn degraded_reason(&self) -> Option<&str> {
        self.degraded.as_deref()
    }

    /// Counts one delivery of `key`; false when degraded.
    pub fn record(&mut self, key: &str, now: DateTime<Utc>) -> bool {
        if self.degraded.is_some() {
            return false;
        }
        let e = self.entries.entry(key.to_owned()).or_insert(LedgerEntry {
            hits: 0,
            first_used: now,
            last_used: now,
        });
        e.hits += 1;
        e.last_used = e.last_used.max(now);
        self.dirty = true;
        true
    }

    /// Drops entries idle for more than [`TTL_DAYS`]; returns how many.
    pub fn prune(&mut self, now: DateTime<Utc>) -> usize {
        let cutoff = now - Duration::days(TTL_DAYS);
        let before = self.entries.len();
        self.entries.retain(|_, e| e.last_used >= cutoff);
        let dropped = before - self.entries.len();
        if dropped > 0 {
            self.dirty = true;
        }
        dropped
    }

    /// Whether there are unsaved changes.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Prunes and writes the file atomically if anything changed.
    pub fn flush(&mut self, now: DateTime<Utc>) -> std::io::Result<bool> {
        if self.degraded.is_some() {
            return Ok(false);
        }
        self.prune(now);
        if !self.dirty {
            return Ok(false);
        }
        let file = LedgerFile {
            version: VERSION,
            skills: self.entries.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
        write_atomic(&self.path, &bytes)?;
        self.dirty = false;
        Ok(true)
    }

    /// `key`'s entry.
    pub fn get(&self, key: &str) -> Option<&LedgerEntry> {
        self.entries.get(key)
    }

    /// Every entry.
    pub fn entries(&self) -> &BTreeMap<String, LedgerEntry> {
        &self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
    }

    #[test]
    fn record_flush_reload() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(USAGE_FILE);
        let mut l = Ledger::load(&path, t0());
        assert!(!l.is_dirty());
        assert!(l.record("a", t0()));
        assert!(l.record("a", t0() + Duration::hours(1)));
        assert!(l.flush(t0()).unwrap());
        assert!(!l.flush(t0()).unwrap(), "nothing new to write");
        let back = Ledger::load(&path, t0());
        let e = back.get("a").unwrap();
        assert_eq!(e.hits, 2);
        assert_eq!(e.first_used, t0());
        assert_eq!(e.last_used, t0() + Duration::hours(1));
    }

    #[test]
    fn ttl_on_load_and_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(USAGE_FILE);
        let mut l = Ledger::load(&path, t0());
        l.record("old", t0());
        l.record("new", t0() + Duration::days(20));
        l.flush(t0() + Duration::days(20)).unwrap();
        let l = Ledger::load(&path, t0() + Duration::days(31));
        assert!(l.get("old").is_none());
        assert!(l.get("new").is_some());
        let mut l = Ledger::load(&path, t0() + Duration::days(20));
        assert!(l.get("old").is_some());
        l.flush(t0() + Duration::days(51)).unwrap();
        let l = Ledger::load(&path, t0());
        assert!(l.entries().is_empty(), "flush dropped both");
    }

    #[test]
    fn a_corrupt_file_degrades_and_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(USAGE_FILE);
        std::fs::write(&path, "{not json").unwrap();
        let mut l = Ledger::load(&path, t0());
        assert!(l.degraded_reason().is_some());
        assert!(!l.record("a", t0()));
        assert!(!l.flush(t0()).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }
}
