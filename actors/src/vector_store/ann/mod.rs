//! Approximate nearest neighbours over the episodic memory vectors.
//!
//! Spec: "Vector index: usearch HNSW keyed by the row id itself (no
//! separate id map to desync), entries removed on tombstone, saved beside
//! memory.db and loaded at start when it matches the stored vectors (count
//! and embedding space), else rebuilt from the vectors in SQLite. Never
//! rebuilt on a normal start. Exact scan over stored vectors when the index
//! is unavailable or when the store is small enough that exact is faster."
//!
//! ## Keys
//! The usearch key *is* the `episodic_memories` row id. There is no second
//! table mapping slots to rows, so nothing can drift apart: a tombstone is
//! `remove(id)`, a re-embed is `add(id, v)` (which replaces).
//!
//! ## Scores
//! The index stores vectors as f16 ([`SCALAR`]): a search is dominated by
//! random reads of neighbour vectors, and halving their bytes made it ~2×
//! faster at 10k rows (`cargo bench --bench ann`: 31 µs vs 60 µs for k = 10,
//! recall@10 against the exact f32 scan 0.984 vs 0.985). Callers that need
//! exact cosines re-score the few candidates from their f32 copies. The
//! metric is usearch's cosine. usearch reports cosine
//! *distance* (`1 - cos`); everything here returns cosine *similarity*
//! (`1 - distance`), best first, the same scale as
//! [`crate::embedder::vector::cosine`] and [`exact_search`].
//!
//! ## On disk
//! `save` writes the usearch file at `path` and a sidecar
//! `<path>.meta.json` holding the [`IndexMeta`] (embedding-space signature
//! and row count) plus the length and SHA-256 of the index file. Both are
//! written to a temporary file in the same directory and renamed into
//! place, index first. `load` only accepts the pair when the sidecar
//! matches what the caller expects *and* the index bytes hash to what the
//! sidecar recorded, so a torn save (new index, old sidecar), a truncated or
//! bit-flipped file, or a file from another space all come back as
//! `Ok(None)`: the caller rebuilds from SQLite with [`build`]. A corrupt
//! graph never reaches usearch's loader.
//!
//! ## Blocking
//! `build`, `save` and `load` do CPU work and file I/O proportional to the
//! store (a build of 10k 384-d rows takes ~2 s on the 2-core dev box; a
//! load, a read plus a hash, tens of milliseconds); run them off the
//! actor's thread (`spawn_blocking`/`SyncArbiter`). `add` (~0.2 ms),
//! `remove` and `search` (~50 µs at 10k) are cheap.

use std::ffi::OsString;
use std::fmt::Display;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Condvar, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

mod exact;

pub use exact::exact_search;

/// HNSW graph degree, insert and search candidate lists. Tuned on 10k
/// clustered 384-d vectors (benches/ann.rs data; a sweep of M 8..32 and ef
/// 10..64): search time is dominated by random reads of 1.5 KiB vectors, so
/// a sparser graph and a short candidate list pay off; M = 12 / ef = 24
/// keeps recall@10 against the exact scan at ~0.985-0.99 (M = 16 / ef = 64,
/// usearch's defaults, reach 1.0 at about twice the latency). Spelled out so
/// a library upgrade cannot silently change the graph.
const CONNECTIVITY: usize = 12;
/// Candidate list size while inserting.
const EXPANSION_ADD: usize = 128;
/// Candidate list size while searching (usearch widens it to `k` when `k`
/// is larger).
const EXPANSION_SEARCH: usize = 24;
/// Capacity reserved by a new index, and the smallest growth step.
const MIN_CAPACITY: usize = 64;
/// Bounds on the concurrent searches served at once (the machine's
/// parallelism, clamped); more wait for a slot.
const MIN_SEARCH_SLOTS: usize = 4;
const MAX_SEARCH_SLOTS: usize = 64;
/// Version of the sidecar layout; any other value is treated as stale
/// (2: vectors stored as f16).
const SIDECAR_FORMAT: u32 = 2;
/// How the graph stores vectors (see "Scores" above).
const SCALAR: ScalarKind = ScalarKind::F16;

