//! [`ChannelHistoryHandle`]: the channel history's cloneable, actix-free
//! interface.

use std::collections::HashMap;

use actix::prelude::*;

use super::actor::ChannelHistory;
use super::error::ChannelHistoryError;
use super::messages::{GetChannelContext, GetChannelStatus, PushChannelMessage, SetChannelMode};
use super::persist::HistoryDir;
use super::types::{
    ChannelContext, ChannelHistoryConfig, ChannelMode, ChannelStatus, IncomingMessage, PushReport,
};
use crate::ask::ask;

/// A cloneable reference to the running channel history.
#[derive(Clone)]
pub struct ChannelHistoryHandle {
    addr: Addr<ChannelHistory>,
}

impl std::fmt::Debug for ChannelHistoryHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelHistoryHandle")
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl ChannelHistoryHandle {
    /// Reads the saved modes and starts the actor. Must run inside an
    /// actix `System`. Observe buffers are loaded from disk on first use.
    pub fn start(config: ChannelHistoryConfig) -> Result<Self, ChannelHistoryError> {
        let dir = HistoryDir::new(config.history_dir.clone(), config.sensitive_paths.clone());
        let modes = dir.load_modes()?;
        let addr = ChannelHistory {
            config,
            dir,
            modes,
            channels: HashMap::new(),
        }
        .start();
        Ok(Self { addr })
    }

    /// Records `message` in `channel` if its mode and the sender's
    /// authorization allow; the report says whether it was recorded and,
    /// if not, why. An unauthorized sender is never recorded and the
    /// refusal is a `channel_denied` security event.
    pub async fn push(
        &self,
        channel: &str,
        message: IncomingMessage,
    ) -> Result<PushReport, ChannelHistoryError> {
        let channel = channel.to_owned();
        ask(&self.addr, PushChannelMessage { channel, message }).await
    }

    /// The channel's recent messages as neutralized context lines
    /// (`context_for`).
    pub async fn context_for(&self, channel: &str) -> Result<ChannelContext, ChannelHistoryError> {
        let channel = channel.to_owned();
        ask(&self.addr, GetChannelContext { channel }).await
    }

    /// The channel's mode and live entry count.
    pub async fn status(&self, channel: &str) -> Result<ChannelStatus, ChannelHistoryError> {
        let channel = channel.to_owned();
        ask(&self.addr, GetChannelStatus { channel }).await
    }

    /// Sets the channel's mode; it survives a restart (`channels.json`).
    pub async fn set_mode(
        &self,
        channel: &str,
        mode: ChannelMode,
    ) -> Result<ChannelStatus, ChannelHistoryError> {
        let channel = channel.to_owned();
        ask(&self.addr, SetChannelMode { channel, mode }).await
    }

    /// `set_observe`: records every authorized message, persisted.
    pub async fn set_observe(&self, channel: &str) -> Result<ChannelStatus, ChannelHistoryError> {
        self.set_mode(channel, ChannelMode::Observe).await
    }

    /// `unset_observe`: back to mention mode; the history file is deleted.
    pub async fn unset_observe(&self, channel: &str) -> Result<ChannelStatus, ChannelHistoryError> {
        self.set_mode(channel, ChannelMode::Mention).await
    }
}
