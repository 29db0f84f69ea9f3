//! File plumbing shared by download and salvage: unique staging names,
//! streaming copy with a running sha256, verification, and the atomic
//! install. Blocking I/O: called only from the download thread.

use std::collections::hash_map::RandomState;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::error::DownloadError;

/// Read/write chunk size of every copy.
const CHUNK: usize = 64 * 1024;

/// A per-process unique staging file in `dir`: `.<file>.<pid>.<nonce>.part`.
///
/// It lives in the target directory so the final rename never crosses a
/// filesystem, and its name carries pid and nonce so a gateway and a one-shot
/// CLI can never write into the same staging file (spec: atomic install).
pub(super) fn staging_path(dir: &Path, file_name: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState is seeded randomly per process; no extra crate needed.
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let nonce = hasher.finish();
    let pid = std::process::id();
    dir.join(format!(".{file_name}.{pid}.{nonce:016x}.part"))
}

/// The staging file a salvage copy uses, beside (never on top of) the
/// download's staging file, which may hold a resumable prefix.
pub(super) fn salvage_staging_path(staging: &Path) -> PathBuf {
    staging.with_extension("salvage.part")
}

/// Removes `path`, ignoring "already gone"; other failures are logged.
pub(super) fn remove_quietly(path: &Path) {
    match fs::remove_file(path) {
        Ok(()) => tracing::debug!(path = %path.display(), "removed staging file"),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "could not remove staging file")
        }
    }
}

/// Lowercase hex of a finished hash.
pub(super) fn hex_digest(hasher: Sha256) -> String {
    hex::encode(hasher.finalize())
}

/// A staging file being written, with the running hash of all its bytes.
pub(super) struct Sink {
    file: File,
    hasher: Sha256,
    written: u64,
}

/// Why [`Sink::pump`] stopped early.
pub(super) enum PumpError {
    /// The source failed (network error, short body).
    Read(io::Error),
    /// The staging file could not be written.
    Write(io::Error),
}

impl Sink {
    /// A new, empty staging file (truncating any old one).
    pub(super) fn create(path: &Path) -> io::Result<Self> {
        Ok(Self {
            file: File::create(path)?,
            hasher: Sha256::new(),
            written: 0,
        })
    }

    /// Reopens an existing staging file for appending, re-hashing the bytes
    /// already in it so the final digest covers the whole file.
    pub(super) fn resume(path: &Path) -> io::Result<Self> {
        let (written, hasher) = hash_reader(&mut File::open(path)?)?;
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(Self {
            file,
            hasher,
            written,
        })
    }

    /// Bytes in the staging file.
    pub(super) fn written(&self) -> u64 {
        self.written
    }

    /// Empties the file and the hash (a server that ignored our Range).
    pub(super) fn restart(&mut self) -> io::Result<()> {
        self.file.set_len(0)?;
        self.hasher = Sha256::new();
        self.written = 0;
        Ok(())
    }

    /// Copies `reader` to the end, calling `progress(written)` whenever at
    /// least `every` bytes arrived since the last call.
    pub(super) fn pump(
        &mut self,
        reader: &mut dyn Read,
        every: u64,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), PumpError> {
        let mut buf = vec![0; CHUNK];
        let mut reported = self.written;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(PumpError::Read(e)),
            };
            // Unbuffered writes: on a broken transfer everything received
            // is already in the file, so a resume can start right after it.
            self.file.write_all(&buf[..n]).map_err(PumpError::Write)?;
            self.hasher.update(&buf[..n]);
            self.written += n as u64;
            if self.written - reported >= every.max(1) {
                reported = self.written;
                progress(self.written);
            }
        }
    }

    /// Flushes the file to disk and returns `(size, sha256 hex)`.
    pub(super) fn finish(self) -> io::Result<(u64, String)> {
        self.file.sync_all()?;
        Ok((self.written, hex_digest(self.hasher)))
    }
}