/// Everything the index can fail with. Loading never fails for a missing,
/// stale or corrupt file (that is `Ok(None)`); these are real errors.
#[derive(Debug, thiserror::Error)]
pub enum AnnError {
    /// An index needs at least one dimension.
    #[error("an index needs a non-zero dimension")]
    ZeroDimension,
    /// A vector's length differs from the index dimension.
    #[error("vector has {got} dimensions; the index has {expected}")]
    DimensionMismatch {
        /// The index dimension.
        expected: usize,
        /// The offered vector's length.
        got: usize,
    },
    /// The metadata offered to `save`/`load` does not describe this index.
    #[error("invalid index metadata: {0}")]
    Meta(String),
    /// usearch refused an operation.
    #[error("vector index error: {0}")]
    Index(String),
    /// Writing the index or its sidecar failed.
    #[error("vector index I/O error: {0}")]
    Io(#[from] io::Error),
    /// The sidecar could not be serialized.
    #[error("vector index metadata encoding failed: {0}")]
    Json(#[from] serde_json::Error),
}

fn index_err(e: impl Display) -> AnnError {
    AnnError::Index(e.to_string())
}

/// What a saved index describes: the embedding space its vectors were made
/// in and how many rows it holds. `load` accepts a file only when both
/// equal what the caller counts in SQLite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexMeta {
    /// `<model_id>/<dim>`, as [`super::signature`] makes it.
    pub signature: String,
    /// Live (non-tombstoned) vectors in the index.
    pub count: u64,
}

impl IndexMeta {
    /// Metadata for `count` vectors of `model_id`/`dim`.
    pub fn new(model_id: &str, dim: usize, count: u64) -> Self {
        Self {
            signature: super::signature(model_id, dim),
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
struct Sidecar {
    format: u32,
    signature: String,
    count: u64,
    dim: usize,
    /// Length of the index file in bytes.
    index_bytes: u64,
    /// Hex SHA-256 of the index file.
    index_sha256: String,
}

/// `<path>.meta.json`.
pub fn sidecar_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".meta.json");
    PathBuf::from(name)
}

/// Cosine similarity from usearch's cosine distance, clamped to [-1, 1]
/// (the SIMD kernels may overshoot by an ulp or two).
pub fn distance_to_similarity(distance: f32) -> f32 {
    (1.0 - distance).clamp(-1.0, 1.0)
}

/// An HNSW index of L2-normalized f32 vectors keyed by episodic row id.
///
/// `Send + Sync`: searches may run from several threads at once (`&self`);
/// adds and removes need `&mut self`.
pub struct AnnIndex {
    inner: Index,
    dim: usize,
    slots: Slots,
}

impl std::fmt::Debug for AnnIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnnIndex")
            .field("dim", &self.dim)
            .field("len", &self.len())
            .field("capacity", &self.inner.capacity())
            .finish()
    }
}

fn options(dim: usize) -> IndexOptions {
    IndexOptions {
        dimensions: dim,
        metric: MetricKind::Cos,
        quantization: ScalarKind::F16,
        connectivity: CONNECTIVITY,
        expansion_add: EXPANSION_ADD,
        expansion_search: EXPANSION_SEARCH,
        multi: false,
    }
}

impl AnnIndex {
    /// An empty index for `dim`-dimensional vectors.
    pub fn new(dim: usize) -> Result<Self, AnnError> {
        Self::with_capacity(dim, MIN_CAPACITY)
    }

    fn with_capacity(dim: usize, capacity: usize) -> Result<Self, AnnError> {
        if dim == 0 {
            return Err(AnnError::ZeroDimension);
        }
        let inner = Index::new(&options(dim)).map_err(index_err)?;
        let slots = Slots::new();
        inner
            .reserve_capacity_and_threads(capacity.max(MIN_CAPACITY), slots.count)
            .map_err(index_err)?;
        Ok(Self { inner, dim, slots })
    }

    /// The vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Live vectors (tombstoned ones excluded).
    pub fn len(&self) -> usize {
        self.inner.size()
    }

    /// Whether the index holds no live vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `id` has a vector in the index.
    pub fn contains(&self, id: u64) -> bool {
        self.inner.contains(id)
    }

