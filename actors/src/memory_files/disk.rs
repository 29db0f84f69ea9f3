//! Reading the memory directory from disk: the layer file names, the size
//! bound on what is read, and the lossy, bounded text read every reader
//! (the files themselves, the index's document collection) shares.

use std::fs;
use std::path::Path;

use super::error::MemoryFilesError;

/// The preferences layer's file name.
pub const PREFERENCES_FILE: &str = "preferences.md";
/// The projects layer's file name.
pub const PROJECTS_FILE: &str = "projects.md";
/// The daily history folder.
pub const HISTORY_DIR: &str = "history";
/// Files larger than this are not read (a runaway file must not stall a
/// context build); they are logged and skipped.
pub const MAX_READ_BYTES: u64 = 4 << 20;

pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> MemoryFilesError + '_ {
    move |source| MemoryFilesError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Reads a file as text (lossily: a stray byte must not hide a whole day),
/// `None` if it is missing or too large.
pub(super) fn read_text(path: &Path) -> Result<Option<String>, MemoryFilesError> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(path)(e)),
    };
    if !meta.is_file() {
        return Ok(None);
    }
    if meta.len() > MAX_READ_BYTES {
        tracing::warn!(path = %path.display(), bytes = meta.len(), "memory file too large; skipped");
        return Ok(None);
    }
    let bytes = fs::read(path).map_err(io_err(path))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The `*.md` file names directly in `dir` (none if it cannot be read).
pub(super) fn markdown_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md"))
        .collect()
}
