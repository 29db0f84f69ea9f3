//! Saving and loading the index (see the parent module).
//!
//! `save` writes the usearch file at `path` and a sidecar
//! `<path>.meta.json` holding the [`IndexMeta`] (embedding-space signature
//! and row count) plus the length and SHA-256 of the index file. Both are
//! written to a temporary file in the same directory and renamed into
//! place, index first. `load` only accepts the pair when the sidecar
//! matches what the caller expects *and* the index bytes hash to what the
//! sidecar recorded, so a torn save (new index, old sidecar), a truncated or
//! bit-flipped file, or a file from another space all come back as
//! `Ok(None)`: the caller rebuilds from SQLite with `build`. A corrupt
//! graph never reaches usearch's loader.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::atomic_file::replace_atomic;
use usearch::{Index, MetricKind};

use super::index::{
    index_err, options, AnnError, AnnIndex, EXPANSION_ADD, EXPANSION_SEARCH, SCALAR, SIDECAR_FORMAT,
};
use super::slots::Slots;

/// What a saved index describes: the embedding space its vectors were made
/// in and how many rows it holds. `load` accepts a file only when both
/// equal what the caller counts in SQLite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexMeta {
    /// The embedding space, as the caller names it; it must end in
    /// `/<dim>` (the store's `<model_id>/<dim>` signature does).
    pub signature: String,
    /// Live (non-tombstoned) vectors in the index.
    pub count: u64,
}

impl IndexMeta {
    /// Metadata for `count` vectors of the space `signature`.
    pub fn new(signature: impl Into<String>, count: u64) -> Self {
        Self {
            signature: signature.into(),
            count,
        }
    }

    /// The dimension named by the signature (the part after the last `/`).
    pub fn dim(&self) -> Option<usize> {
        let (_, dim) = self.signature.rsplit_once('/')?;
        dim.parse().ok().filter(|&d| d > 0)
    }
}

/// The sidecar written beside the index file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Sidecar {
    pub(super) format: u32,
    pub(super) signature: String,
    pub(super) count: u64,
    pub(super) dim: usize,
    /// Length of the index file in bytes.
    pub(super) index_bytes: u64,
    /// Hex SHA-256 of the index file.
    pub(super) index_sha256: String,
}

/// `<path>.meta.json`.
pub fn sidecar_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".meta.json");
    PathBuf::from(name)
}

impl AnnIndex {
    /// Writes the index to `path` and `meta` (plus the file's length and
    /// hash) to `<path>.meta.json`, each atomically (temp file + rename).
    /// `meta` must describe this index: its signature's dimension is
    /// [`dim`](Self::dim) and its count is [`len`](Self::len).
    pub fn save(&self, path: &Path, meta: &IndexMeta) -> Result<(), AnnError> {
        if meta.dim() != Some(self.dim) {
            return Err(AnnError::Meta(format!(
                "signature {:?} does not name dimension {}",
                meta.signature, self.dim
            )));
        }
        if meta.count != self.len() as u64 {
            return Err(AnnError::Meta(format!(
                "count {} but the index holds {} vectors",
                meta.count,
                self.len()
            )));
        }
        let mut bytes = vec![0u8; self.inner.serialized_length()];
        self.inner.save_to_buffer(&mut bytes).map_err(index_err)?;
        let sidecar = Sidecar {
            format: SIDECAR_FORMAT,
            signature: meta.signature.clone(),
            count: meta.count,
            dim: self.dim,
            index_bytes: bytes.len() as u64,
            index_sha256: hex::encode(Sha256::digest(&bytes)),
        };
        // Index first: a crash between the two renames leaves a sidecar whose
        // hash no longer matches, which `load` treats as stale.
        replace_atomic(path, &bytes)?;
        replace_atomic(&sidecar_path(path), &serde_json::to_vec_pretty(&sidecar)?)?;
        Ok(())
    }

    /// Loads the index saved at `path` if it matches `expected` (same
    /// signature and count) and is intact. `Ok(None)` when the file or its
    /// sidecar is missing, describes other vectors, or is corrupt or
    /// unreadable (logged as a warning): the caller rebuilds from SQLite.
    /// `Err` only when `expected` itself is malformed or usearch cannot
    /// allocate an index.
    pub fn load(path: &Path, expected: &IndexMeta) -> Result<Option<AnnIndex>, AnnError> {
        let dim = expected.dim().ok_or_else(|| {
            AnnError::Meta(format!(
                "signature {:?} does not end in a dimension",
                expected.signature
            ))
        })?;
        let meta_path = sidecar_path(path);
        let sidecar = match fs::read(&meta_path) {
            Ok(raw) => match serde_json::from_slice::<Sidecar>(&raw) {
                Ok(sidecar) => sidecar,
                Err(e) => {
                    tracing::warn!(path = %meta_path.display(), error = %e,
                        "vector index metadata is unreadable; rebuilding");
                    return Ok(None);
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                tracing::debug!(path = %meta_path.display(), "no saved vector index");
                return Ok(None);
            }
            Err(e) => {
                tracing::warn!(path = %meta_path.display(), error = %e,
                    "vector index metadata cannot be read; rebuilding");
                return Ok(None);
            }
        };
        if sidecar.format != SIDECAR_FORMAT
            || sidecar.signature != expected.signature
            || sidecar.dim != dim
            || sidecar.count != expected.count
        {
            tracing::info!(
                saved_signature = %sidecar.signature,
                saved_count = sidecar.count,
                signature = %expected.signature,
                count = expected.count,
                "saved vector index does not match the stored vectors; rebuilding"
            );
            return Ok(None);
        }
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                tracing::info!(path = %path.display(), "vector index file is missing; rebuilding");
                return Ok(None);
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e,
                    "vector index cannot be read; rebuilding");
                return Ok(None);
            }
        };
        if bytes.len() as u64 != sidecar.index_bytes
            || hex::encode(Sha256::digest(&bytes)) != sidecar.index_sha256
        {
            tracing::warn!(path = %path.display(), "vector index file is corrupt; rebuilding");
            return Ok(None);
        }
        match Self::from_bytes(&bytes, dim, expected.count) {
            Ok(index) => Ok(Some(index)),
            Err(reason) => {
                tracing::warn!(path = %path.display(), %reason,
                    "vector index file is unusable; rebuilding");
                Ok(None)
            }
        }
    }

    /// Deserializes a hash-checked index file, checking its header first.
    fn from_bytes(bytes: &[u8], dim: usize, count: u64) -> Result<AnnIndex, String> {
        let head = Index::metadata_from_buffer(bytes).map_err(|e| e.to_string())?;
        if head.dimensions != dim as u64
            || head.metric != MetricKind::Cos
            || head.quantization != SCALAR
            || head.multi
            || head.count_present != count
        {
            return Err(format!(
                "header says {} x {}-d {:?}/{:?}",
                head.count_present, head.dimensions, head.metric, head.quantization
            ));
        }
        let inner = Index::new(&options(dim)).map_err(|e| e.to_string())?;
        let slots = Slots::new();
        // Sets the thread slots only (no members yet); `load` keeps them.
        inner
            .reserve_capacity_and_threads(0, slots.count)
            .map_err(|e| e.to_string())?;
        inner.load_from_buffer(bytes).map_err(|e| e.to_string())?;
        inner.change_expansion_add(EXPANSION_ADD);
        inner.change_expansion_search(EXPANSION_SEARCH);
        if inner.dimensions() != dim || inner.size() as u64 != count {
            return Err(format!(
                "loaded {} x {}-d",
                inner.size(),
                inner.dimensions()
            ));
        }
        Ok(AnnIndex { inner, dim, slots })
    }
}
