//! The Markdown memory layers: the decaying history read and the full-text
//! index.
//!
//! Run with `cargo bench --bench history`.
//!
//! - `read_recent_history/cold`: 181 daily files (ages 0–180, 6 entries of
//!   ~200 characters each), read and rendered from disk every time (the
//!   cache is dropped before each call) — the cost of a context build after
//!   the 5 s TTL or an append.
//! - `read_recent_history/cached`: the same call answered from the 5 s
//!   cache (the clock does not move).
//! - `fts_query/10k`: a two-word query (~1% of entries match) against an
//!   index of 10,000 history entries (memory_index.db on disk); and
//!   `fts_query/10k_common_word`, one word found in ~10% of them.

use std::sync::Arc;

use chrono::{Duration, TimeZone, Utc};
use criterion::{criterion_group, criterion_main, Criterion};
use kirocrew_actors::clock::{ManualClock, SharedClock};
use kirocrew_actors::memory_files::{Doc, FtsIndex, MemoryDir};
use tempfile::TempDir;

const WORDS: &[&str] = &[
    "deploy",
    "running",
    "tests",
    "dashboard",
    "migration",
    "index",
    "schema",
    "review",
    "websocket",
    "latency",
    "benchmark",
    "release",
    "rollback",
    "config",
    "ran",
    "wrote",
    "cache",
    "embedding",
    "model",
    "lessons",
    "history",
    "pruned",
    "heartbeat",
    "runs",
    "session",
    "gateway",
    "slack",
    "prompt",
    "context",
    "budget",
    "window",
    "tokens",
];

/// A deterministic ~200-character entry: mostly words from a 2,000-word
/// pseudo-vocabulary, one in ten from [`WORDS`], so a query on two of
/// those matches about 1% of the entries (as a real query would), not all.
fn entry_text(seed: usize) -> String {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    let mut text = String::new();
    while text.len() < 200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x % 10 == 0 {
            text.push_str(WORDS[(x / 10) % WORDS.len()]);
        } else {
            let w = (x / 10) % 2_000;
            text.push_str(&format!(
                "{}{}",
                ["ka", "lo", "mi", "ter", "sun", "vra"][w % 6],
                w
            ));
        }
        text.push(' ');
    }
    text.trim_end().to_owned()
}

/// `days` daily files of 6 entries each, written by the history writer
/// itself (`MemoryDir::append_history`) with the clock set to each entry's
/// time, then the clock back at the start.
fn history_dir(days: i64) -> (TempDir, MemoryDir) {
    let tmp = TempDir::new().expect("tempdir");
    let start = Utc.with_ymd_and_hms(2026, 3, 14, 12, 0, 0).unwrap();
    let manual = ManualClock::new(start);
    let clock = Arc::clone(&manual) as SharedClock;
    let mut dir = MemoryDir::new(tmp.path().join("memory"), clock);
    dir.ensure().expect("mkdir");
    for age in (0..days).rev() {
        for k in 0..6 {
            let at = start - Duration::days(age) - Duration::hours(4)
                + Duration::minutes(i64::try_from(k * 67).expect("small"));
            manual.set(at);
            dir.append_history(&entry_text(age as usize * 10 + k))
                .expect("append");
        }
    }
    manual.set(start);
    dir.invalidate_history_cache();
    (tmp, dir)
}

fn read_recent_history(c: &mut Criterion) {
    let (_tmp, mut dir) = history_dir(181);
    let mut group = c.benchmark_group("read_recent_history");
    group.bench_function("cold", |b| {
        b.iter(|| {
            dir.invalidate_history_cache();
            dir.read_recent_history(14).expect("read")
        })
    });
    group.bench_function("cached", |b| {
        b.iter(|| dir.read_recent_history(14).expect("read"))
    });
    group.finish();
}

fn fts_query(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let tmp = TempDir::new().expect("tempdir");
    let docs: Vec<Doc> = (0..10_000)
        .map(|i| Doc {
            file: format!("history/2025-{:02}-{:02}.md", 1 + i % 12, 1 + i % 28),
            section: format!("2025-01-01 {:02}:00", i % 24),
            content: entry_text(i),
        })
        .collect();
    let mut index = FtsIndex::new(tmp.path().join("memory_index.db"));
    rt.block_on(async {
        index.open().await.expect("open");
        index.rebuild(&docs).await.expect("rebuild");
    });
    let mut group = c.benchmark_group("fts_query");
    for (name, query) in [("10k", "running rollback"), ("10k_common_word", "running")] {
        group.bench_function(name, |b| {
            b.iter(|| rt.block_on(index.search_query(query, 20)).expect("search"))
        });
    }
    group.finish();
    rt.block_on(index.close());
}

criterion_group!(benches, read_recent_history, fts_query);
criterion_main!(benches);
