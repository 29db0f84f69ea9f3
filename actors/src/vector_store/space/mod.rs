//! The embedding space: which model's vectors the store holds, the
//! generation counter that keeps a vector made under a superseded model
//! out of the store, and the re-embed sweep that fills NULL vectors in
//! (spec: "Vector Memory → Thread safety", "In-Process Embedder → model
//! change", "Automatic migration → Re-embed sweep").
//!
//! Files: `types.rs` (space, commit vector, re-embed status; pure),
//! `db.rs` (SQL), `messages.rs` (the actor protocol), `handle.rs` (the one
//! embed-for-commit sequence and the space methods), `backfill.rs` (the
//! sweep).

mod backfill;
pub(super) mod db;
mod handle;
pub(super) mod messages;
pub(super) mod types;

pub use backfill::run_backfill;
pub use types::{
    semantic_document, signature, CommitVector, QueryEmbedStatus, QueryEmbedding, ReembedStatus,
    SpaceInfo,
};
