//! # ChannelHistory: what each chat channel recorded
//!
//! Owns every channel's message buffer, the channel modes, and the
//! `history/` directory of the data home (`<channel_id>.jsonl` per
//! observe-mode channel, `channels.json` for the modes). Implements the
//! spec's "Memory across surfaces and channels" (`ChannelHistory`, the
//! `_user_authorized` gate, `context_for`, `_neutralize_structural_markers`).
//!
//! Who talks to it: the gateway (through `POST /api/channels/{id}/messages`)
//! pushes every message it sees, saying whether the sender is authorized
//! and whether the bot acts on it; the prompt builder reads
//! [`ChannelHistoryHandle::context_for`]; operators switch modes with
//! `PUT /api/channels/{id}/mode`. Unauthorized pushes and mode changes go
//! to the `SecurityLog`.
//!
//! Modes (spec table "Buffer limits"):
//!
//! | mode | records | entries | TTL | clock | durability |
//! |---|---|---|---|---|---|
//! | `mention` (default) | only messages the bot acts on | 50 | 300 s | monotonic | memory only |
//! | `observe` | every authorized message | `channels.observe_max_messages` (200) | `channels.observe_ttl_hours` (168 h) | wall | `history/<channel_id>.jsonl` |
//! | `off` | nothing | – | – | – | – |
//!
//! Rules kept here:
//! - an unauthorized sender is never recorded, in any mode, and each such
//!   push is a `channel_denied` security event on record before the push
//!   answers (`gate.rs` decides: the spec's
//!   `should_record_observe_history` and its early auth return, in one
//!   function);
//! - channel ids are 1–128 of `[A-Za-z0-9_.:-]` starting with a letter or
//!   digit, so `../../etc` is refused before any path is built; the file
//!   path is then resolved (links followed) and refused if it leaves the
//!   history directory or is sensitive (`sensitive_paths`);
//! - an observe file is compacted lazily on load (expired, surplus and
//!   unreadable lines dropped, file rewritten) and, beyond the spec, when
//!   appends have made it twice its bound, so it never grows unbounded;
//! - `set_observe` / `unset_observe` re-size the existing buffer to the
//!   other bound (newest entries kept); leaving observe deletes the file;
//!   switching to `off` also drops the buffer (an off channel keeps no
//!   context);
//! - a mode set through the API is saved in `history/channels.json`
//!   (atomic rewrite; only non-default modes) and reloaded at start, so it
//!   survives a restart; a `channels.json` that does not parse is moved
//!   aside and every channel falls back to `mention`, the mode that
//!   records least;
//! - [`ChannelHistoryHandle::context_for`] gives one line per message,
//!   `sender: text`, structural markers neutralized (see
//!   [`neutralize_structural_markers`]) and each line cut to 300 chars: the
//!   buffer is other people's words, injected into a later prompt.
//!
//! Time: the mention TTL reads the injected monotonic clock and the
//! observe TTL the injected wall clock, so tests move time instead of
//! sleeping.

mod actor;
mod buffer;
mod error;
mod gate;
mod handle;
mod markers;
mod message;
mod messages;
mod persist;
mod types;

pub use error::ChannelHistoryError;
pub use handle::ChannelHistoryHandle;
pub use markers::{neutralize_structural_markers, MAX_CONTEXT_LINE_CHARS};
pub use message::{MAX_SENDER_CHARS, MAX_STORED_TEXT_CHARS};
pub use types::{
    ChannelContext, ChannelHistoryConfig, ChannelMode, ChannelStatus, IncomingMessage, PushReport,
    SkipReason, MENTION_MAX_ENTRIES, MENTION_TTL, OBSERVE_MAX_ENTRIES, OBSERVE_TTL,
};
