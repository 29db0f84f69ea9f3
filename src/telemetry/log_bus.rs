//! The console's `log` stream: the daemon's tracing output, live, at a
//! level each subscriber chooses (`{"cmd": "subscribe", "args":
//! {"stream": "log", "level": "debug"}}`).
//!
//! A tracing layer beside the stderr one ([`crate::telemetry::init`])
//! formats an event only while someone subscribed at that level: its
//! filter reads the highest level any live subscription asked for, so with
//! no subscriber the layer costs one atomic load per event, and `trace` is
//! never offered (it would put every dependency's innermost loops on the
//! wire). Lines go out through one bounded `broadcast` ring: a subscriber
//! that falls behind is told how many it missed, and logging never waits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use serde::Serialize;
use tokio::sync::broadcast;
use tracing::field::{Field, Visit};
use tracing::subscriber::Interest;
use tracing::{Level, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::Context;
use tracing_subscriber::Layer;

/// Lines a subscriber may fall behind by before it is told it lagged.
const LIVE_QUEUE: usize = 1024;

/// The levels a subscription may ask for, most severe first.
pub const LEVELS: [&str; 4] = ["error", "warn", "info", "debug"];

/// Live subscriptions per level (index into [`LEVELS`]).
static WANTED: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

fn bus() -> &'static broadcast::Sender<LogLine> {
    static BUS: OnceLock<broadcast::Sender<LogLine>> = OnceLock::new();
    BUS.get_or_init(|| broadcast::channel(LIVE_QUEUE).0)
}

/// One line of the `log` stream.
#[derive(Debug, Clone, Serialize)]
pub struct LogLine {
    /// When it was logged (RFC 3339, UTC).
    pub ts: String,
    /// `error`, `warn`, `info` or `debug`.
    pub level: &'static str,
    /// The module that logged it.
    pub target: String,
    /// The message and its fields (`key=value`).
    pub message: String,
}

/// The rank of a level name (0 = error … 3 = debug), or `None` for a name
/// the stream does not offer.
pub fn level_rank(name: &str) -> Option<usize> {
    LEVELS.iter().position(|l| l.eq_ignore_ascii_case(name))
}

fn rank_of(level: &Level) -> usize {
    match *level {
        Level::ERROR => 0,
        Level::WARN => 1,
        Level::INFO => 2,
        _ => 3,
    }
}

/// Whether any subscription wants events of `level` now.
fn wanted(level: &Level) -> bool {
    let rank = rank_of(level);
    WANTED[rank..].iter().any(|n| n.load(Ordering::Relaxed) > 0)
}

/// A live subscription to the `log` stream at one level; dropping it
/// withdraws its interest.
#[derive(Debug)]
pub struct LogSubscription {
    rx: broadcast::Receiver<LogLine>,
    rank: usize,
}

impl LogSubscription {
    /// Subscribes at `rank` (see [`level_rank`]).
    pub fn new(rank: usize) -> Self {
        let rank = rank.min(LEVELS.len() - 1);
        WANTED[rank].fetch_add(1, Ordering::Relaxed);
        Self {
            rx: bus().subscribe(),
            rank,
        }
    }

    /// The next line at or above this subscription's level; `Err(Lagged(n))`
    /// when `n` lines (of any level) were missed.
    pub async fn recv(&mut self) -> Result<LogLine, broadcast::error::RecvError> {
        loop {
            let line = self.rx.recv().await?;
            if level_rank(line.level).is_some_and(|r| r <= self.rank) {
                return Ok(line);
            }
        }
    }
}

impl Drop for LogSubscription {
    fn drop(&mut self) {
        WANTED[self.rank].fetch_sub(1, Ordering::Relaxed);
    }
}

/// The layer [`crate::telemetry::init`] installs.
pub fn layer<S>() -> impl Layer<S>
where
    S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    BusLayer.with_filter(Wanted)
}

struct BusLayer;

/// The layer's filter: what live subscriptions want *now*. Never cached
/// per callsite (`Interest::sometimes`), since subscriptions come and go;
/// `trace` is never offered.
struct Wanted;

impl<S> tracing_subscriber::layer::Filter<S> for Wanted {
    fn enabled(&self, meta: &tracing::Metadata<'_>, _: &Context<'_, S>) -> bool {
        wanted(meta.level())
    }

    fn callsite_enabled(&self, meta: &'static tracing::Metadata<'static>) -> Interest {
        if *meta.level() <= Level::DEBUG {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::DEBUG)
    }
}

impl<S: Subscriber> Layer<S> for BusLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let tx = bus();
        if tx.receiver_count() == 0 {
            return;
        }
        let mut text = LineText::default();
        event.record(&mut text);
        let meta = event.metadata();
        // No receiver left is not an error; a full ring drops the oldest.
        let _ = tx.send(LogLine {
            ts: kirocrew_actors::clock::format_ts(chrono::Utc::now()),
            level: LEVELS[rank_of(meta.level())],
            target: meta.target().to_owned(),
            message: text.finish(),
        });
    }
}

/// The message first, then the other fields as `key=value`.
#[derive(Default)]
struct LineText {
    message: String,
    fields: Vec<String>,
}

impl LineText {
    fn finish(self) -> String {
        let mut out = self.message;
        for f in self.fields {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&f);
        }
        out
    }
}

impl Visit for LineText {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_owned();
        } else {
            self.fields.push(format!("{}={value}", field.name()));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            self.fields.push(format!("{}={value:?}", field.name()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_named_and_ranked() {
        assert_eq!(level_rank("error"), Some(0));
        assert_eq!(level_rank("DEBUG"), Some(3));
        assert_eq!(level_rank("trace"), None);
        assert_eq!(rank_of(&Level::TRACE), 3);
    }

    #[test]
    fn a_subscription_raises_and_withdraws_interest() {
        // Other tests may subscribe concurrently; count relative changes.
        let before = WANTED[1].load(Ordering::Relaxed);
        let sub = LogSubscription::new(1);
        assert_eq!(WANTED[1].load(Ordering::Relaxed), before + 1);
        assert!(wanted(&Level::ERROR));
        drop(sub);
        assert_eq!(WANTED[1].load(Ordering::Relaxed), before);
    }

    #[test]
    fn the_message_comes_first() {
        let text = LineText {
            message: "hello".into(),
            fields: vec!["a=1".into(), "b=2".into()],
        };
        assert_eq!(text.finish(), "hello a=1 b=2");
    }
}

#[cfg(test)]
mod live_tests {
    use super::*;

    fn log_hello() {
        tracing::info!(path = "/x", "hello");
    }

    /// Also from a callsite first hit while nobody listened (its interest
    /// must not be cached as "never").
    #[tokio::test]
    async fn an_event_reaches_a_subscriber() {
        crate::telemetry::init(false, "warn");
        log_hello();
        let mut sub = LogSubscription::new(2);
        log_hello();
        let line = tokio::time::timeout(std::time::Duration::from_secs(5), sub.recv())
            .await
            .expect("a line")
            .expect("no lag");
        assert_eq!(line.message, "hello path=/x");
    }
}
