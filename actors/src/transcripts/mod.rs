//! # Transcripts: every session's turns, for context and consolidation
//!
//! Owns `<home>/sessions/`: one JSON-lines transcript per session
//! (`<key>.jsonl`, the key percent-encoded into a safe file name) and its
//! metadata (`<key>.meta.json`: user, first and last activity, turn count,
//! and the consolidator's persisted `last_consolidated` marker).
//!
//! Who talks to it: the gateway API (`POST /api/sessions/{key}/messages`
//! appends every turn; issue 13), the context builder (thread history, the
//! `[Other chat tabs]` and `## Recent Session Context` sections read other
//! sessions), the Claude Code hook adapter (`POST /api/sessions/{key}/import`:
//! Claude Code's own transcript, idempotent by each line's id; issue 15),
//! and the consolidator (issue 14, spec "Consolidation": it
//! reads from its marker on and advances it).
//!
//! Why an actor: appends from several HTTP workers must not interleave and
//! the metadata is read-modify-write; one owner serializes both.

mod actor;
mod error;
mod file;
mod handle;
mod import;
mod messages;
mod types;

pub use error::TranscriptError;
pub use file::{MAX_KEY_CHARS, MAX_TURN_CHARS};
pub use handle::TranscriptsHandle;
pub use types::{
    ImportOutcome, ImportedTurn, NewTurn, PromptOrder, RefusedTurn, Role, SessionMeta,
    TranscriptsConfig, Turn,
};
