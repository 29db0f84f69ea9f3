//! Which pushed messages a channel records (pure): the spec's activation
//! table and its authorization gate (`should_record_observe_history` and
//! the early `if not _user_authorized: return`), in one place.
//!
//! The gateway pushes every message it sees and says whether the sender is
//! authorized and whether the bot acts on the message; this decides, so a
//! gateway need not know a channel's mode and no surface can record an
//! unauthorized sender's text (a prompt-injection control: the buffer is
//! fed verbatim into a later turn).

use super::types::{ChannelMode, SkipReason};

/// Whether a message is recorded in a channel of `mode`:
/// - never from an unauthorized sender (checked first, in every mode);
/// - `off`: never;
/// - `mention`: only messages the bot acts on;
/// - `observe`: every authorized message.
pub(crate) fn recording_decision(
    mode: ChannelMode,
    authorized: bool,
    mention: bool,
) -> Result<(), SkipReason> {
    if !authorized {
        return Err(SkipReason::UnauthorizedSender);
    }
    match mode {
        ChannelMode::Off => Err(SkipReason::ChannelOff),
        ChannelMode::Mention if !mention => Err(SkipReason::NotAddressed),
        ChannelMode::Mention | ChannelMode::Observe => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ChannelMode::*;

    #[test]
    fn the_activation_table() {
        let cases = [
            (Mention, true, true, Ok(())),
            (Mention, true, false, Err(SkipReason::NotAddressed)),
            (Observe, true, false, Ok(())),
            (Observe, true, true, Ok(())),
            (Off, true, true, Err(SkipReason::ChannelOff)),
            (Off, false, true, Err(SkipReason::UnauthorizedSender)),
            (Observe, false, false, Err(SkipReason::UnauthorizedSender)),
            (Mention, false, true, Err(SkipReason::UnauthorizedSender)),
        ];
        for (mode, authorized, mention, expected) in cases {
            assert_eq!(
                recording_decision(mode, authorized, mention),
                expected,
                "{mode:?} authorized={authorized} mention={mention}"
            );
        }
    }
}
