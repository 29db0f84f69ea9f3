//! The salvage fast path: reuse the GGUF a previous Ollama-based install
//! already has on disk instead of downloading 610 MB again.
//!
//! Ollama stores layers content-addressed as `blobs/sha256-<digest>`, and the
//! Ollama-era model is byte-identical to ours, so a pinned digest names the
//! blob directly (spec: "Model Download Manager → Salvage fast-path").

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::error::DownloadError;
use super::files::{self, Sink};

/// Where Ollama keeps blobs: the explicit setting, else
/// `$OLLAMA_MODELS/blobs`, else `<home>/.ollama/models/blobs`.
pub fn ollama_blobs_dir(
    explicit: Option<&Path>,
    ollama_models: Option<&OsStr>,
    home: Option<&OsStr>,
) -> Option<PathBuf> {
    let non_empty = |v: Option<&OsStr>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    explicit
        .map(Path::to_path_buf)
        .or_else(|| non_empty(ollama_models).map(|m| m.join("blobs")))
        .or_else(|| non_empty(home).map(|h| h.join(".ollama").join("models").join("blobs")))
}

/// [`ollama_blobs_dir`] with this process's environment.
pub(super) fn blobs_dir_from_env(explicit: Option<&Path>) -> Option<PathBuf> {
    let models = std::env::var_os("OLLAMA_MODELS");
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"));
    ollama_blobs_dir(explicit, models.as_deref(), home.as_deref())
}

/// What a salvage copy needs.
pub(super) struct Salvage<'a> {
    /// The blob store.
    pub blobs_dir: &'a Path,
    /// The pinned digest (the blob's name); salvage never runs unpinned.
    pub sha256: &'a str,
    /// Staging file for the copy.
    pub staging: &'a Path,
    /// Final path.
    pub target: &'a Path,
    /// Minimum plausible size.
    pub min_bytes: u64,
    /// Progress granularity.
    pub progress_every: u64,
}

impl Salvage<'_> {
    /// Copies the blob into place if it exists and verifies. Returns whether
    /// the model is now installed; any failure is logged and falls through
    /// to the normal download.
    pub(super) fn run(&self, report: &mut dyn FnMut(u64, u64)) -> bool {
        let blob = self.blobs_dir.join(format!("sha256-{}", self.sha256));
        let Ok(meta) = std::fs::metadata(&blob) else {
            tracing::debug!(blob = %blob.display(), "no Ollama blob to salvage");
            return false;
        };
        if !meta.is_file() {
            return false;
        }
        let total = meta.len();
        tracing::info!(blob = %blob.display(), bytes = total, "salvaging the model from the Ollama blob store");
        match self.copy(&blob, total, report) {
            Ok(()) => {
                tracing::info!(path = %self.target.display(), "model salvaged from the Ollama blob store");
                true
            }
            Err(e) => {
                files::remove_quietly(self.staging);
                tracing::warn!(blob = %blob.display(), error = %e, "Ollama blob salvage failed; downloading instead");
                false
            }
        }
    }

    fn copy(
        &self,
        blob: &Path,
        total: u64,
        report: &mut dyn FnMut(u64, u64),
    ) -> Result<(), DownloadError> {
        let io_err = |e: std::io::Error| DownloadError::Io(e.to_string());
        let mut source = std::fs::File::open(blob).map_err(io_err)?;
        let mut sink = Sink::create(self.staging).map_err(io_err)?;
        let pumped = sink.pump(&mut source, self.progress_every, &mut |n| report(n, total));
        if let Err(files::PumpError::Read(e) | files::PumpError::Write(e)) = pumped {
            return Err(io_err(e));
        }
        let (bytes, actual) = sink.finish().map_err(io_err)?;
        report(bytes, total);
        files::verify(bytes, &actual, Some(self.sha256), self.min_bytes)?;
        files::commit(self.staging, self.target).map_err(io_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_dir_precedence() {
        let explicit = Path::new("/x/blobs");
        let models = OsStr::new("/om");
        let home = OsStr::new("/home/u");
        assert_eq!(
            ollama_blobs_dir(Some(explicit), Some(models), Some(home)),
            Some(PathBuf::from("/x/blobs"))
        );
        assert_eq!(
            ollama_blobs_dir(None, Some(models), Some(home)),
            Some(PathBuf::from("/om/blobs"))
        );
        assert_eq!(
            ollama_blobs_dir(None, Some(OsStr::new("")), Some(home)),
            Some(PathBuf::from("/home/u/.ollama/models/blobs"))
        );
        assert_eq!(ollama_blobs_dir(None, None, None), None);
    }
}
