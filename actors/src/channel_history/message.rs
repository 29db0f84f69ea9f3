//! Checking a pushed message before it is recorded (pure).

use super::error::ChannelHistoryError;
use super::markers::truncate_chars;
use super::types::IncomingMessage;
use crate::control_chars::check_text;

/// Longest sender name, in chars.
pub const MAX_SENDER_CHARS: usize = 128;

/// Longest text kept per message, in chars; longer text is cut (only the
/// first 300 chars of a message's line ever reach a prompt, and the rest
/// would only grow the buffer and its file).
pub const MAX_STORED_TEXT_CHARS: usize = 4_000;

/// The sender and text to store, or why the message is refused: the sender
/// one line of 1–128 chars, the text not blank, neither holding NUL or a
/// bidirectional override (refused, not stripped: the house rule for every
/// writer, see `control_chars`).
pub(crate) fn checked_message(
    msg: &IncomingMessage,
) -> Result<(String, String), ChannelHistoryError> {
    let sender = msg.sender.trim();
    if sender.is_empty() || sender.chars().count() > MAX_SENDER_CHARS {
        return Err(ChannelHistoryError::InvalidMessage(format!(
            "sender must be 1-{MAX_SENDER_CHARS} characters"
        )));
    }
    if sender.chars().any(char::is_control) {
        return Err(ChannelHistoryError::InvalidMessage(
            "sender must be one line without control characters".into(),
        ));
    }
    if msg.text.trim().is_empty() {
        return Err(ChannelHistoryError::InvalidMessage(
            "text must not be empty".into(),
        ));
    }
    check_text("sender", sender)?;
    check_text("text", &msg.text)?;
    Ok((
        sender.to_owned(),
        truncate_chars(&msg.text, MAX_STORED_TEXT_CHARS),
    ))
}

/// `sender` cut for a security event (the event names who, not what).
pub(crate) fn sender_for_event(sender: &str) -> String {
    truncate_chars(sender, MAX_SENDER_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(sender: &str, text: &str) -> IncomingMessage {
        IncomingMessage {
            sender: sender.into(),
            text: text.into(),
            authorized: true,
            mention: true,
            sent_at: None,
        }
    }

    #[test]
    fn messages_are_checked_and_long_text_is_cut() {
        assert_eq!(
            checked_message(&msg(" alice ", "hi")).unwrap(),
            ("alice".to_owned(), "hi".to_owned())
        );
        let long = "x".repeat(10_000);
        let (_, text) = checked_message(&msg("a", &long)).unwrap();
        assert_eq!(text.chars().count(), MAX_STORED_TEXT_CHARS);
        let too_long_sender = "s".repeat(MAX_SENDER_CHARS + 1);
        for (sender, text) in [
            ("", "hi"),
            ("a\nb", "hi"),
            (too_long_sender.as_str(), "hi"),
            ("a", "  \n "),
        ] {
            assert!(matches!(
                checked_message(&msg(sender, text)),
                Err(ChannelHistoryError::InvalidMessage(_))
            ));
        }
        assert!(matches!(
            checked_message(&msg("a", "evil\u{202E}txt")),
            Err(ChannelHistoryError::ControlCharacter(_))
        ));
    }
}
