//! The history directory on disk: channel-id validation, the path of a
//! channel's `history/<channel_id>.jsonl` (refused if it escapes the
//! directory or is sensitive), loading with lazy compaction, appends, and
//! `channels.json`, where modes set through the API survive a restart.
//!
//! Files are written 0600 in a 0700 directory: they hold other people's
//! messages. Rewrites go through a temporary file and a rename, so a crash
//! leaves the old file or the new one, never half of each; an append that
//! a crash tears leaves one bad last line, skipped on load.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::buffer::{Buffer, Entry, Limits, Now};
use super::error::ChannelHistoryError;
use super::types::ChannelMode;
use crate::clock::format_ts;
use crate::sensitive_paths::SensitivePaths;

/// Longest channel id.
const MAX_CHANNEL_ID_CHARS: usize = 128;

/// The file holding the modes set through the API (non-default ones).
pub(crate) const MODES_FILE: &str = "channels.json";

/// Whether `id` is a valid channel id: 1–128 of `[A-Za-z0-9_.:-]`, the
/// first a letter or digit. No `/`, no leading `.`: an id can only ever
/// name a file directly inside the history directory.
pub(crate) fn validate_channel_id(id: &str) -> Result<(), ChannelHistoryError> {
    let valid = id.len() <= MAX_CHANNEL_ID_CHARS
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'));
    if valid {
        Ok(())
    } else {
        Err(ChannelHistoryError::InvalidChannelId(id.to_owned()))
    }
}

/// One line of a history file; `ts` in the store's fixed-width RFC 3339.
#[derive(Debug, Serialize, Deserialize)]
struct StoredEntry {
    sender: String,
    text: String,
    ts: String,
}

impl StoredEntry {
    fn into_entry(self, now: Now) -> Option<Entry> {
        let at = DateTime::parse_from_rfc3339(&self.ts)
            .ok()?
            .with_timezone(&Utc);
        Some(Entry {
            mono: now.mono_of(at),
            sender: self.sender,
            text: self.text,
            at,
        })
    }
}

/// `<data home>/history` and the policy its paths are checked against.
#[derive(Debug, Clone)]
pub(crate) struct HistoryDir {
    root: PathBuf,
    policy: SensitivePaths,
}

fn io_err(what: &Path) -> impl Fn(std::io::Error) -> ChannelHistoryError + '_ {
    move |e| ChannelHistoryError::Io(format!("{}: {e}", what.display()))
}

impl HistoryDir {
    pub(crate) fn new(root: PathBuf, policy: SensitivePaths) -> Self {
        Self { root, policy }
    }

    /// The checked path of `channel`'s history file: inside the (resolved)
    /// history directory and not sensitive, whatever links are planted.
    pub(crate) fn channel_file(&self, channel: &str) -> Result<PathBuf, ChannelHistoryError> {
        validate_channel_id(channel)?;
        let refused = |reason: String| ChannelHistoryError::PathRefused {
            channel: channel.to_owned(),
            reason,
        };
        let root = self
            .policy
            .check(&self.root)
            .map_err(|m| refused(format!("the history directory is sensitive: {}", m.reason)))?;
        let path = self
            .policy
            .check(&self.root.join(format!("{channel}.jsonl")))
            .map_err(|m| {
                refused(format!(
                    "{} is sensitive: {}",
                    m.resolved.display(),
                    m.reason
                ))
            })?;
        if path.parent() != Some(root.as_path()) {
            return Err(refused(format!(
                "{} escapes the history directory {}",
                path.display(),
                root.display()
            )));
        }
        Ok(path)
    }

    /// `channel`'s file name joined to the directory, unchecked: only for
    /// deleting (unlinking never follows a link).
    pub(crate) fn unchecked_file(&self, channel: &str) -> PathBuf {
        self.root.join(format!("{channel}.jsonl"))
    }

    /// Creates the directory (0700) if needed.
    fn ensure(&self) -> Result<(), ChannelHistoryError> {
        if !self.root.is_dir() {
            fs::create_dir_all(&self.root).map_err(io_err(&self.root))?;
            fs::set_permissions(&self.root, fs::Permissions::from_mode(0o700))
                .map_err(io_err(&self.root))?;
        }
        Ok(())
    }

