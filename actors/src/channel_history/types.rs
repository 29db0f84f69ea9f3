//! The channel history's plain data: modes, what the gateway pushes, what a
//! push and a mode change report, the context handed to the prompt
//! builder, and the actor's configuration.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::clock::{SharedClock, SharedMonotonic};
use crate::security_log::SecurityLogHandle;
use crate::sensitive_paths::SensitivePaths;

/// Entries a mention-mode buffer keeps (`_DEFAULT_MAX_ENTRIES`; no knob).
pub const MENTION_MAX_ENTRIES: usize = 50;
/// How long a mention-mode entry lives, on the monotonic clock
/// (`_DEFAULT_TTL_SECS`; no knob).
pub const MENTION_TTL: Duration = Duration::from_secs(300);
/// Default entries of an observe-mode buffer (`channels.observe_max_messages`).
pub const OBSERVE_MAX_ENTRIES: usize = 200;
/// Default observe-mode lifetime, on the wall clock: one week
/// (`channels.observe_ttl_hours` = 168).
pub const OBSERVE_TTL: Duration = Duration::from_secs(604_800);

/// What a channel records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelMode {
    /// Only the messages the bot acts on (a mention, a reply in its
    /// thread, a DM); 50 entries, 5 minutes, memory only. The default.
    #[default]
    Mention,
    /// Every authorized message; 200 entries and a week by default,
    /// persisted to `history/<channel_id>.jsonl`.
    Observe,
    /// Nothing.
    Off,
}

impl ChannelMode {
    /// The mode's name as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelMode::Mention => "mention",
            ChannelMode::Observe => "observe",
            ChannelMode::Off => "off",
        }
    }
}

/// One message as the gateway pushes it.
#[derive(Debug, Clone, PartialEq)]
pub struct IncomingMessage {
    /// Who wrote it (display name or user id; 1–128 chars, one line).
    pub sender: String,
    /// What they wrote.
    pub text: String,
    /// The gateway's verdict: is the sender allowed to talk to the bot?
    /// An unauthorized message is never recorded.
    pub authorized: bool,
    /// The bot acts on this message (an @mention, a reply in a thread it
    /// has a session for, any DM). Mention-mode channels record only these.
    pub mention: bool,
    /// When it was sent; `None` means now. A future time counts as now.
    pub sent_at: Option<DateTime<Utc>>,
}

/// Why a push recorded nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The gateway marked the sender unauthorized (a `channel_denied`
    /// security event was recorded).
    UnauthorizedSender,
    /// The channel is `off`.
    ChannelOff,
    /// A mention-mode channel and the bot does not act on this message.
    NotAddressed,
    /// `sent_at` is already older than the channel's TTL.
    Expired,
}

/// What a push did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PushReport {
    /// Whether the message is now in the buffer.
    pub recorded: bool,
    /// Why not, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<SkipReason>,
    /// The channel's mode.
    pub mode: ChannelMode,
    /// Live entries in the buffer after the push.
    pub entries: usize,
}

/// A channel's mode and live entry count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelStatus {
    /// The channel id.
    pub channel: String,
    /// Its mode.
    pub mode: ChannelMode,
    /// Live entries.
    pub entries: usize,
}

/// The channel's recent messages, ready for a prompt (`context_for`):
/// one line per message, oldest first, structural markers neutralized,
/// each line at most 300 chars.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelContext {
    /// The channel id.
    pub channel: String,
    /// Its mode.
    pub mode: ChannelMode,
    /// The formatted lines.
    pub lines: Vec<String>,
}

/// How to start the channel history.
#[derive(Clone)]
pub struct ChannelHistoryConfig {
    /// `<data home>/history`: the observe files and `channels.json`.
    pub history_dir: PathBuf,
    /// Entries an observe-mode buffer keeps.
    pub observe_max_entries: usize,
    /// How long an observe-mode entry lives (wall clock).
    pub observe_ttl: Duration,
    /// Wall clock (observe TTL, stored timestamps).
    pub clock: SharedClock,
    /// Monotonic clock (mention TTL).
    pub monotonic: SharedMonotonic,
    /// Where unauthorized pushes and mode changes are recorded.
    pub security_log: SecurityLogHandle,
    /// Every history file path is checked against it.
    pub sensitive_paths: SensitivePaths,
}

impl std::fmt::Debug for ChannelHistoryConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelHistoryConfig")
            .field("history_dir", &self.history_dir)
            .field("observe_max_entries", &self.observe_max_entries)
            .field("observe_ttl", &self.observe_ttl)
            .finish()
    }
}