    /// Stores `vector` under `id`, replacing any vector it had. Grows the
    /// index as needed, so this never fails for capacity.
    pub fn add(&mut self, id: u64, vector: &[f32]) -> Result<(), AnnError> {
        self.check_dim(vector)?;
        if self.inner.contains(id) {
            // usearch refuses duplicate keys; the freed slot is reused below.
            self.inner.remove(id).map_err(index_err)?;
        }
        self.ensure_room(1)?;
        self.inner.add(id, vector).map_err(index_err)
    }

    /// Drops `id` (a tombstoned row). Returns whether it was present.
    pub fn remove(&mut self, id: u64) -> Result<bool, AnnError> {
        Ok(self.inner.remove(id).map_err(index_err)? > 0)
    }

    /// The `k` nearest stored vectors to `query` as `(id, cosine
    /// similarity)`, best first. Fewer when the index holds fewer; empty for
    /// `k == 0`, an empty index, or a query of the wrong dimension (logged).
    pub fn search(&self, query: &[f32], k: usize) -> Vec<(u64, f32)> {
        if k == 0 || self.is_empty() {
            return Vec::new();
        }
        if let Err(e) = self.check_dim(query) {
            tracing::warn!(error = %e, "vector index queried with a vector of the wrong size");
            return Vec::new();
        }
        let found = {
            let _slot = self.slots.acquire();
            self.inner.search(query, k.min(self.len()))
        };
        match found {
            Ok(found) => found
                .keys
                .into_iter()
                .zip(found.distances)
                .map(|(id, d)| (id, distance_to_similarity(d)))
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, "vector index search failed");
                Vec::new()
            }
        }
    }

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
        write_atomic(path, &bytes)?;
        write_atomic(&sidecar_path(path), &serde_json::to_vec_pretty(&sidecar)?)?;
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

    fn check_dim(&self, vector: &[f32]) -> Result<(), AnnError> {
        if vector.len() == self.dim {
            Ok(())
        } else {
            Err(AnnError::DimensionMismatch {
                expected: self.dim,
                got: vector.len(),
            })
        }
    }

    /// Reserves room for `extra` more vectors, growing by half (at least
    /// [`MIN_CAPACITY`]) so a stream of adds reallocates rarely. Slots freed
    /// by `remove` are reused by usearch and need no room.
    fn ensure_room(&mut self, extra: usize) -> Result<(), AnnError> {
        let needed = self.inner.size() + extra;
        let capacity = self.inner.capacity();
        if needed <= capacity {
            return Ok(());
        }
        let grown = needed.max(capacity + (capacity / 2).max(MIN_CAPACITY));
        self.inner
            .reserve_capacity_and_threads(grown, self.slots.count)
            .map_err(index_err)
    }
}

/// usearch serves each call from one of a fixed number of per-thread
/// contexts and fails a search that finds none free ("Reserve capacity
/// ahead of searches!"). This counting semaphore, sized like the contexts,
/// makes an extra concurrent search wait for a context instead.
struct Slots {
    count: usize,
    free: Mutex<usize>,
    freed: Condvar,
}

struct SlotGuard<'a>(&'a Slots);

impl Slots {
    fn new() -> Self {
        let count = std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .clamp(MIN_SEARCH_SLOTS, MAX_SEARCH_SLOTS);
        Self {
            count,
            free: Mutex::new(count),
            freed: Condvar::new(),
        }
    }

