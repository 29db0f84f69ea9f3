//! One channel's buffer (pure): a bounded deque of entries that expire
//! after a TTL, on the monotonic clock (mention mode) or the wall clock
//! (observe mode, whose entries must keep their age across a restart).
//!
//! Every entry carries both stamps, so switching modes only swaps the
//! [`Limits`] (the spec's "re-deque to the other maxlen"): the newest
//! entries that fit are kept and the other clock takes over their expiry.

use std::collections::VecDeque;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::types::{ChannelMode, MENTION_MAX_ENTRIES, MENTION_TTL};

/// One recorded message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) sender: String,
    pub(crate) text: String,
    /// Wall-clock time it was sent (stored on disk).
    pub(crate) at: DateTime<Utc>,
    /// Monotonic time it was sent (memory only).
    pub(crate) mono: Duration,
}

/// "Now" on both clocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Now {
    pub(crate) wall: DateTime<Utc>,
    pub(crate) mono: Duration,
}

impl Now {
    /// The monotonic stamp of something sent at wall time `at`: as old on
    /// the monotonic clock as it is on the wall clock (a future `at`
    /// counts as now).
    pub(crate) fn mono_of(&self, at: DateTime<Utc>) -> Duration {
        let age = (self.wall - at).to_std().unwrap_or(Duration::ZERO);
        self.mono.saturating_sub(age)
    }
}

/// A buffer's bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limits {
    pub(crate) max_entries: usize,
    pub(crate) ttl: Duration,
    /// Expire on the wall clock (observe) rather than the monotonic one.
    pub(crate) wall: bool,
}

impl Limits {
    /// The bounds of `mode` (`None` for `off`, which keeps no buffer).
    pub(crate) fn of(mode: ChannelMode, observe_max: usize, observe_ttl: Duration) -> Option<Self> {
        match mode {
            ChannelMode::Mention => Some(Self {
                max_entries: MENTION_MAX_ENTRIES,
                ttl: MENTION_TTL,
                wall: false,
            }),
            ChannelMode::Observe => Some(Self {
                max_entries: observe_max,
                ttl: observe_ttl,
                wall: true,
            }),
            ChannelMode::Off => None,
        }
    }

    /// Whether `entry` has outlived the TTL at `now` (an entry exactly
    /// `ttl` old is still live).
    pub(crate) fn expired(&self, entry: &Entry, now: Now) -> bool {
        let age = if self.wall {
            (now.wall - entry.at).to_std().unwrap_or(Duration::ZERO)
        } else {
            now.mono.saturating_sub(entry.mono)
        };
        age > self.ttl
    }
}

/// A bounded, expiring deque of entries, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Buffer {
    entries: VecDeque<Entry>,
    limits: Limits,
}

