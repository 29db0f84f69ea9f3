//! The SecurityLog actor: records in order, rotates within its bound, and
//! feeds live subscribers without ever blocking on a slow one.

use kirocrew_actors::clock::ManualClock;
use kirocrew_actors::security_log::{
    read_recent, SecurityEvent, SecurityLogConfig, SecurityLogHandle,
};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

fn start(dir: &tempfile::TempDir, max_bytes: u64) -> SecurityLogHandle {
    SecurityLogHandle::start(SecurityLogConfig {
        path: dir.path().join("security-events.jsonl"),
        max_bytes,
        keep: 2,
        clock: ManualClock::new(
            chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
                .unwrap()
                .into(),
        ),
    })
}

fn event(i: usize) -> SecurityEvent {
    SecurityEvent::new(
        "hook_decision",
        "test",
        "deny",
        json!({"i": i, "pad": "p".repeat(100)}),
    )
}

#[actix_rt::test]
async fn events_are_recorded_in_order_and_stay_within_the_rotation_bound() {
    let dir = tempfile::tempdir().unwrap();
    let log = start(&dir, 2_000);
    for i in 0..100 {
        log.record(event(i)).await.unwrap();
    }
    let durable = log
        .record(SecurityEvent::new("read_sensitive", "test", "allow", json!({})).durable())
        .await
        .unwrap();
    assert!(
        durable.ts.starts_with("2026-12-01T10:00:00"),
        "{}",
        durable.ts
    );
    let newest = log.recent(3, None).await.unwrap();
    assert_eq!(newest[0].event.category, "read_sensitive");
    assert_eq!(newest[1].event.detail["i"], 99);
    assert_eq!(newest[2].event.detail["i"], 98);
    // Live file plus two rotated ones, each within the bound; the oldest
    // events rotated away.
    let path = dir.path().join("security-events.jsonl");
    for p in [path.clone(), dir.path().join("security-events.jsonl.1")] {
        let len = std::fs::metadata(&p).unwrap().len();
        assert!(len <= 2_000, "{} is {len} bytes", p.display());
    }
    assert!(!dir.path().join("security-events.jsonl.3").exists());
    let all = read_recent(&path, 2, 1_000, None).unwrap();
    assert!(all.len() < 101 && all.len() > 10, "{}", all.len());
    let ids: Vec<i64> = all
        .iter()
        .filter_map(|r| r.event.detail["i"].as_i64())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1] + 1), "{ids:?}");
    assert_eq!(
        log.recent(5, Some("read_sensitive")).await.unwrap().len(),
        1
    );
}

#[actix_rt::test]
async fn a_slow_subscriber_is_told_how_many_it_missed() {
    let dir = tempfile::tempdir().unwrap();
    let log = start(&dir, 10_000_000);
    let mut fast = log.subscribe();
    let mut slow = log.subscribe();
    for i in 0..300 {
        log.record(event(i)).await.unwrap();
        assert_eq!(fast.recv().await.unwrap().event.detail["i"], i);
    }
    match slow.recv().await {
        Err(RecvError::Lagged(missed)) => assert_eq!(missed, 300 - 256),
        other => panic!("expected a lag report, got {other:?}"),
    }
    assert_eq!(slow.recv().await.unwrap().event.detail["i"], 300 - 256);
}
