//! A session's subscriptions: which streams it follows, each with the
//! count of events it was told it missed, and the receive helpers the
//! session's `select!` polls (a stream not subscribed to never yields).

use tokio::sync::broadcast;

use super::protocol::{str_arg, ConsoleError, Request};
use crate::telemetry::log_bus::{LogLine, LogSubscription};
use kirocrew_actors::security_log::SecurityRecord;
use kirocrew_actors::vector_store::MemoryEvent;
use serde_json::Value;

/// The streams a session may subscribe to.
pub const STREAMS: [&str; 4] = ["audit", "security", "progress", "log"];

/// One stream subscription with what it has missed so far.
pub(crate) struct Sub<R> {
    pub(crate) rx: R,
    pub(crate) missed: u64,
}

impl<R> Sub<R> {
    pub(crate) fn new(rx: R) -> Self {
        Self { rx, missed: 0 }
    }
}

/// What a session is subscribed to.
#[derive(Default)]
pub(crate) struct Subs {
    pub(crate) audit: Option<Sub<broadcast::Receiver<MemoryEvent>>>,
    pub(crate) security: Option<Sub<broadcast::Receiver<SecurityRecord>>>,
    pub(crate) progress: Option<Sub<broadcast::Receiver<Value>>>,
    pub(crate) log: Option<Sub<LogSubscription>>,
}

/// The `stream` argument, one of [`STREAMS`].
pub(crate) fn stream_arg(request: &Request) -> Result<&'static str, ConsoleError> {
    let name = str_arg(&request.args, "stream").unwrap_or_default();
    STREAMS.iter().copied().find(|s| *s == name).ok_or_else(|| {
        ConsoleError::new(
            "unknown_stream",
            format!("stream {name:?} is not one of {}", STREAMS.join(", ")),
        )
    })
}

/// The next item of a subscription; never, without one.
pub(crate) async fn next<T: Clone>(
    sub: &mut Option<Sub<broadcast::Receiver<T>>>,
) -> Result<T, broadcast::error::RecvError> {
    match sub {
        Some(s) => s.rx.recv().await,
        None => std::future::pending().await,
    }
}

/// The next line of a `log` subscription; never, without one.
pub(crate) async fn next_log(
    sub: &mut Option<Sub<LogSubscription>>,
) -> Result<LogLine, broadcast::error::RecvError> {
    match sub {
        Some(s) => s.rx.recv().await,
        None => std::future::pending().await,
    }
}
