//! # VectorStore: the owner of memory.db
//!
//! Owns the memory.db connection pool: semantic key-value rows, episodic
//! fragments and their HNSW index, lessons, the audit trail and the
//! embedding-space record. Talked to by the HTTP routes
//! (`src/http/memory_*.rs`, `src/http/lessons.rs`), the CLI (`kirocrew
//! memory …`, `kirocrew learn …`), the Markdown migration, and later the
//! context builder and the consolidator — always through
//! [`VectorStoreHandle`].
//!
//! Spec sections: "Semantic Memory", "Episodic Memory", "Lessons in Vector
//! Memory", "Vector Memory → Thread safety", "Conflict resolution: which
//! layer wins".
//!
//! ## Shape
//! One actor, because memory.db has one owner; inside it, one folder per
//! domain with the same files: `types.rs` (records), `messages.rs` (the
//! actor protocol, `pub(crate)`), `handle.rs` (that domain's methods on
//! [`VectorStoreHandle`]), `db.rs` (its SQL), and its pure logic beside
//! them. Dependencies run one way: `lessons` → `semantic` → `episodic` →
//! `space`; `transfer` sits on top. The root keeps what every domain
//! shares: the actor (`actor.rs`), the pool (`db.rs`), the audit trail
//! (`audit.rs`), the error (`error.rs`), the handle itself, and injection
//! screening as every writer runs it (`screening.rs`: rules + similarity
//! to the exemplar bank; `refusal.rs`: a block audited in memory.db and
//! recorded in the security event log).
//!
//! ## Why an actor and a pool
//! The reference serialized every statement on one connection behind a
//! reentrant lock. Here the mailbox is the lock: writes run as
//! `AtomicResponse` futures, so a read-modify-write (fetch incumbent →
//! ladder → upsert → audit) cannot interleave with another message; reads
//! run concurrently on the same pool under WAL. See `actor.rs`.

mod actor;
mod audit;
mod audit_feed;
mod db;
pub mod episodic;
mod error;
mod handle;
pub(crate) mod keyword;
pub mod lessons;
mod messages;
pub mod quarantine;
mod refusal;
mod screening;
mod semantic;
mod settings;
mod space;
mod stats;
mod text;
mod transfer;

pub use audit::{MemoryEvent, RecordEvent};
pub use error::VectorStoreError;
pub use handle::VectorStoreHandle;
pub use quarantine::skills::{HeldSkill, SkillWrite};
pub use quarantine::{QuarantineItem, Released, ReplayError, ReplayFuture, SkillReplay};
pub use semantic::{
    normalize_prefix, render_semantic_block, Fact, IfAbsentOutcome, KeyState, LabelledLine,
    LessonIndex, LessonRule, ScoredEntry, SemanticEntry, SemanticWrite, WriteOutcome, AGENT,
    BUILTIN_PREFIXES, DEFAULT_CONFIDENCE_THRESHOLD, MAX_KEY_LEN, MAX_VALUE_BYTES, MAX_VALUE_DEPTH,
    SEMANTIC_HEADER, USER_EXPLICIT,
};
pub use settings::StoreSettings;
pub use space::{
    run_backfill, semantic_document, signature, CommitVector, QueryEmbedStatus, QueryEmbedding,
    ReembedStatus, SpaceInfo,
};
pub use stats::{EpisodicStats, MemoryStats, SemanticStats};
pub use text::value_text;
pub use transfer::{
    ImportDocument, ImportEntry, ImportItem, ImportReport, MemoryExport, EXPORT_FORMAT,
    EXPORT_VERSION,
};
