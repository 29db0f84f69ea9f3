//! Transcript files: session key → file name, appending a turn, reading the
//! newest turns from the end of a file, and the metadata sidecar. Plain
//! functions (unit-tested without actix).

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::TranscriptError;
use super::types::{SessionMeta, Turn};

/// Longest session key accepted.
pub const MAX_KEY_CHARS: usize = 200;

/// Longest turn text stored, in chars (a turn is a chat message, not a
/// document; longer ones are refused rather than cut silently).
pub const MAX_TURN_CHARS: usize = 100_000;

/// How far from the end a tail read looks, at most.
const TAIL_WINDOW_BYTES: u64 = 1024 * 1024;

/// Longest file name most filesystems take (ext4, xfs, btrfs: 255 bytes).
const MAX_FILE_NAME_BYTES: usize = 255;

/// The longest suffix a stem gets (`.meta.json`).
const LONGEST_SUFFIX: &str = ".meta.json";

/// The file stem for `key`: letters, digits, `.`, `_` and `-` kept, every
/// other byte as `%XX`, so distinct keys never share a file and no key can
/// name a path outside the directory. A key whose encoding would make a
/// file name longer than filesystems take (60 emoji are 720 bytes encoded)
/// gets its encoding's start, `~` (never part of an encoding) and the
/// BLAKE3 hash of the whole encoding: still one file per key, and every key
/// that fit before keeps its file.
pub(crate) fn file_stem(key: &str) -> Result<String, TranscriptError> {
    let key = key.trim();
    if key.is_empty() || key.chars().count() > MAX_KEY_CHARS {
        return Err(TranscriptError::InvalidKey(format!(
            "must be 1-{MAX_KEY_CHARS} characters"
        )));
    }
    if key.chars().any(char::is_control) {
        return Err(TranscriptError::InvalidKey(
            "contains control characters".into(),
        ));
    }
    let mut stem = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && !stem.is_empty()) {
            stem.push(b as char);
        } else {
            stem.push_str(&format!("%{b:02X}"));
        }
    }
    if stem.len() + LONGEST_SUFFIX.len() <= MAX_FILE_NAME_BYTES {
        return Ok(stem);
    }
    let hash = blake3::hash(stem.as_bytes()).to_hex();
    // The encoding is ASCII, so any byte index is a char boundary.
    Ok(format!("{}~{hash}", &stem[..160]))
}

/// `<dir>/<stem>.jsonl`.
pub(crate) fn transcript_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join(format!("{stem}.jsonl"))
}

/// `<dir>/<stem>.meta.json`.
pub(crate) fn meta_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join(format!("{stem}.meta.json"))
}

/// Appends one turn as one line (0600 file).
pub(crate) fn append_turn(path: &Path, turn: &Turn) -> Result<(), TranscriptError> {
    let mut line = serde_json::to_vec(turn).map_err(|e| TranscriptError::Io(e.to_string()))?;
    line.push(b'\n');
    crate::jsonl::open_append(path)?.write_all(&line)?;
    Ok(())
}

/// The newest `n` turns, oldest first, read from the end of the file. A
/// torn or unreadable line is skipped.
pub(crate) fn tail_turns(path: &Path, n: usize) -> Result<Vec<Turn>, TranscriptError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let len = file.metadata()?.len();
    let start = len.saturating_sub(TAIL_WINDOW_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(TAIL_WINDOW_BYTES).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        // The first line may begin mid-record.
        lines.remove(0);
    }
    let mut turns: Vec<Turn> = lines
        .iter()
        .rev()
        .filter_map(|l| serde_json::from_str(l).ok())
        .take(n)
        .collect();
    turns.reverse();
    Ok(turns)
}

/// Every turn of the file, oldest first (for the consolidator, which reads
/// from its marker on).
pub(crate) fn all_turns(path: &Path) -> Result<Vec<Turn>, TranscriptError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// Reads a session's metadata, if any.
pub(crate) fn read_meta(path: &Path) -> Option<SessionMeta> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// Replaces a session's metadata atomically.
pub(crate) fn write_meta(path: &Path, meta: &SessionMeta) -> Result<(), TranscriptError> {
    let text = serde_json::to_vec_pretty(meta).map_err(|e| TranscriptError::Io(e.to_string()))?;
    crate::atomic_file::replace_atomic(path, &text).map_err(|e| TranscriptError::Io(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_accepted_key_names_a_file_the_filesystem_takes() {
        let emoji = "🦀".repeat(60);
        let percent = "%".repeat(200);
        let mut stems = Vec::new();
        for key in [emoji.as_str(), percent.as_str(), "a", "claude-code:s-2"] {
            let stem = file_stem(key).unwrap();
            assert!(
                stem.len() + LONGEST_SUFFIX.len() <= MAX_FILE_NAME_BYTES,
                "{key}"
            );
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(meta_path(dir.path(), &stem), b"{}").unwrap();
            stems.push(stem);
        }
        assert_eq!(stems[3], "claude-code%3As-2", "short keys keep their file");
        // Two long keys differing only at the end still get two files.
        let a = file_stem(&format!("{}a", "🦀".repeat(59))).unwrap();
        let b = file_stem(&format!("{}b", "🦀".repeat(59))).unwrap();
        assert_ne!(a, b);
    }
    use crate::transcripts::types::Role;

    #[test]
    fn keys_become_safe_distinct_file_names() {
        assert_eq!(file_stem("slack:C1:T2").unwrap(), "slack%3AC1%3AT2");
        // No separator survives and no name starts with a dot.
        assert_eq!(
            file_stem("../../etc/passwd").unwrap(),
            "%2E.%2F..%2Fetc%2Fpasswd"
        );
        assert_ne!(file_stem("a b").unwrap(), file_stem("a_b").unwrap());
        assert_eq!(file_stem("dashboard.main").unwrap(), "dashboard.main");
        assert!(file_stem("").is_err());
        assert!(file_stem("a\nb").is_err());
        assert!(file_stem(&"k".repeat(201)).is_err());
    }

    #[test]
    fn the_tail_is_the_newest_turns_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        for i in 0..30 {
            let turn = Turn {
                ts: format!("t{i}"),
                role: if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                text: format!("message {i}"),
                channel_id: None,
                sender: None,
                source_id: None,
            };
            append_turn(&path, &turn).unwrap();
        }
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"ts\":\"torn")
            .unwrap();
        let tail = tail_turns(&path, 3).unwrap();
        let texts: Vec<&str> = tail.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, vec!["message 27", "message 28", "message 29"]);
        assert_eq!(all_turns(&path).unwrap().len(), 30);
        assert!(tail_turns(&dir.path().join("none.jsonl"), 5)
            .unwrap()
            .is_empty());
    }
}
