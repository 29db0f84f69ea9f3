//! # SecurityLog: the security event log (SEL)
//!
//! Owns `security-events.jsonl` in the data home: an append-only JSON-lines
//! record of every decision that guards the agent — hook decisions, denied
//! reads, injection blocks, skill toggles and trigger matches, auth
//! failures. Operators read it with `kirocrew security events -n 20` and
//! the dashboard; the operator console subscribes to it live.
//!
//! Why an actor: appends from every surface (HTTP workers, the store, the
//! hook runner) must not interleave inside a line or race a rotation, and
//! the file has one owner like every other piece of state (spec: the "security
//! event log" referred to throughout "Hooks", "safe_read_file", "Skills →
//! inject toggle"; ARCHITECTURE "Actors: who owns what").
//!
//! Rules kept here:
//! - one event = one line, written with a single `write` on an `O_APPEND`
//!   handle, so a crash leaves at most a torn last line (readers skip it);
//! - bounded: a line never exceeds [`MAX_LINE_BYTES`] (long detail strings
//!   are cut), and the file is rotated to `.1`, `.2`, … when the next line
//!   would take it past `max_bytes`, keeping `keep` old files;
//! - events marked `durable` are flushed to disk (`fdatasync`) before the
//!   caller hears "recorded": `safe_read_file_internal` reads a sensitive
//!   file only after such a record succeeded (fail-closed);
//! - the file is created 0600: it names paths and tools the agent touched.
//!
//! Who talks to it: HTTP routes (auth failures, skill toggles, hook
//! decisions), the hook runner, channel history, the CLI (`security
//! events`, reading the file with [`read_recent`] without the actor).

mod actor;
mod error;
mod file;
mod handle;
mod messages;
mod types;

pub use error::SecurityLogError;
pub use file::{read_recent, MAX_LINE_BYTES};
pub use handle::SecurityLogHandle;
pub use types::{SecurityEvent, SecurityLogConfig, SecurityRecord, LOG_FILE_NAME};
