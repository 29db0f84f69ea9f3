//! The channel history's protocol: one struct per request, each with its
//! thin handler.

use actix::prelude::*;

use super::actor::ChannelHistory;
use super::error::ChannelHistoryError;
use super::types::{ChannelContext, ChannelMode, ChannelStatus, IncomingMessage, PushReport};

/// Records one message pushed by the gateway (if the mode and the
/// sender's authorization allow).
#[derive(Debug, Message)]
#[rtype(result = "Result<PushReport, ChannelHistoryError>")]
pub(crate) struct PushChannelMessage {
    pub channel: String,
    pub message: IncomingMessage,
}

/// The channel's context lines (`context_for`).
#[derive(Debug, Message)]
#[rtype(result = "Result<ChannelContext, ChannelHistoryError>")]
pub(crate) struct GetChannelContext {
    pub channel: String,
}

/// The channel's mode and live entry count.
#[derive(Debug, Message)]
#[rtype(result = "Result<ChannelStatus, ChannelHistoryError>")]
pub(crate) struct GetChannelStatus {
    pub channel: String,
}

/// Switches the channel's mode (saved across restarts).
#[derive(Debug, Message)]
#[rtype(result = "Result<ChannelStatus, ChannelHistoryError>")]
pub(crate) struct SetChannelMode {
    pub channel: String,
    pub mode: ChannelMode,
}

impl Handler<PushChannelMessage> for ChannelHistory {
    type Result = ResponseFuture<Result<PushReport, ChannelHistoryError>>;

    fn handle(&mut self, msg: PushChannelMessage, _: &mut Context<Self>) -> Self::Result {
        let outcome = self.push(&msg.channel, &msg.message);
        let log = self.config.security_log.clone();
        // The denial is on record before the gateway hears "not recorded"
        // (spec: the SEL event is emitted at the auth check); the buffer
        // itself was settled synchronously above.
        Box::pin(async move {
            let (report, event) = outcome?;
            if let Some(event) = event {
                let _ = log.record(event).await;
            }
            Ok(report)
        })
    }
}

impl Handler<GetChannelContext> for ChannelHistory {
    type Result = Result<ChannelContext, ChannelHistoryError>;

    fn handle(&mut self, msg: GetChannelContext, _: &mut Context<Self>) -> Self::Result {
        self.context(&msg.channel)
    }
}

impl Handler<GetChannelStatus> for ChannelHistory {
    type Result = Result<ChannelStatus, ChannelHistoryError>;

    fn handle(&mut self, msg: GetChannelStatus, _: &mut Context<Self>) -> Self::Result {
        self.status(&msg.channel)
    }
}

impl Handler<SetChannelMode> for ChannelHistory {
    type Result = Result<ChannelStatus, ChannelHistoryError>;

    fn handle(&mut self, msg: SetChannelMode, _: &mut Context<Self>) -> Self::Result {
        let (status, event) = self.set_mode(&msg.channel, msg.mode)?;
        if let Some(event) = event {
            self.config.security_log.record_later(event);
        }
        Ok(status)
    }
}
