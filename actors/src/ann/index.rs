//! The HNSW index itself: build, add, remove, search (usearch, cosine,
//! f16 storage). Saving and loading are in `persist.rs`.

use std::fmt::Display;
use std::io;

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use super::slots::Slots;

/// HNSW graph degree, insert and search candidate lists. Tuned on 10k
/// clustered 384-d vectors (benches/ann.rs data; a sweep of M 8..32 and ef
/// 10..64): search time is dominated by random reads of 1.5 KiB vectors, so
/// a sparser graph and a short candidate list pay off; M = 12 / ef = 24
/// keeps recall@10 against the exact scan at ~0.985-0.99 (M = 16 / ef = 64,
/// usearch's defaults, reach 1.0 at about twice the latency). Spelled out so
/// a library upgrade cannot silently change the graph.
const CONNECTIVITY: usize = 12;
/// Candidate list size while inserting.
pub(super) const EXPANSION_ADD: usize = 128;
/// Candidate list size while searching (usearch widens it to `k` when `k`
/// is larger).
pub(super) const EXPANSION_SEARCH: usize = 24;
/// Capacity reserved by a new index, and the smallest growth step.
pub(super) const MIN_CAPACITY: usize = 64;
/// Version of the sidecar layout; any other value is treated as stale
/// (2: vectors stored as f16).
pub(super) const SIDECAR_FORMAT: u32 = 2;
/// How the graph stores vectors (see "Scores" above).
pub(super) const SCALAR: ScalarKind = ScalarKind::F16;

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

pub(super) fn index_err(e: impl Display) -> AnnError {
    AnnError::Index(e.to_string())
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
    pub(super) inner: Index,
    pub(super) dim: usize,
    pub(super) slots: Slots,
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

pub(super) fn options(dim: usize) -> IndexOptions {
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
