//! # MemoryFiles: the owner of the Markdown memory layers
//!
//! Owns `workspace/memory/` (preferences.md, projects.md, history/) and the
//! full-text index `memory_index.db` beside memory.db. Talked to by the HTTP
//! routes (`src/http/memory_files.rs`), the CLI (`kirocrew memory search
//! --files`), the heartbeat (rebuild every 15 ticks, prune once a day) and
//! later the consolidator and the context builder — always through
//! [`MemoryFilesHandle`].
//!
//! Spec sections: "Memory (`memory.py`)", "Decaying Memory
//! (`read_recent_history`)", "History Pruning".
//!
//! Layout of the module: pure logic in [`history`] (file names, entries,
//! tiers, pruning selection), [`lemma`] (irregular forms, query building)
//! and [`context`] (cited, capped sections); file I/O and the five-second
//! history cache in [`files`]; section splitting in [`docs`]; the SQLite index in [`index`]; the actor's
//! messages in [`messages`].
//!
//! The actor runs on its own arbiter thread: reading up to 181 daily files
//! for a context build is synchronous file I/O, and it must not stall the
//! actors that share the system arbiter. Index operations run as
//! `AtomicResponse`s so they never interleave; the index is moved into the
//! running operation and back, so no lock guards it.

mod actor;
pub mod context;
mod disk;
pub mod docs;
mod error;
pub mod files;
mod handle;
pub(crate) mod history;
pub mod index;
pub(crate) mod lemma;
mod messages;

pub use actor::MemoryFilesConfig;
pub use context::{ContextCaps, ContextSection, MemoryContext};
pub use disk::{HISTORY_DIR, MAX_READ_BYTES, PREFERENCES_FILE, PROJECTS_FILE};
pub use docs::Doc;
pub use error::MemoryFilesError;
pub use files::{AppendedEntry, Layer, MemoryDir, PruneReport};
pub use handle::MemoryFilesHandle;
pub use index::{FileHit, FtsIndex};
pub use messages::IndexReport;
