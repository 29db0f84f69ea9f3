//! # kirocrew-actors
//!
//! The stateful core of kirocrew. Every piece of mutable state (the memory
//! database, later the embedding model, the skill ledger, hook processes) has
//! exactly one owner here: an actix actor. Callers never touch that state
//! directly; they send messages through a cloneable `…Handle` whose async
//! methods return `Result<_, …Error>`, so `Addr<T>` and `MailboxError` never
//! leak into the HTTP layer (`src/http`) or the CLI (`src/cli`).
//!
//! Serialization comes from the owner's mailbox rather than from locks: the
//! reference implementation guarded one SQLite connection with a process-wide
//! `RLock` (spec: "Vector Memory → Thread safety"); here a read-modify-write
//! runs inside an `AtomicResponse` handler, so no other message of the same
//! actor interleaves with it.
//!
//! Pure domain logic (validation, scoring, screening, rendering) lives in plain
//! functions beside each actor and is unit-tested without actix.
//!
//! Nothing in this crate knows about HTTP.

pub mod clock;
pub mod download;
pub mod embedder;
pub mod heartbeat;
pub mod lessons_file;
pub mod memory_files;
pub mod migration;
pub mod screening;
pub mod vector_store;
