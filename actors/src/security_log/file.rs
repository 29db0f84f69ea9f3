//! The log file itself: bounded line encoding, rotation, and reading the
//! newest records back. Plain functions, so the CLI reads the log without
//! the actor and the rules are unit-tested without actix.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::SecurityLogError;
use super::types::SecurityRecord;

/// Longest line the log writes (bytes, newline included). A caller's detail
/// is cut to fit: one noisy event must not crowd out the others.
pub const MAX_LINE_BYTES: usize = 8 * 1024;

/// Longest detail string kept whole, in chars.
const MAX_DETAIL_STRING_CHARS: usize = 512;

/// The JSON line for `record`, newline included, at most
/// [`MAX_LINE_BYTES`].
pub(crate) fn encode_line(record: &SecurityRecord) -> Result<Vec<u8>, SecurityLogError> {
    let encode = |r: &SecurityRecord| {
        serde_json::to_vec(r).map_err(|e| SecurityLogError::Encode(e.to_string()))
    };
    let mut line = encode(record)?;
    if line.len() >= MAX_LINE_BYTES {
        let mut bounded = record.clone();
        cut_strings(&mut bounded.event.detail);
        line = encode(&bounded)?;
        if line.len() >= MAX_LINE_BYTES {
            bounded.event.detail = serde_json::json!({"truncated": true});
            bounded.event.actor = cut(&bounded.event.actor);
            bounded.event.category = cut(&bounded.event.category);
            bounded.event.outcome = cut(&bounded.event.outcome);
            line = encode(&bounded)?;
        }
    }
    line.push(b'\n');
    Ok(line)
}

fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_DETAIL_STRING_CHARS {
        return s.to_owned();
    }
    let mut kept: String = s.chars().take(MAX_DETAIL_STRING_CHARS).collect();
    kept.push('…');
    kept
}

fn cut_strings(value: &mut Value) {
    match value {
        Value::String(s) => *s = cut(s),
        Value::Array(items) => items.iter_mut().for_each(cut_strings),
        Value::Object(map) => map.values_mut().for_each(cut_strings),
        _ => {}
    }
}

/// The path of rotated file `n` (`security-events.jsonl.1` is the newest).
pub(crate) fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// Shifts `.1` → `.2` … (dropping `.keep`) and moves the live file to `.1`.
/// With `keep == 0` the live file is simply removed.
pub(crate) fn rotate(path: &Path, keep: u32) -> Result<(), SecurityLogError> {
    if keep == 0 {
        remove_if_exists(path)?;
        return Ok(());
    }
    remove_if_exists(&rotated(path, keep))?;
    for n in (1..keep).rev() {
        let from = rotated(path, n);
        if from.exists() {
            fs::rename(&from, rotated(path, n + 1))?;
        }
    }
    if path.exists() {
        fs::rename(path, rotated(path, 1))?;
    }
    Ok(())
}

fn remove_if_exists(path: &Path) -> Result<(), SecurityLogError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
    }
}

/// Opens the live file for appending (created 0600, a torn last line
/// closed first: see [`crate::jsonl`]).
pub(crate) fn open_append(path: &Path) -> Result<File, SecurityLogError> {
    Ok(crate::jsonl::open_append(path)?)
}

/// Appends one encoded line with a single write; `durable` also flushes it
/// to disk.
pub(crate) fn append(file: &mut File, line: &[u8], durable: bool) -> Result<(), SecurityLogError> {
    file.write_all(line)?;
    if durable {
        file.sync_data()?;
    }
    Ok(())
}

