//! Concurrent writers and readers.

use super::*;

const TASKS: usize = 50;

#[actix_rt::test]
async fn concurrent_writes_to_distinct_keys_all_land() {
    let (_dir, store) = system_store().await;
    let mut writers = Vec::new();
    let mut readers = Vec::new();
    for i in 0..TASKS {
        let writer = store.clone();
        writers.push(actix_rt::spawn(async move {
            writer
                .write_semantic(w(
                    &format!("project.p{i:02}"),
                    json!({"n": i}),
                    0.9,
                    "consolidation",
                ))
                .await
        }));
        // Reads racing the writes must not fail either.
        let reader = store.clone();
        readers.push(actix_rt::spawn(async move {
            reader.search_semantic("project", 5).await?;
            reader.list_semantic(None, 100).await.map(|rows| rows.len())
        }));
    }
    for task in writers {
        let (outcome, _) = task.await.expect("task ran").expect("no write errors");
        assert_eq!(outcome, WriteOutcome::Created);
    }
    for task in readers {
        let seen = task.await.expect("task ran").expect("no read errors");
        assert!(seen <= TASKS);
    }

    let rows = store.list_semantic(None, 1000).await.unwrap();
    assert_eq!(rows.len(), TASKS);
    let keys: BTreeSet<_> = rows.iter().map(|e| e.key.clone()).collect();
    let expected: BTreeSet<_> = (0..TASKS).map(|i| format!("project.p{i:02}")).collect();
    assert_eq!(keys, expected);
    for row in rows {
        let n: usize = row.key["project.p".len()..].parse().unwrap();
        assert_eq!(row.value, json!({"n": n}));
    }
    let events = all_events(&store).await;
    assert_eq!(events.len(), TASKS);
    assert!(events.iter().all(|e| e.event_type == "create"));
    assert_eq!(store.stats().await.unwrap().events, TASKS as i64);
}

#[actix_rt::test]
async fn concurrent_writes_to_one_key_serialize_without_lost_updates() {
    let (_dir, store) = system_store().await;
    let mut tasks = Vec::new();
    for i in 0..TASKS {
        let store = store.clone();
        tasks.push(actix_rt::spawn(async move {
            store
                .write_semantic(w(
                    "pref.counter",
                    json!({"writer": i}),
                    0.9,
                    "consolidation",
                ))
                .await
        }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        let (outcome, _) = task.await.expect("task ran").expect("no errors");
        outcomes.push(outcome);
    }
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == WriteOutcome::Created)
            .count(),
        1
    );
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == WriteOutcome::Updated)
            .count(),
        TASKS - 1
    );

    let events = events_for(&store, "pref.counter").await;
    assert_eq!(events.len(), TASKS);
    assert_eq!(store.stats().await.unwrap().events, TASKS as i64);
    assert_eq!(events[0].event_type, "create");
    assert_eq!(events[0].old_value, None);
    // Each update saw exactly the value the previous write left: the
    // read-modify-writes did not interleave, so no update was lost.
    for pair in events.windows(2) {
        assert_eq!(pair[1].event_type, "update");
        assert_eq!(pair[1].old_value, pair[0].new_value, "interleaved write");
    }
    let writers: BTreeSet<_> = events
        .iter()
        .map(|e| parse(&e.new_value))
        .map(|v| v["writer"].as_u64().unwrap())
        .collect();
    assert_eq!(writers, (0..TASKS as u64).collect());
    let last = parse(&events.last().unwrap().new_value);
    assert_eq!(
        store.get_semantic("pref.counter").await.unwrap().value,
        last
    );
    assert_eq!(store.stats().await.unwrap().semantic.active, 1);
}

/// A realistic, searchable text of about 150 characters.
fn filler(i: usize) -> String {
    // Whole sentences, not a salad of words: the screen's n-gram model
    // scored one word salad of 2,000 over its threshold.
    const SENTENCES: &[&str] = &[
        "The editor uses a dark theme with a larger font.",
        "Morning reviews happen before the stand-up.",
        "The staging database is refreshed every Sunday.",
        "Coffee is on the second floor next to the printers.",
        "The keyboard layout is US international.",
        "Deploys to staging need a green build.",
        "The rust toolchain is pinned to the stable channel.",
        "Tokio tasks are named after the actor they serve.",
        "The terminal runs fish with a short prompt.",
        "Project notes live in the shared wiki.",
        "The laptop charger is in the top drawer.",
        "Lunch on Fridays is usually at the Thai place.",
    ];
    let mut parts: Vec<&str> = Vec::new();
    let mut x = i as u64 * 2_654_435_761 + 1;
    while parts.iter().map(|p| p.len() + 1).sum::<usize>() < 150 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        parts.push(SENTENCES[(x % SENTENCES.len() as u64) as usize]);
    }
    parts.join(" ")
}

/// Reads in flight when a write (or close) starts must not keep the pool's
/// connections: actix does not poll an actor's other futures while an
/// `AtomicResponse` is pending, so a read that had taken a connection would
/// sit on it, and with the pool (4 connections) exhausted the write would
/// wait for a connection until sqlx's 30 s acquire timeout (PoolTimedOut),
/// and `close()` would wait forever.
#[actix_rt::test]
async fn writes_and_close_are_not_starved_by_reads_in_flight() {
    let (_dir, store) = system_store().await;
    for i in 0..2_000 {
        store
            .write_semantic(w(
                &format!("project.r{i:04}"),
                json!(filler(i)),
                1.0,
                USER_EXPLICIT,
            ))
            .await
            .unwrap();
    }
    let spawn_readers = |n: usize| {
        (0..n)
            .map(|_| {
                let reader = store.clone();
                actix_rt::spawn(async move { reader.search_semantic("editor theme", 10).await })
            })
            .collect::<Vec<_>>()
    };
    for round in 0..5 {
        let readers = spawn_readers(12);
        // Let the actor start the reads, so they hold pool connections.
        actix_rt::time::sleep(StdDuration::from_millis(1)).await;
        let write = actix_rt::time::timeout(
            StdDuration::from_secs(5),
            store.write_semantic(w("pref.round", json!(round), 1.0, USER_EXPLICIT)),
        )
        .await;
        assert!(
            matches!(write, Ok(Ok((_, ref e))) if e.value == json!(round)),
            "round {round}: {write:?}"
        );
        for reader in readers {
            assert_eq!(reader.await.unwrap().unwrap().len(), 10);
        }
    }

    let readers = spawn_readers(12);
    actix_rt::time::sleep(StdDuration::from_millis(1)).await;
    let closed = actix_rt::time::timeout(StdDuration::from_secs(5), store.close()).await;
    assert!(matches!(closed, Ok(Ok(()))), "{closed:?}");
    for reader in readers {
        // Each read either finished before the close or was refused.
        match reader.await.unwrap() {
            Ok(hits) => assert_eq!(hits.len(), 10),
            // (a read admitted just before the close may find the pool closing)
            Err(e) => assert!(
                matches!(
                    e,
                    VectorStoreError::Unavailable(_)
                        | VectorStoreError::Database(sqlx::Error::PoolClosed)
                ),
                "{e:?}"
            ),
        }
    }
}