    /// Loads `path` into a buffer with `limits`, dropping unreadable lines,
    /// expired entries and the surplus beyond the bound, and rewriting the
    /// file when anything was dropped (lazy compaction). Answers the buffer
    /// and the number of lines now on disk.
    pub(crate) fn load(
        &self,
        path: &Path,
        limits: Limits,
        now: Now,
    ) -> Result<(Buffer, usize), ChannelHistoryError> {
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Buffer::new(limits), 0))
            }
            Err(e) => return Err(io_err(path)(e)),
        };
        let mut lines = 0;
        let entries: Vec<Entry> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .inspect(|_| lines += 1)
            .filter_map(|l| serde_json::from_str::<StoredEntry>(l).ok())
            .filter_map(|s| s.into_entry(now))
            .collect();
        let parsed = entries.len();
        let (mut buffer, dropped) = Buffer::from_entries(limits, entries, now);
        if dropped || parsed != lines {
            self.rewrite(path, &mut buffer, now)?;
            let kept = buffer.len();
            return Ok((buffer, kept));
        }
        Ok((buffer, lines))
    }

    /// Replaces `path` with the live entries of `buffer`.
    pub(crate) fn rewrite(
        &self,
        path: &Path,
        buffer: &mut Buffer,
        now: Now,
    ) -> Result<(), ChannelHistoryError> {
        self.ensure()?;
        let mut body = Vec::new();
        for entry in buffer.live(now) {
            body.extend(encode(entry)?);
        }
        crate::atomic_file::replace_atomic(path, &body).map_err(io_err(path))
    }

    /// Appends one entry to `path` (created 0600).
    pub(crate) fn append(&self, path: &Path, entry: &Entry) -> Result<(), ChannelHistoryError> {
        self.ensure()?;
        let line = encode(entry)?;
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(io_err(path))?;
        // One write: a crash tears at most this line.
        file.write_all(&line).map_err(io_err(path))
    }

    /// Deletes `path` if it exists.
    pub(crate) fn remove(&self, path: &Path) -> Result<(), ChannelHistoryError> {
        match fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(path)(e)),
            _ => Ok(()),
        }
    }

    /// The modes saved in `channels.json` (empty when there is none). A
    /// file that does not parse is moved aside to `channels.json.corrupt`
    /// and every channel falls back to the default (mention, which records
    /// least).
    pub(crate) fn load_modes(&self) -> Result<BTreeMap<String, ChannelMode>, ChannelHistoryError> {
        let path = self.root.join(MODES_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(io_err(&path)(e)),
        };
        match serde_json::from_str::<ModesFile>(&text) {
            Ok(file) => Ok(file
                .modes
                .into_iter()
                .filter(|(id, _)| validate_channel_id(id).is_ok())
                .collect()),
            Err(e) => {
                let aside = self.root.join(format!("{MODES_FILE}.corrupt"));
                tracing::error!(error = %e, path = %path.display(), aside = %aside.display(),
                    "channels.json does not parse; moved aside, every channel back to mention mode");
                fs::rename(&path, &aside).map_err(io_err(&path))?;
                Ok(BTreeMap::new())
            }
        }
    }

    /// Saves the non-default modes atomically.
    pub(crate) fn save_modes(
        &self,
        modes: &BTreeMap<String, ChannelMode>,
    ) -> Result<(), ChannelHistoryError> {
        self.ensure()?;
        let path = self.root.join(MODES_FILE);
        let body = serde_json::to_vec_pretty(&ModesFile {
            modes: modes.clone(),
        })
        .map_err(|e| ChannelHistoryError::Io(format!("encoding {MODES_FILE}: {e}")))?;
        crate::atomic_file::replace_atomic(&path, &body).map_err(io_err(&path))
    }
}

/// `channels.json`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModesFile {
    modes: BTreeMap<String, ChannelMode>,
}

fn encode(entry: &Entry) -> Result<Vec<u8>, ChannelHistoryError> {
    let stored = StoredEntry {
        sender: entry.sender.clone(),
        text: entry.text.clone(),
        ts: format_ts(entry.at),
    };
    let mut line = serde_json::to_vec(&stored)
        .map_err(|e| ChannelHistoryError::Io(format!("encoding an entry: {e}")))?;
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn channel_ids_that_could_name_a_path_are_refused() {
        for good in ["C0123ABC", "D42", "general", "tg:-1001", "a.b_c-d", "9"] {
            assert!(validate_channel_id(good).is_ok(), "{good}");
        }
        let long = "c".repeat(129);
        for bad in [
            "",
            "../../etc",
            "..",
            ".",
            ".hidden",
            "a/b",
            "a\\b",
            "-x",
            "a b",
            "ä",
            "a\0b",
            long.as_str(),
        ] {
            assert!(validate_channel_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_planted_link_cannot_take_a_history_file_outside() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let home = top.join("home");
        let root = home.join("crew/history");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(home.join(".ssh")).unwrap();
        fs::create_dir_all(top.join("elsewhere")).unwrap();
        let history = HistoryDir::new(root.clone(), SensitivePaths::new(&home));
        assert_eq!(history.channel_file("C1").unwrap(), root.join("C1.jsonl"));
        symlink(home.join(".ssh/authorized_keys"), root.join("C2.jsonl")).unwrap();
        symlink(top.join("elsewhere/x"), root.join("C3.jsonl")).unwrap();
        for channel in ["C2", "C3"] {
            let err = history.channel_file(channel).unwrap_err();
            assert!(
                matches!(err, ChannelHistoryError::PathRefused { .. }),
                "{channel}: {err}"
            );
        }
        assert!(matches!(
            history.channel_file("../../etc"),
            Err(ChannelHistoryError::InvalidChannelId(_))
        ));
        // The history directory itself inside a sensitive place.
        let hidden = HistoryDir::new(home.join(".ssh/history"), SensitivePaths::new(&home));
        assert!(matches!(
            hidden.channel_file("C1"),
            Err(ChannelHistoryError::PathRefused { .. })
        ));
    }
}
