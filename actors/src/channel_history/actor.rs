//! The `ChannelHistory` actor: every channel's buffer, the modes, and the
//! history files behind observe-mode channels. Its handle is in
//! `handle.rs`; the rules it applies are in the pure files beside it.

use std::collections::{BTreeMap, HashMap};

use actix::prelude::*;
use serde_json::json;

use super::buffer::{Buffer, Entry, Limits, Now};
use super::error::ChannelHistoryError;
use super::gate::recording_decision;
use super::markers::format_context_line;
use super::message::{checked_message, sender_for_event};
use super::persist::{validate_channel_id, HistoryDir};
use super::types::{
    ChannelContext, ChannelHistoryConfig, ChannelMode, ChannelStatus, IncomingMessage, PushReport,
    SkipReason,
};
use crate::security_log::SecurityEvent;

/// A file with more lines than this many times its buffer's bound is
/// rewritten on the next append. Beyond the spec (which compacts only on
/// load): a daemon that runs for months must not grow the file forever.
const COMPACT_FACTOR: usize = 2;

/// One channel held in memory.
pub(crate) struct Channel {
    pub(super) buffer: Buffer,
    /// Lines in its history file (observe mode), compacted past
    /// [`COMPACT_FACTOR`] × the bound.
    pub(super) disk_lines: usize,
}

/// The actor. Start it with `ChannelHistoryHandle::start`.
pub(crate) struct ChannelHistory {
    pub(super) config: ChannelHistoryConfig,
    pub(super) dir: HistoryDir,
    /// Modes other than the default (`mention`), as in `channels.json`.
    pub(super) modes: BTreeMap<String, ChannelMode>,
    /// Buffers in memory; an observe channel's is loaded on first use.
    pub(super) channels: HashMap<String, Channel>,
}

impl Actor for ChannelHistory {
    type Context = Context<Self>;
}

impl ChannelHistory {
    fn now(&self) -> Now {
        Now {
            wall: self.config.clock.now(),
            mono: self.config.monotonic.elapsed(),
        }
    }

    fn mode_of(&self, channel: &str) -> ChannelMode {
        self.modes.get(channel).copied().unwrap_or_default()
    }

    fn limits(&self, mode: ChannelMode) -> Option<Limits> {
        Limits::of(
            mode,
            self.config.observe_max_entries,
            self.config.observe_ttl,
        )
    }

    /// The channel's buffer (`None` when it is off), loading an observe
    /// channel's file, compacted, on first use.
    fn channel_mut(
        &mut self,
        channel: &str,
        now: Now,
    ) -> Result<Option<&mut Channel>, ChannelHistoryError> {
        let mode = self.mode_of(channel);
        let Some(limits) = self.limits(mode) else {
            return Ok(None);
        };
        if !self.channels.contains_key(channel) {
            let loaded = if mode == ChannelMode::Observe {
                let path = self.dir.channel_file(channel)?;
                let (buffer, disk_lines) = self.dir.load(&path, limits, now)?;
                Channel { buffer, disk_lines }
            } else {
                Channel {
                    buffer: Buffer::new(limits),
                    disk_lines: 0,
                }
            };
            self.channels.insert(channel.to_owned(), loaded);
        }
        Ok(self.channels.get_mut(channel))
    }

    /// Live entries of `channel` (0 when it is off). Counting never
    /// creates a mention buffer, and one whose entries have all expired is
    /// forgotten, so memory follows the channels active in the last five
    /// minutes, not every id ever pushed to.
    fn live_count(&mut self, channel: &str, now: Now) -> Result<usize, ChannelHistoryError> {
        let mode = self.mode_of(channel);
        if mode == ChannelMode::Mention && !self.channels.contains_key(channel) {
            return Ok(0);
        }
        let count = match self.channel_mut(channel, now)? {
            Some(c) => c.buffer.live(now).len(),
            None => 0,
        };
        if count == 0 && mode == ChannelMode::Mention {
            self.channels.remove(channel);
        }
        Ok(count)
    }

