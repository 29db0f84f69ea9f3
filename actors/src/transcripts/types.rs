//! Transcript data: turns as stored, per-session metadata, configuration.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::clock::SharedClock;

/// Who spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person.
    User,
    /// The agent.
    Assistant,
    /// A system note (tool result summaries, gateway notices).
    System,
}

impl Role {
    /// Parses `user`, `assistant` or `system`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "system" => Some(Role::System),
            _ => None,
        }
    }
}

/// One stored turn (one JSONL line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// When it was recorded (RFC 3339 UTC).
    pub ts: String,
    /// Who spoke.
    pub role: Role,
    /// What was said.
    pub text: String,
    /// The channel it came from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_id: Option<String>,
    /// The sender, if the gateway named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<String>,
    /// The id the turn had where it was imported from (a Claude Code
    /// transcript line's `uuid`); a second import of the same id is a no-op.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
}

/// A session's metadata (`<file>.meta.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// The session key as the gateway names it.
    pub key: String,
    /// The user it belongs to, if the gateway said.
    #[serde(default)]
    pub user: Option<String>,
    /// First turn.
    pub created_at: String,
    /// Latest turn.
    pub last_activity: String,
    /// Turns stored.
    pub turns: u64,
    /// User turns stored (`None` in metadata written before they were
    /// counted: then [`Self::turns`] stands in for them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_turns: Option<u64>,
    /// Turns already consolidated by the history path (the consolidator's
    /// persisted marker; the prefs path never advances it).
    #[serde(default)]
    pub last_consolidated: u64,
}

/// A new turn from a surface.
#[derive(Debug, Clone)]
pub struct NewTurn {
    /// Session key.
    pub session_key: String,
    /// Who spoke.
    pub role: Role,
    /// What was said.
    pub text: String,
    /// Channel, if any.
    pub channel_id: Option<String>,
    /// Sender, if any.
    pub sender: Option<String>,
    /// The session's user, if known (recorded on the session's metadata).
    pub user: Option<String>,
}

/// One turn of a transcript kept elsewhere (e.g. Claude Code's JSONL),
/// imported with the id it has there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedTurn {
    /// Its id at the source: the key of idempotence.
    pub source_id: String,
    /// Who spoke.
    pub role: Role,
    /// What was said.
    pub text: String,
    /// When it was said at the source (RFC 3339), if known; the import time
    /// otherwise.
    #[serde(default)]
    pub ts: Option<String>,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportOutcome {
    /// Turns appended.
    pub added: usize,
    /// Turns whose source id was already in the transcript.
    pub duplicates: usize,
    /// Turns refused, with why (empty or over-long text, control characters).
    pub refused: Vec<RefusedTurn>,
    /// The session's metadata after the import (`None` when nothing was
    /// ever stored for it).
    pub session: Option<SessionMeta>,
}

/// A turn an import refused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefusedTurn {
    /// Its id at the source.
    pub source_id: String,
    /// Why.
    pub reason: String,
}

/// Where transcripts live.
#[derive(Clone)]
pub struct TranscriptsConfig {
    /// `<home>/sessions`.
    pub dir: PathBuf,
    /// Time source.
    pub clock: SharedClock,
}

impl std::fmt::Debug for TranscriptsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptsConfig")
            .field("dir", &self.dir)
            .finish()
    }
}

/// Whether a user prompt is the first of its session (episodic memory goes
/// with the first; spec "Context Builder → Every message"), and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptOrder {
    /// The first user prompt of the session.
    pub first: bool,
    /// Why, in words for the receipt.
    pub why: String,
}

impl PromptOrder {
    /// The order of a prompt in a session with metadata `meta` (none: no
    /// turn recorded), given whether an earlier prompt of the same session
    /// was already claimed (answered but not yet recorded: Claude Code's
    /// transcript arrives only when the turn ends).
    pub fn of(meta: Option<&SessionMeta>, claimed_before: bool) -> Self {
        let later = |why: String| Self { first: false, why };
        match meta {
            Some(SessionMeta {
                user_turns: Some(n),
                ..
            }) if *n > 0 => later(format!("the session has {n} recorded user turns")),
            Some(SessionMeta {
                user_turns: None,
                turns,
                ..
            }) if *turns > 0 => later(format!("the session has {turns} recorded turns")),
            _ if claimed_before => later("an earlier prompt of this session was answered".into()),
            _ => Self {
                first: true,
                why: "no earlier user turn in this session".into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(turns: u64, user_turns: Option<u64>) -> SessionMeta {
        SessionMeta {
            turns,
            user_turns,
            ..SessionMeta::default()
        }
    }

    #[test]
    fn the_first_prompt_is_the_one_before_any_user_turn_or_claim() {
        assert!(PromptOrder::of(None, false).first);
        // An assistant greeting or a system turn does not make it later.
        assert!(PromptOrder::of(Some(&meta(2, Some(0))), false).first);
        let later = PromptOrder::of(Some(&meta(4, Some(2))), false);
        assert!(!later.first);
        assert_eq!(later.why, "the session has 2 recorded user turns");
        // Metadata from before user turns were counted: any turn counts.
        assert!(!PromptOrder::of(Some(&meta(3, None)), false).first);
        assert!(PromptOrder::of(Some(&meta(0, None)), false).first);
        // Answered but not recorded yet (Claude Code records at Stop).
        let claimed = PromptOrder::of(None, true);
        assert!(!claimed.first);
        assert!(claimed.why.contains("earlier prompt"), "{}", claimed.why);
    }
}
