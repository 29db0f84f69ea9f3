//! # Claude Code integration (issue 15)
//!
//! Claude Code runs hook commands at points of a session and reads their
//! answer from stdout. `kirocrew hook claude-code` is that command: it
//! reads one event ([`event`]), asks the running daemon (through
//! [`crate::daemon_client`], never opening memory.db itself) and prints the
//! answer in the shape Claude Code's hook reference documents ([`answer`]):
//!
//! | event | kirocrew does | answer |
//! |---|---|---|
//! | `SessionStart` | session context (`POST /api/sessions/{key}/start`) | `additionalContext` |
//! | `UserPromptSubmit` | per-message context, hooks (`…/messages`, not recorded) | `additionalContext`, or `decision: block` |
//! | `PreToolUse` | tool decision (`POST /api/hooks/tool-call`) | `permissionDecision` |
//! | `PostToolUse` | skill crediting (`POST /api/skills/-/tool-events`) | nothing |
//! | `Stop`, `SessionEnd`, `PreCompact` | transcript import ([`transcript`], `…/import`) | nothing |
//!
//! The session key is `claude-code:<session_id>`. Context fails open (no
//! daemon: exit 0, nothing on stdout, one warning on stderr); tool
//! decisions fail closed when `claude_code.fail_closed` says so.
//! [`settings_merge`] is what `kirocrew install claude-code` does to a
//! settings.json.

pub mod adapter;
pub mod answer;
pub mod event;
pub mod settings_merge;
pub mod transcript;

pub use adapter::{handle_event, HookOutcome};
pub use event::{parse_event, EventError, HookEvent, HookInput};