    /// Records `msg` if the channel's mode and the sender's authorization
    /// allow it. An unauthorized push also answers the `channel_denied`
    /// event to record.
    pub(super) fn push(
        &mut self,
        channel: &str,
        msg: &IncomingMessage,
    ) -> Result<(PushReport, Option<SecurityEvent>), ChannelHistoryError> {
        validate_channel_id(channel)?;
        let now = self.now();
        let mode = self.mode_of(channel);
        let skip = |this: &mut Self, reason| -> Result<PushReport, ChannelHistoryError> {
            Ok(PushReport {
                recorded: false,
                reason: Some(reason),
                mode,
                entries: this.live_count(channel, now)?,
            })
        };
        let decision = recording_decision(mode, msg.authorized, msg.mention);
        if decision == Err(SkipReason::UnauthorizedSender) {
            // Checked before the message itself: every unauthorized push
            // is on record, whatever it holds.
            let event = SecurityEvent::new(
                "channel_denied",
                "gateway",
                "deny",
                json!({
                    "channel": channel,
                    "sender": sender_for_event(&msg.sender),
                    "reason": "unauthorized sender: message not recorded",
                }),
            );
            return Ok((skip(self, SkipReason::UnauthorizedSender)?, Some(event)));
        }
        // A malformed message is an error in every mode, so a gateway
        // learns of its bug even while the channel records nothing.
        let (sender, text) = checked_message(msg)?;
        if let Err(reason) = decision {
            return Ok((skip(self, reason)?, None));
        }
        let at = msg.sent_at.map_or(now.wall, |t| t.min(now.wall));
        let entry = Entry {
            sender,
            text,
            at,
            mono: now.mono_of(at),
        };
        let path = match mode {
            ChannelMode::Observe => Some(self.dir.channel_file(channel)?),
            _ => None,
        };
        let dir = self.dir.clone();
        let Some(state) = self.channel_mut(channel, now)? else {
            return Ok((skip(self, SkipReason::ChannelOff)?, None));
        };
        if !state.buffer.push(entry.clone(), now) {
            let entries = state.buffer.len();
            let report = PushReport {
                recorded: false,
                reason: Some(SkipReason::Expired),
                mode,
                entries,
            };
            return Ok((report, None));
        }
        if let Some(path) = path {
            dir.append(&path, &entry)?;
            state.disk_lines += 1;
            if state.disk_lines > COMPACT_FACTOR * state.buffer.limits().max_entries {
                dir.rewrite(&path, &mut state.buffer, now)?;
                state.disk_lines = state.buffer.len();
            }
        }
        let report = PushReport {
            recorded: true,
            reason: None,
            mode,
            entries: state.buffer.len(),
        };
        Ok((report, None))
    }

    /// The channel's context lines (`context_for`), oldest first.
    pub(super) fn context(&mut self, channel: &str) -> Result<ChannelContext, ChannelHistoryError> {
        validate_channel_id(channel)?;
        let now = self.now();
        let mode = self.mode_of(channel);
        let lines = if self.live_count(channel, now)? == 0 {
            Vec::new()
        } else {
            match self.channel_mut(channel, now)? {
                Some(state) => state
                    .buffer
                    .live(now)
                    .iter()
                    .map(|e| format_context_line(&e.sender, &e.text))
                    .collect(),
                None => Vec::new(),
            }
        };
        Ok(ChannelContext {
            channel: channel.to_owned(),
            mode,
            lines,
        })
    }

    /// The channel's mode and live entry count.
    pub(super) fn status(&mut self, channel: &str) -> Result<ChannelStatus, ChannelHistoryError> {
        validate_channel_id(channel)?;
        let now = self.now();
        Ok(ChannelStatus {
            channel: channel.to_owned(),
            mode: self.mode_of(channel),
            entries: self.live_count(channel, now)?,
        })
    }

    /// Switches `channel` to `mode` (`set_observe` / `unset_observe`):
    /// saved to `channels.json` first, then the buffer is re-sized to the
    /// new bound (observe: written out whole; leaving observe: its file
    /// deleted; off: the buffer dropped). Answers the new status and the
    /// event recording the change.
    pub(super) fn set_mode(
        &mut self,
        channel: &str,
        mode: ChannelMode,
    ) -> Result<(ChannelStatus, Option<SecurityEvent>), ChannelHistoryError> {
        validate_channel_id(channel)?;
        let old = self.mode_of(channel);
        if old == mode {
            return Ok((self.status(channel)?, None));
        }
        // Refuse an unusable path before anything changes.
        let path = match (mode, self.dir.channel_file(channel)) {
            (ChannelMode::Observe, Err(e)) => return Err(e),
            (_, path) => path.ok(),
        };
        let now = self.now();
        // Load an observe buffer before its mode changes, so it is re-sized
        // rather than lost; one that cannot be loaded is left behind.
        if old == ChannelMode::Observe {
            if let Err(e) = self.channel_mut(channel, now) {
                tracing::warn!(channel, error = %e, "observe history not loaded before leaving observe");
            }
        }
        let mut modes = self.modes.clone();
        if mode == ChannelMode::default() {
            modes.remove(channel);
        } else {
            modes.insert(channel.to_owned(), mode);
        }
        self.dir.save_modes(&modes)?;
        self.modes = modes;
        if old == ChannelMode::Observe {
            // Unlinking never follows a link, so even a refused (planted)
            // path is safe to remove.
            self.dir.remove(&self.dir.unchecked_file(channel))?;
        }
        match self.limits(mode) {
            None => {
                self.channels.remove(channel);
            }
            Some(limits) => {
                let state = self.channels.entry(channel.to_owned()).or_insert(Channel {
                    buffer: Buffer::new(limits),
                    disk_lines: 0,
                });
                state.buffer.resize(limits, now);
                if let (ChannelMode::Observe, Some(path)) = (mode, &path) {
                    self.dir.rewrite(path, &mut state.buffer, now)?;
                    state.disk_lines = state.buffer.len();
                }
            }
        }
        let event = SecurityEvent::new(
            "channel_mode",
            "api",
            "ok",
            json!({"channel": channel, "from": old.as_str(), "to": mode.as_str()}),
        );
        Ok((self.status(channel)?, Some(event)))
    }
}
