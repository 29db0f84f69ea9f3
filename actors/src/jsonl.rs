//! Append-only JSON-lines files, the way every log in the data home is
//! written (security events, transcripts): created 0600, opened for
//! append, and a torn last line (a crash mid-write) closed with a newline
//! before the next record, so one lost fragment never takes the next
//! record with it. Readers skip lines that do not parse.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` for appending (created 0600, parent directories too),
/// first closing a torn last line.
pub fn open_append(path: &Path) -> std::io::Result<File> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let len = file.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.read_exact_at(&mut last, len - 1)?;
        if last[0] != b'\n' {
            file.write_all(b"\n")?;
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_line_is_closed_before_the_next_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b.jsonl");
        open_append(&path)
            .unwrap()
            .write_all(b"{\"a\":1}\n{\"tor")
            .unwrap();
        open_append(&path)
            .unwrap()
            .write_all(b"{\"b\":2}\n")
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"a\":1}\n{\"tor\n{\"b\":2}\n");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
    }
}
