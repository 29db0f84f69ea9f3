//! `claude_code.*`: how the Claude Code hook adapter (`kirocrew hook
//! claude-code`) behaves. Kept apart from the daemon's settings because the
//! adapter is a short-lived process the agent starts, and these keys are
//! about that process only.

use serde::{Deserialize, Serialize};

use super::error::ConfigError;

/// Longest string Claude Code takes inline from a hook (longer output is
/// moved to a file and replaced by a preview), so the context budget may
/// not exceed it.
pub const CLAUDE_CODE_INLINE_CHARS: usize = 10_000;

/// The Claude Code hook adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaudeCodeSettings {
    /// Most characters of context handed to Claude Code per event
    /// (`additionalContext`).
    pub context_chars: usize,
    /// Deny a tool call when kirocrew cannot decide it (daemon down, error);
    /// off: Claude Code's own permission rules decide.
    pub fail_closed: bool,
    /// How long the adapter waits for the daemon, in seconds (Claude Code
    /// gives a `UserPromptSubmit` hook 30 s by default).
    pub timeout_secs: u64,
}

impl ClaudeCodeSettings {
    /// The range checks.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, reason: String| {
            Err(ConfigError::InvalidValue {
                key: key.to_owned(),
                reason,
            })
        };
        if !(100..=CLAUDE_CODE_INLINE_CHARS).contains(&self.context_chars) {
            return bad(
                "claude_code.context_chars",
                format!("must be between 100 and {CLAUDE_CODE_INLINE_CHARS}"),
            );
        }
        if !(1..=600).contains(&self.timeout_secs) {
            return bad(
                "claude_code.timeout_secs",
                "must be between 1 and 600".into(),
            );
        }
        Ok(())
    }
}
