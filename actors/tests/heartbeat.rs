//! The heartbeat with an injected clock: idle checks on every tick, an
//! index rebuild every 15 ticks, a prune every 1,440 ticks using the live
//! `history_max_days`, the interval timer, and the start-up prune.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use kirocrew_actors::clock::{ManualClock, SharedClock};
use kirocrew_actors::heartbeat::{
    CheckIdleSessions, HeartbeatConfig, HeartbeatHandle, HistorySettings,
};
use kirocrew_actors::memory_files::{MemoryFilesConfig, MemoryFilesHandle};
use tempfile::TempDir;
use tokio::sync::mpsc;

/// Drains the subscriber's queue: how many checks arrived, and the last.
fn drain(rx: &mut mpsc::Receiver<CheckIdleSessions>) -> (usize, Option<CheckIdleSessions>) {
    let mut seen = 0;
    let mut last = None;
    while let Ok(check) = rx.try_recv() {
        seen += 1;
        last = Some(check);
    }
    (seen, last)
}

fn setup(
    home: &TempDir,
    clock: Arc<ManualClock>,
    interval: Duration,
    prune_on_start: bool,
) -> (MemoryFilesHandle, HeartbeatHandle) {
    let files = MemoryFilesHandle::start(MemoryFilesConfig {
        memory_dir: home.path().join("memory"),
        index_path: home.path().join("memory_index.db"),
        clock: clock.clone() as SharedClock,
        rebuild_on_start: true,
    });
    let heartbeat = HeartbeatHandle::start(
        files.clone(),
        HeartbeatConfig {
            interval,
            settings: HistorySettings::default(),
            clock: clock as SharedClock,
            prune_on_start,
        },
    );
    (files, heartbeat)
}

fn write_old_day(home: &TempDir, days_ago: i64, clock: &ManualClock) {
    use kirocrew_actors::clock::Clock;
    let date =
        clock.now().with_timezone(&chrono::Local).date_naive() - chrono::Duration::days(days_ago);
    let dir = home.path().join("memory/history");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{date}.md")), "## 10:00\nold news\n").unwrap();
}

fn history_count(home: &TempDir) -> usize {
    std::fs::read_dir(home.path().join("memory/history"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[actix_rt::test]
async fn ticks_check_idle_rebuild_every_15_and_prune_every_1440() {
    let home = TempDir::new().unwrap();
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 14, 12, 0, 0).unwrap());
    write_old_day(&home, 40, &clock);
    let (files, heartbeat) = setup(&home, clock.clone(), Duration::from_secs(3600), false);
    // Room for every check of the test, so none is skipped as "busy".
    let (tx, mut rx) = mpsc::channel(2_000);
    heartbeat.subscribe_idle(tx).await.unwrap();

    for tick in 1..=15u64 {
        clock.advance(chrono::Duration::seconds(60));
        let report = heartbeat.tick().await.unwrap();
        assert_eq!(report.tick, tick);
        assert_eq!(report.idle_checks, 1);
        assert_eq!(report.rebuilt.is_some(), tick == 15, "tick {tick}");
        assert!(report.pruned.is_none());
    }
    let (seen, last) = drain(&mut rx);
    assert_eq!(seen, 15);
    let check = last.unwrap();
    assert_eq!(
        check.now,
        Utc.with_ymd_and_hms(2026, 3, 14, 12, 15, 0).unwrap()
    );
    assert_eq!(check.idle_after, chrono::Duration::hours(3));

    // Settings apply from the next tick on: a 30-day limit prunes the
    // 40-day-old file at tick 1,440 and not before.
    heartbeat
        .set_history_settings(HistorySettings {
            history_idle_hours: 0.5,
            history_max_days: 30,
        })
        .await
        .unwrap();
    let mut rebuilds = 1;
    for tick in 16..1_440u64 {
        let report = heartbeat.tick().await.unwrap();
        assert!(report.pruned.is_none(), "tick {tick}");
        rebuilds += usize::from(report.rebuilt.is_some());
    }
    assert_eq!(rebuilds, 95);
    assert_eq!(history_count(&home), 1);
    let report = heartbeat.tick().await.unwrap();
    assert_eq!(report.tick, 1_440);
    assert!(report.rebuilt.is_some());
    assert_eq!(report.pruned.unwrap().removed.len(), 1);
    assert_eq!(history_count(&home), 0);
    let (seen, last) = drain(&mut rx);
    assert_eq!(seen, 1_425);
    assert_eq!(last.unwrap().idle_after, chrono::Duration::minutes(30));
    let status = heartbeat.status().await.unwrap();
    assert_eq!(status.ticks, 1_440);
    assert!(status.last_prune_at.is_some() && status.last_rebuild_at.is_some());
    assert!(heartbeat
        .set_history_settings(HistorySettings {
            history_idle_hours: -1.0,
            history_max_days: 30,
        })
        .await
        .is_err());
    assert_eq!(
        heartbeat.history_settings().await.unwrap().history_max_days,
        30
    );
    drop(rx);
    let report = heartbeat.tick().await.unwrap();
    assert_eq!(
        report.idle_checks, 0,
        "a subscriber whose receiver is gone is dropped"
    );
    heartbeat.stop();
    files.close().await.unwrap();
}

#[actix_rt::test]
async fn the_interval_timer_ticks_and_start_up_prunes() {
    let home = TempDir::new().unwrap();
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 14, 12, 0, 0).unwrap());
    write_old_day(&home, 400, &clock);
    write_old_day(&home, 2, &clock);
    let (files, heartbeat) = setup(&home, clock, Duration::from_millis(40), true);
    // The start-up prune runs in the background behind the index's own
    // start-up rebuild, so wait for it as well as for the ticks (bounded:
    // a loaded machine may need more than a few tick intervals).
    let mut status = heartbeat.status().await.unwrap();
    for _ in 0..500 {
        if status.ticks >= 3 && status.last_prune_at.is_some() {
            break;
        }
        actix_rt::time::sleep(Duration::from_millis(20)).await;
        status = heartbeat.status().await.unwrap();
    }
    assert!(status.ticks >= 3, "ticked {} times", status.ticks);
    assert!(status.last_prune_at.is_some(), "the start-up prune ran");
    assert_eq!(
        history_count(&home),
        1,
        "the 400-day-old file was pruned at start"
    );
    heartbeat.stop();
    files.close().await.unwrap();
}
