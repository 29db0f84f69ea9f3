//! The channel history's error type.

use crate::control_chars::ForbiddenCharacter;

/// Why a channel request was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum ChannelHistoryError {
    /// The channel id is not 1–128 letters, digits, `_`, `.`, `:` or `-`
    /// starting with a letter or digit (so it can never name a path
    /// outside the history directory, e.g. `../../etc`).
    #[error("invalid channel id {0:?}: use 1-128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit")]
    InvalidChannelId(String),
    /// The message is malformed (empty text, bad sender).
    #[error("invalid message: {0}")]
    InvalidMessage(String),
    /// The message holds NUL or a bidirectional override.
    #[error(transparent)]
    ControlCharacter(#[from] ForbiddenCharacter),
    /// The channel's history file would escape the history directory or is
    /// a sensitive path (a link planted in `history/`).
    #[error("history file for channel {channel:?} refused: {reason}")]
    PathRefused {
        /// The channel.
        channel: String,
        /// Why.
        reason: String,
    },
    /// A history file or `channels.json` could not be read or written.
    #[error("channel history I/O failed: {0}")]
    Io(String),
    /// The actor is gone (daemon shutting down).
    #[error("channel history unavailable: {0}")]
    Unavailable(String),
}

impl From<actix::MailboxError> for ChannelHistoryError {
    fn from(err: actix::MailboxError) -> Self {
        Self::Unavailable(err.to_string())
    }
}
