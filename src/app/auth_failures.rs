//! [`AuthFailures`]: auth failures reach the security log bounded, so a
//! flood of bad tokens cannot rotate every earlier event out of it (issue
//! 42: 140,000 wrong-token requests in 14 s left only `auth_failure` in all
//! four files).
//!
//! Per source (surface and peer address) and per minute, the first
//! [`RECORDED_PER_WINDOW`] failures are recorded one by one, as before;
//! the rest are only counted, and one summary event per source says how
//! many were left out when its minute ends (`detail.suppressed`). At most
//! [`MAX_SOURCES`] sources are tracked at once; past that, new sources share
//! one bucket, so memory stays bounded under a flood from many addresses
//! too. The memory audit trail bounds refused writes apart from accepted
//! ones the same way.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use kirocrew_actors::security_log::{SecurityEvent, SecurityLogHandle};

/// The counting window.
pub const WINDOW: Duration = Duration::from_secs(60);

/// Failures per source and window recorded one by one.
pub const RECORDED_PER_WINDOW: u32 = 10;

/// Sources tracked at once; later ones share the overflow bucket.
pub const MAX_SOURCES: usize = 1024;

/// The bucket of sources past [`MAX_SOURCES`].
const OVERFLOW_PEER: &str = "(other sources)";

/// Who failed: the surface (`http`, `console`) and the peer address.
type Source = (String, String);

/// One source's current window.
#[derive(Debug, Clone, Copy)]
struct Window {
    started: Instant,
    recorded: u32,
    suppressed: u32,
}

/// The counts, apart from the log (pure, so the rules are unit-tested).
#[derive(Debug, Default)]
struct Tally {
    windows: HashMap<Source, Window>,
}

/// What to do with one failure.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Record it (it is within the window's budget).
    Record,
    /// Count it only.
    Suppress,
}

impl Tally {
    /// Counts a failure from `source` at `now`; answers whether to record
    /// it, and the summaries of windows that ended meanwhile.
    fn note(&mut self, source: Source, now: Instant) -> (Verdict, Vec<(Source, u32)>) {
        let ended = self.take_ended(now);
        let source = if self.windows.len() >= MAX_SOURCES && !self.windows.contains_key(&source) {
            (source.0, OVERFLOW_PEER.to_owned())
        } else {
            source
        };
        let window = self.windows.entry(source).or_insert(Window {
            started: now,
            recorded: 0,
            suppressed: 0,
        });
        let verdict = if window.recorded < RECORDED_PER_WINDOW {
            window.recorded += 1;
            Verdict::Record
        } else {
            window.suppressed += 1;
            Verdict::Suppress
        };
        (verdict, ended)
    }

    /// Removes the windows that ended by `now`; answers those with
    /// suppressed failures and how many.
    fn take_ended(&mut self, now: Instant) -> Vec<(Source, u32)> {
        let mut ended = Vec::new();
        self.windows.retain(|source, w| {
            let open = now.duration_since(w.started) < WINDOW;
            if !open && w.suppressed > 0 {
                ended.push((source.clone(), w.suppressed));
            }
            open
        });
        ended
    }
}

/// The bounded recorder of auth failures. Cheap to clone.
#[derive(Clone)]
pub struct AuthFailures {
    tally: Arc<Mutex<Tally>>,
    log: SecurityLogHandle,
}

impl AuthFailures {
    /// A recorder writing to `log`.
    pub fn new(log: SecurityLogHandle) -> Self {
        Self {
            tally: Arc::new(Mutex::new(Tally::default())),
            log,
        }
    }

    /// One auth failure on `actor` (`http`, `console`) from `peer`, with
    /// the event's `detail`. Never waits for the log.
    pub fn note(&self, actor: &str, peer: Option<&str>, detail: Value) {
        let source = (actor.to_owned(), peer.unwrap_or("-").to_owned());
        let (verdict, ended) = match self.tally.lock() {
            Ok(mut tally) => tally.note(source, Instant::now()),
            // A panic while counting must not hide failures: record.
            Err(_) => (Verdict::Record, Vec::new()),
        };
        self.summarize(ended);
        if verdict == Verdict::Record {
            self.log
                .record_later(SecurityEvent::new("auth_failure", actor, "deny", detail));
        }
    }

    /// Writes the summaries of windows that ended (call every [`WINDOW`],
    /// so a flood that stopped is still summed up).
    pub fn flush_ended(&self) {
        let ended = match self.tally.lock() {
            Ok(mut tally) => tally.take_ended(Instant::now()),
            Err(_) => Vec::new(),
        };
        self.summarize(ended);
    }

    fn summarize(&self, ended: Vec<(Source, u32)>) {
        for ((actor, peer), suppressed) in ended {
            let detail = json!({
                "peer": peer,
                "suppressed": suppressed,
                "window_secs": WINDOW.as_secs(),
                "note": format!(
                    "{suppressed} more auth failures from this source in one minute were counted, not recorded one by one"
                ),
            });
            self.log
                .record_later(SecurityEvent::new("auth_failure", &actor, "deny", detail));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(peer: &str) -> Source {
        ("http".into(), peer.into())
    }

    #[test]
    fn a_flood_is_recorded_up_to_the_budget_then_summed_up_once() {
        let mut t = Tally::default();
        let t0 = Instant::now();
        let verdicts: Vec<Verdict> = (0..1000).map(|_| t.note(src("10.0.0.1"), t0).0).collect();
        let recorded = verdicts.iter().filter(|v| **v == Verdict::Record).count();
        assert_eq!(recorded, RECORDED_PER_WINDOW as usize);
        // Another source has its own budget.
        assert_eq!(t.note(src("10.0.0.2"), t0).0, Verdict::Record);
        // The minute ends: one summary for the flooding source only.
        let later = t0 + WINDOW;
        let (verdict, ended) = t.note(src("10.0.0.1"), later);
        assert_eq!(verdict, Verdict::Record, "a new window, a new budget");
        assert_eq!(ended, vec![(src("10.0.0.1"), 1000 - RECORDED_PER_WINDOW)]);
        assert!(
            t.take_ended(later + WINDOW).is_empty(),
            "nothing was left out"
        );
    }

    #[test]
    fn sources_past_the_bound_share_one_bucket() {
        let mut t = Tally::default();
        let t0 = Instant::now();
        for i in 0..MAX_SOURCES {
            t.note(src(&format!("peer-{i}")), t0);
        }
        for i in 0..100 {
            t.note(src(&format!("late-{i}")), t0);
        }
        assert_eq!(t.windows.len(), MAX_SOURCES + 1);
        let shared = &t.windows[&src(OVERFLOW_PEER)];
        assert_eq!(shared.recorded + shared.suppressed, 100);
    }
}
