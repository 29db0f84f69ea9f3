//! Lifecycle: close, reopen, supervision.

use super::*;

fn wal_len(path: &Path) -> u64 {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).map_or(0, |m| m.len())
}

#[actix_rt::test]
async fn close_is_final_and_is_not_restarted() {
    let fx = manual_store().await;
    fx.store.check_health().await.unwrap();
    fx.store
        .write_semantic(w("pref.theme", json!("dark"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    let path = fx.path();
    fx.store.close().await.unwrap();
    assert_eq!(
        wal_len(&path),
        0,
        "close checkpoints the WAL into memory.db"
    );

    let unavailable =
        |r: &Result<_, VectorStoreError>| matches!(r, Err(VectorStoreError::Unavailable(_)));
    // Probe repeatedly over a while: an orderly close must not be undone by
    // the supervisor.
    for _ in 0..5 {
        assert!(unavailable(&fx.store.check_health().await));
        assert!(unavailable(
            &fx.store.get_semantic("pref.theme").await.map(|_| ())
        ));
        assert!(unavailable(
            &fx.store
                .write_semantic(w("pref.theme", json!("light"), 1.0, USER_EXPLICIT))
                .await
                .map(|_| ())
        ));
        assert!(unavailable(&fx.store.list_events(10).await.map(|_| ())));
        assert!(unavailable(&fx.store.stats().await.map(|_| ())));
        assert!(unavailable(&fx.store.export().await.map(|_| ())));
        let err = fx.store.search_semantic("", 10).await.unwrap_err();
        assert!(
            !err.is_rejection(),
            "Unavailable is a store failure, not a rejection"
        );
        actix_rt::time::sleep(StdDuration::from_millis(100)).await;
    }
    // A second close is harmless.
    fx.store.close().await.unwrap();
    // Clones share the closed actor.
    let clone = fx.store.clone();
    assert!(unavailable(&clone.check_health().await));

    // The file was released intact: a new store reads it.
    let reopened = VectorStoreHandle::open(path, StoreSettings::default(), system_clock())
        .await
        .unwrap();
    assert_eq!(
        reopened.get_semantic("pref.theme").await.unwrap().value,
        json!("dark")
    );
}

#[actix_rt::test]
async fn data_persists_across_close_and_reopen() {
    let fx = manual_store().await;
    let entries = sample_entries();
    for write in entries.clone() {
        fx.store.write_semantic(write).await.unwrap();
        fx.tick();
    }
    fx.store
        .delete_semantic("user.city", USER_EXPLICIT)
        .await
        .unwrap();
    let _ = fx
        .store
        .write_semantic(w("pref.theme", json!("light"), 1.0, "consolidation"))
        .await; // conflict_skip
    let before_rows = fx.store.list_semantic(None, 100).await.unwrap();
    let before_events = fx.store.list_events(100).await.unwrap();
    let before_stats = fx.store.stats().await.unwrap();
    fx.store.close().await.unwrap();

    let fx_path = fx.path();
    let clock: SharedClock = fx.clock.clone();
    let reopened = VectorStoreHandle::open(fx_path.clone(), StoreSettings::default(), clock)
        .await
        .unwrap();
    assert_eq!(
        reopened.list_semantic(None, 100).await.unwrap(),
        before_rows
    );
    assert_eq!(reopened.list_events(100).await.unwrap(), before_events);
    let after_stats = reopened.stats().await.unwrap();
    assert_eq!(after_stats.semantic, before_stats.semantic);
    assert_eq!(after_stats.events, before_stats.events);
    assert_eq!(after_stats.semantic.deleted, 1);
    assert!(matches!(
        reopened.get_semantic("user.city").await,
        Err(VectorStoreError::NotFound(_))
    ));
    // The ladder still sees the persisted source: user_explicit still wins.
    assert!(matches!(
        reopened
            .write_semantic(w("pref.theme", json!("light"), 1.0, "import"))
            .await,
        Err(VectorStoreError::ConflictSkipped { .. })
    ));
    // And new writes continue the event ids.
    reopened
        .write_semantic(w("pref.new", json!(1), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    let newest = reopened.list_events(1).await.unwrap().remove(0);
    assert!(newest.id > before_events[0].id);

    // A third open after this one is closed sees everything, too.
    reopened.close().await.unwrap();
    let third = VectorStoreHandle::open(fx_path, StoreSettings::default(), system_clock())
        .await
        .unwrap();
    assert_eq!(
        third.get_semantic("pref.new").await.unwrap().value,
        json!(1)
    );
    assert_eq!(
        third.list_semantic(None, 100).await.unwrap().len(),
        before_rows.len() + 1
    );
}

#[actix_rt::test]
async fn open_fails_cleanly_on_an_unusable_path() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the database file should be.
    let path = dir.path().join("memory.db");
    std::fs::create_dir(&path).unwrap();
    let err = VectorStoreHandle::open(path, StoreSettings::default(), system_clock())
        .await
        .expect_err("a directory is not a database");
    assert!(matches!(err, VectorStoreError::Database(_)), "{err:?}");

    // A missing parent directory.
    let path = dir.path().join("no/such/dir/memory.db");
    assert!(
        VectorStoreHandle::open(path, StoreSettings::default(), system_clock())
            .await
            .is_err()
    );
}
