//! Atomic file replacement, the one way every owner rewrites a file: a
//! temporary file in the target's directory, written and flushed to disk,
//! given the old file's permissions, renamed over the target, then the
//! directory synced. A crash (or SIGKILL) at any point leaves either the
//! old file or the new one, never a torn mix, and a rewrite never widens or
//! narrows who may read the file. A new file is private (0600, the
//! temporary file's mode): everything kirocrew writes lives in a private
//! data home or a user's own config.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically, creating the parent directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent(path);
    std::fs::create_dir_all(dir)?;
    replace_in(dir, path, bytes)
}

/// Writes `bytes` to `path` atomically in a directory that must exist
/// (for files whose folder has its own permissions to keep, such as a data
/// home this write must never create).
pub fn replace_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_in(parent(path), path, bytes)
}

fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

fn replace_in(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    if let Ok(old) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(old.permissions())?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename itself is durable once the directory is synced; not every
    // platform can sync a directory.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_rewrite_keeps_the_mode_and_a_new_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared.json");
        std::fs::write(&shared, b"old").unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&shared, b"new").unwrap();
        assert_eq!(std::fs::read(&shared).unwrap(), b"new");
        assert_eq!(mode(&shared), 0o644);

        let fresh = dir.path().join("a/b/fresh.json");
        write_atomic(&fresh, b"x").unwrap();
        assert_eq!(mode(&fresh), 0o600);
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(fresh.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["fresh.json"]);
    }

    #[test]
    fn replace_never_creates_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-home/cpu-kernels.json");
        assert!(replace_atomic(&missing, b"x").is_err());
        assert!(!dir.path().join("no-home").exists());
        let present = dir.path().join("cpu-kernels.json");
        replace_atomic(&present, b"x").unwrap();
        assert_eq!(std::fs::read(&present).unwrap(), b"x");
    }
}