    fn acquire(&self) -> SlotGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        SlotGuard(self)
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

/// Builds an index from `(row id, vector)` pairs, e.g. every episodic
/// vector of the current space read back from SQLite. A repeated id keeps
/// its last vector.
pub fn build(
    dim: usize,
    rows: impl IntoIterator<Item = (u64, Vec<f32>)>,
) -> Result<AnnIndex, AnnError> {
    let rows = rows.into_iter();
    let mut index = AnnIndex::with_capacity(dim, rows.size_hint().0)?;
    for (id, vector) in rows {
        index.add(id, &vector)?;
    }
    Ok(index)
}

/// Writes `bytes` to `path` through a temp file in the same directory,
/// synced before the rename, so readers see the old file or the new one.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let mut tmp_name = OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".tmp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, AtomicOrdering::Relaxed)
    ));
    let tmp = dir.join(tmp_name);
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    // Make the rename itself durable; not every platform can sync a directory.
    if let Ok(dir) = fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / norm).collect()
    }

    #[test]
    fn distance_converts_to_similarity() {
        assert_eq!(distance_to_similarity(0.0), 1.0);
        assert_eq!(distance_to_similarity(1.0), 0.0);
        assert_eq!(distance_to_similarity(2.0), -1.0);
        assert_eq!(distance_to_similarity(-1e-7), 1.0, "clamped");
        assert_eq!(distance_to_similarity(2.0 + 1e-6), -1.0, "clamped");
    }

    #[test]
    fn meta_dimension_comes_from_the_signature() {
        let meta = IndexMeta::new("org/model-v1", 384, 7);
        assert_eq!(meta.signature, "org/model-v1/384");
        assert_eq!(meta.dim(), Some(384));
        let bad = |s: &str| IndexMeta {
            signature: s.into(),
            count: 0,
        };
        assert_eq!(bad("model").dim(), None);
        assert_eq!(bad("model/x").dim(), None);
        assert_eq!(bad("model/0").dim(), None);
    }

    #[test]
    fn sidecar_sits_beside_the_index() {
        assert_eq!(
            sidecar_path(Path::new("/data/memory.ann")),
            Path::new("/data/memory.ann.meta.json")
        );
        assert_eq!(
            sidecar_path(Path::new("memory.ann")),
            Path::new("memory.ann.meta.json")
        );
    }

    #[test]
    fn sidecar_json_round_trips() {
        let sidecar = Sidecar {
            format: SIDECAR_FORMAT,
            signature: "m/3".into(),
            count: 2,
            dim: 3,
            index_bytes: 10,
            index_sha256: "00ff".into(),
        };
        let json = serde_json::to_vec(&sidecar).unwrap();
        assert_eq!(serde_json::from_slice::<Sidecar>(&json).unwrap(), sidecar);
    }

    #[test]
    fn save_refuses_meta_that_does_not_describe_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.ann");
        let mut index = AnnIndex::new(3).unwrap();
        index.add(1, &unit(&[1.0, 0.0, 0.0])).unwrap();
        let wrong_dim = IndexMeta::new("m", 4, 1);
        assert!(matches!(
            index.save(&path, &wrong_dim),
            Err(AnnError::Meta(_))
        ));
        let wrong_count = IndexMeta::new("m", 3, 2);
        assert!(matches!(
            index.save(&path, &wrong_count),
            Err(AnnError::Meta(_))
        ));
        assert!(!path.exists() && !sidecar_path(&path).exists());
        let bad_expected = IndexMeta {
            signature: "m".into(),
            count: 1,
        };
        assert!(matches!(
            AnnIndex::load(&path, &bad_expected),
            Err(AnnError::Meta(_))
        ));
    }

    #[test]
    fn zero_dimension_and_wrong_sizes_are_errors() {
        assert!(matches!(AnnIndex::new(0), Err(AnnError::ZeroDimension)));
        let mut index = AnnIndex::new(3).unwrap();
        assert!(matches!(
            index.add(1, &[1.0, 0.0]),
            Err(AnnError::DimensionMismatch {
                expected: 3,
                got: 2
            })
        ));
        index.add(1, &[1.0, 0.0, 0.0]).unwrap();
        assert!(index.search(&[1.0, 0.0], 5).is_empty());
        assert!(index.search(&[1.0, 0.0, 0.0], 0).is_empty());
        assert_eq!(index.search(&[1.0, 0.0, 0.0], 5), vec![(1, 1.0)]);
    }

    #[test]
    fn growing_past_the_initial_capacity() {
        let mut index = AnnIndex::new(2).unwrap();
        for id in 0..(3 * MIN_CAPACITY as u64) {
            let angle = id as f32 * 0.01;
            index.add(id, &[angle.cos(), angle.sin()]).unwrap();
        }
        assert_eq!(index.len(), 3 * MIN_CAPACITY);
        assert_eq!(index.search(&[1.0, 0.0], 1)[0].0, 0);
    }
}