/// Checks a finished file: big enough, and hashing to the pin if one is set.
pub(super) fn verify(
    bytes: u64,
    actual_sha256: &str,
    pin: Option<&str>,
    min_bytes: u64,
) -> Result<(), DownloadError> {
    if bytes < min_bytes {
        return Err(DownloadError::Truncated {
            bytes,
            min: min_bytes,
        });
    }
    match pin {
        Some(expected) if expected != actual_sha256 => Err(DownloadError::ChecksumMismatch {
            expected: expected.to_owned(),
            actual: actual_sha256.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Size and sha256 of a whole file.
pub(super) fn sha256_file(path: &Path) -> io::Result<(u64, String)> {
    let (bytes, hasher) = hash_reader(&mut File::open(path)?)?;
    Ok((bytes, hex_digest(hasher)))
}

/// Feeds everything `reader` yields into a fresh hash.
fn hash_reader(reader: &mut dyn Read) -> io::Result<(u64, Sha256)> {
    let mut hasher = Sha256::new();
    let mut bytes = 0;
    let mut buf = vec![0; CHUNK];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok((bytes, hasher)),
            Ok(n) => {
                hasher.update(&buf[..n]);
                bytes += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Whether the file at `target` is an acceptable installed model.
///
/// Hashes only when a pin is set: an unpinned model has nothing to compare
/// against, so the size check is all there is.
pub(super) fn check_installed(
    target: &Path,
    pin: Option<&str>,
    min_bytes: u64,
) -> Result<(), DownloadError> {
    let io_err = |e: io::Error| DownloadError::Io(format!("{}: {e}", target.display()));
    let (bytes, actual) = match pin {
        Some(_) => sha256_file(target).map_err(io_err)?,
        None => (fs::metadata(target).map_err(io_err)?.len(), String::new()),
    };
    verify(bytes, &actual, pin, min_bytes)
}

/// Atomically moves a verified, synced staging file to `target`.
///
/// A rename within one directory is atomic, so readers see either no model
/// or the complete one, never a partial file at the final path.
pub(super) fn commit(staging: &Path, target: &Path) -> io::Result<()> {
    fs::rename(staging, target)?;
    if let Some(dir) = target.parent() {
        sync_dir(dir);
    }
    Ok(())
}

/// Persists the rename itself (the directory entry) on Unix; best effort,
/// because the file content is already durable and the rename visible.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
        tracing::debug!(dir = %dir.display(), error = %e, "could not fsync models directory");
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_names_are_hidden_unique_and_in_the_target_dir() {
        let dir = Path::new("/m");
        let a = staging_path(dir, "x.gguf");
        let b = staging_path(dir, "x.gguf");
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(dir));
        let name = a.file_name().unwrap().to_str().unwrap();
        let pid = std::process::id();
        assert!(name.starts_with(&format!(".x.gguf.{pid}.")), "{name}");
        assert!(name.ends_with(".part"));
        let salvage = salvage_staging_path(&a);
        assert!(salvage.to_str().unwrap().ends_with(".salvage.part"));
        assert_ne!(salvage, a);
    }

    #[test]
    fn verify_checks_size_then_digest() {
        let pin = "ab".repeat(32);
        assert!(verify(10, &pin, Some(&pin), 10).is_ok());
        assert!(verify(10, "whatever", None, 10).is_ok());
        assert_eq!(
            verify(9, &pin, Some(&pin), 10),
            Err(DownloadError::Truncated { bytes: 9, min: 10 })
        );
        assert!(matches!(
            verify(10, "cd", Some(&pin), 10),
            Err(DownloadError::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn pump_resume_and_restart_hash_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.part");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let expected = hex::encode(Sha256::digest(&data));

        let mut sink = Sink::create(&path).unwrap();
        let mut calls = Vec::new();
        let _ = sink.pump(&mut &data[..70_000], 30_000, &mut |n| calls.push(n));
        assert_eq!(sink.written(), 70_000);
        drop(sink);
        assert!(calls.iter().all(|n| *n >= 30_000), "{calls:?}");
        assert!(!calls.is_empty());

        let mut sink = Sink::resume(&path).unwrap();
        assert_eq!(sink.written(), 70_000);
        let _ = sink.pump(&mut &data[70_000..], 1 << 20, &mut |_| {});
        assert_eq!(sink.finish().unwrap(), (200_000, expected.clone()));
        assert_eq!(sha256_file(&path).unwrap(), (200_000, expected.clone()));

        let mut sink = Sink::resume(&path).unwrap();
        sink.restart().unwrap();
        let _ = sink.pump(&mut &data[..], 1 << 20, &mut |_| {});
        assert_eq!(sink.finish().unwrap(), (200_000, expected));
    }
}
