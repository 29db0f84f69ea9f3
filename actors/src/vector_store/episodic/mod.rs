//! Episodic memory: conversation fragments with optional vectors (spec:
//! "Episodic Memory", "Fading → Episodic decay", cap eviction, the import
//! preservation mode).
//!
//! Owned by the `VectorStore` actor like semantic rows. Writes validate and
//! screen before anything is embedded or stored; exact duplicates are caught
//! by a blake3 content hash, near-duplicates (cosine > 0.88 against an
//! active row — tombstoned twins never block) by the vector mirror. Search
//! fuses the vector and BM25 rankings by default (hybrid mode), or
//! runs the reference's decayed-cosine ranking (vector mode) or BM25 alone;
//! see `rank.rs` for the scoring rules.
//!
//! Files: `types.rs` (records, limits), `messages.rs`
//! (the actor protocol), `handle.rs` (embed-first handle methods), `db.rs`
//! (SQL), `mirror.rs` (the in-actor copy of active rows and their vectors),
//! `bm25.rs` (the in-memory keyword postings the mirror keeps),
//! `search.rs` + `rank.rs` (ranking, pure), `index.rs` +
//! `index_messages.rs` (the HNSW index's life cycle), `block.rs` (the
//! `[Episodic Memory]` block).
//!
//! Retrieval v2 (issue 37), all in hybrid mode and each switchable for the
//! benchmark's ablation ([`Methods`]): `names.rs` reads who and what a text
//! names; `speakers.rs` keeps the store's people; `speaker_gate.rs` is the
//! speaker boost and the `speaker_mismatch` gate; `sessions.rs` the
//! two-stage session → turn score; `graph.rs` the entity graph and its
//! personalised PageRank; `signals.rs` reads those off the mirror for
//! `search.rs`.

mod block;
mod bm25;
pub(super) mod db;
pub(super) mod graph;
mod handle;
mod index;
pub(super) mod index_messages;
mod messages;
pub(super) mod mirror;
mod names;
pub(super) mod rank;
mod search;
mod sessions;
mod signals;
mod speaker_gate;
mod speakers;
pub(super) mod types;
pub(super) mod write;

pub use index::{index_path, IndexState, ANN_MIN_ROWS};
pub use types::{
    EpisodicContext, EpisodicEntry, EpisodicHit, EpisodicQuery, EpisodicWrite, Methods, Retrieval,
    ScoreParts, SearchMode, CONTEXT_CAP, CONTEXT_FRAGMENT_CHARS, CONTEXT_LIMIT,
    DEFAULT_EPISODIC_MAX, MAX_TEXT_CHARS, MIN_TEXT_CHARS,
};
