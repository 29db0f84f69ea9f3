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
//! See `persist.rs`: the index and a hashed sidecar, written atomically;
//! anything stale or corrupt loads as `Ok(None)` and is rebuilt.
//!
//! ## Blocking
//! `build`, `save` and `load` do CPU work and file I/O proportional to the
//! store (a build of 10k 384-d rows takes ~2 s on the 2-core dev box; a
//! load, a read plus a hash, tens of milliseconds); run them off the
//! actor's thread (`spawn_blocking`/`SyncArbiter`). `add` (~0.2 ms),
//! `remove` and `search` (~50 µs at 10k) are cheap.

mod exact;
mod index;
mod persist;
mod slots;
#[cfg(test)]
mod tests;

pub use exact::exact_search;
pub use index::{build, distance_to_similarity, AnnError, AnnIndex};
pub use persist::{sidecar_path, IndexMeta};