/// The newest `limit` records, newest first, optionally of one category,
/// from the live file and then the rotated ones. Lines that do not parse
/// (a torn last line after a crash) are skipped.
pub fn read_recent(
    path: &Path,
    keep: u32,
    limit: usize,
    category: Option<&str>,
) -> Result<Vec<SecurityRecord>, SecurityLogError> {
    let mut out = Vec::new();
    let files = std::iter::once(path.to_path_buf()).chain((1..=keep).map(|n| rotated(path, n)));
    for file in files {
        if out.len() >= limit {
            break;
        }
        let text = match fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e.into()),
        };
        let records = text
            .lines()
            .rev()
            .filter_map(|line| serde_json::from_str::<SecurityRecord>(line).ok())
            .filter(|r| category.is_none_or(|c| r.event.category == c));
        out.extend(records.take(limit - out.len()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security_log::types::SecurityEvent;
    use serde_json::json;

    fn record(category: &str, detail: Value) -> SecurityRecord {
        SecurityRecord {
            ts: "2026-12-01T00:00:00Z".into(),
            event: SecurityEvent::new(category, "test", "deny", detail),
        }
    }

    #[test]
    fn a_line_is_one_json_object_and_never_exceeds_the_bound() {
        let small = encode_line(&record("hook_decision", json!({"tool": "bash"}))).unwrap();
        assert_eq!(small.iter().filter(|b| **b == b'\n').count(), 1);
        let huge = "x".repeat(100_000);
        let big = encode_line(&record("read_denied", json!({"path": huge, "n": [huge]}))).unwrap();
        assert!(big.len() <= MAX_LINE_BYTES, "{}", big.len());
        let back: SecurityRecord = serde_json::from_slice(&big).unwrap();
        assert!(back.event.detail["path"].as_str().unwrap().ends_with('…'));
        let many: Vec<String> = (0..200)
            .map(|i| format!("{i}{}", "y".repeat(400)))
            .collect();
        let worst = encode_line(&record("x", json!(many))).unwrap();
        assert!(worst.len() <= MAX_LINE_BYTES);
        let back: SecurityRecord = serde_json::from_slice(&worst).unwrap();
        assert_eq!(back.event.detail, json!({"truncated": true}));
    }

    #[test]
    fn rotation_keeps_at_most_keep_old_files_and_reading_spans_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sel.jsonl");
        for round in 0..5 {
            let mut f = open_append(&path).unwrap();
            let line = encode_line(&record("r", json!({"round": round}))).unwrap();
            append(&mut f, &line, false).unwrap();
            rotate(&path, 2).unwrap();
        }
        assert!(!path.exists());
        assert!(rotated(&path, 1).exists() && rotated(&path, 2).exists());
        assert!(!rotated(&path, 3).exists());
        let mut f = open_append(&path).unwrap();
        append(
            &mut f,
            &encode_line(&record("r", json!({"round": 5}))).unwrap(),
            true,
        )
        .unwrap();
        let rounds: Vec<i64> = read_recent(&path, 2, 10, None)
            .unwrap()
            .iter()
            .map(|r| r.event.detail["round"].as_i64().unwrap())
            .collect();
        assert_eq!(rounds, vec![5, 4, 3]);
    }

    #[test]
    fn reading_skips_a_torn_line_and_filters_by_category() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sel.jsonl");
        let mut f = open_append(&path).unwrap();
        for (i, cat) in ["a", "b", "a"].iter().enumerate() {
            append(
                &mut f,
                &encode_line(&record(cat, json!({"i": i}))).unwrap(),
                false,
            )
            .unwrap();
        }
        f.write_all(b"{\"ts\":\"2026-").unwrap();
        let all = read_recent(&path, 3, 10, None).unwrap();
        assert_eq!(all.len(), 3);
        // Reopening after the torn write starts the next record on a new
        // line, so it is not lost with the fragment.
        let mut f = open_append(&path).unwrap();
        append(
            &mut f,
            &encode_line(&record("b", json!({"i": 3}))).unwrap(),
            false,
        )
        .unwrap();
        assert_eq!(
            read_recent(&path, 3, 1, None).unwrap()[0].event.detail["i"],
            3
        );
        let only_a = read_recent(&path, 3, 10, Some("a")).unwrap();
        assert_eq!(
            only_a
                .iter()
                .map(|r| r.event.detail["i"].clone())
                .collect::<Vec<_>>(),
            vec![json!(2), json!(0)]
        );
        assert_eq!(read_recent(&path, 3, 1, None).unwrap().len(), 1);
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&fs::metadata(&path).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600);
    }
}