impl Buffer {
    /// An empty buffer.
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            entries: VecDeque::new(),
            limits,
        }
    }

    /// A buffer holding the live, newest entries of `entries` (oldest
    /// first); also answers whether any were dropped.
    pub(crate) fn from_entries(limits: Limits, entries: Vec<Entry>, now: Now) -> (Self, bool) {
        let total = entries.len();
        let mut buffer = Self {
            entries: entries.into(),
            limits,
        };
        buffer.prune(now);
        buffer.evict();
        let dropped = buffer.entries.len() != total;
        (buffer, dropped)
    }

    /// The buffer's bounds.
    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Appends `entry` (dropping expired entries and, past the bound, the
    /// oldest). Answers `false` without storing it when it is already
    /// expired.
    pub(crate) fn push(&mut self, entry: Entry, now: Now) -> bool {
        self.prune(now);
        if self.limits.expired(&entry, now) {
            return false;
        }
        self.entries.push_back(entry);
        self.evict();
        true
    }

    /// Drops expired entries; answers how many.
    pub(crate) fn prune(&mut self, now: Now) -> usize {
        let before = self.entries.len();
        let limits = self.limits;
        // Not only from the front: a gateway may push an older `sent_at`
        // after a newer one.
        self.entries.retain(|e| !limits.expired(e, now));
        before - self.entries.len()
    }

    /// Switches to other bounds, keeping the newest live entries that fit.
    pub(crate) fn resize(&mut self, limits: Limits, now: Now) {
        self.limits = limits;
        self.prune(now);
        self.evict();
    }

    /// The live entries at `now`, oldest first.
    pub(crate) fn live(&mut self, now: Now) -> &VecDeque<Entry> {
        self.prune(now);
        &self.entries
    }

    /// Entries held (call [`Self::prune`] first for the live count).
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    fn evict(&mut self) {
        while self.entries.len() > self.limits.max_entries {
            self.entries.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now(secs: u64) -> Now {
        Now {
            wall: Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
                + chrono::Duration::seconds(secs as i64),
            mono: Duration::from_secs(secs),
        }
    }

    fn entry(i: usize, at: Now) -> Entry {
        Entry {
            sender: "alice".into(),
            text: format!("m{i}"),
            at: at.wall,
            mono: at.mono,
        }
    }

    fn texts(buffer: &mut Buffer, at: Now) -> Vec<String> {
        buffer.live(at).iter().map(|e| e.text.clone()).collect()
    }

    fn mention() -> Limits {
        Limits::of(ChannelMode::Mention, 200, Duration::from_secs(604_800)).unwrap()
    }

    #[test]
    fn mention_buffer_keeps_fifty_for_five_minutes() {
        let mut b = Buffer::new(mention());
        for i in 0..60 {
            assert!(b.push(entry(i, now(0)), now(0)));
        }
        let live = texts(&mut b, now(0));
        assert_eq!(live.len(), 50);
        assert_eq!(live[0], "m10");
        assert_eq!(live[49], "m59");
        assert_eq!(texts(&mut b, now(300)).len(), 50, "exactly 300 s is live");
        assert!(texts(&mut b, now(301)).is_empty());
    }

    #[test]
    fn wall_and_monotonic_expiry_are_independent() {
        let observe = Limits::of(ChannelMode::Observe, 3, Duration::from_secs(60)).unwrap();
        let start = now(0);
        // The wall clock jumps back an hour; the monotonic clock moves on.
        let jumped = Now {
            wall: start.wall - chrono::Duration::hours(1),
            mono: Duration::from_secs(400),
        };
        let mut m = Buffer::new(mention());
        m.push(entry(0, start), start);
        assert!(
            texts(&mut m, jumped).is_empty(),
            "mention follows monotonic"
        );
        let mut o = Buffer::new(observe);
        o.push(entry(0, start), start);
        assert_eq!(texts(&mut o, jumped).len(), 1, "observe follows the wall");
    }

    #[test]
    fn resizing_keeps_the_newest_and_switches_clocks() {
        let observe = Limits::of(ChannelMode::Observe, 200, Duration::from_secs(3_600)).unwrap();
        let mut b = Buffer::new(observe);
        for i in 0..120 {
            b.push(entry(i, now(i as u64)), now(i as u64));
        }
        b.resize(mention(), now(200));
        let live = texts(&mut b, now(200));
        assert_eq!(live.len(), 50);
        assert_eq!(live[0], "m70");
        // Mention expiry now applies: m70 was sent at 70 s.
        assert_eq!(
            texts(&mut b, now(371)).first().map(String::as_str),
            Some("m71")
        );
        b.resize(observe, now(371));
        assert_eq!(b.limits(), observe);
    }

    #[test]
    fn a_late_old_message_is_pruned_on_its_own_age() {
        let observe = Limits::of(ChannelMode::Observe, 10, Duration::from_secs(100)).unwrap();
        let at = now(1_000);
        let mut b = Buffer::new(observe);
        b.push(entry(0, at), at);
        let old = now(950);
        assert!(b.push(entry(1, old), at));
        assert!(!b.push(entry(2, now(800)), at), "already expired");
        assert_eq!(texts(&mut b, now(1_051)), vec!["m0"]);
        assert_eq!(at.mono_of(old.wall), Duration::from_secs(950));
        assert_eq!(at.mono_of(now(5_000).wall), at.mono, "future counts as now");
    }

    #[test]
    fn loading_drops_expired_and_surplus_entries() {
        let observe = Limits::of(ChannelMode::Observe, 2, Duration::from_secs(100)).unwrap();
        let entries = (0..4).map(|i| entry(i, now(i as u64 * 50))).collect();
        let (mut b, dropped) = Buffer::from_entries(observe, entries, now(200));
        assert!(dropped);
        assert_eq!(texts(&mut b, now(200)), vec!["m2", "m3"]);
        let kept = vec![entry(9, now(150))];
        let (_, dropped) = Buffer::from_entries(observe, kept, now(200));
        assert!(!dropped);
    }
}
