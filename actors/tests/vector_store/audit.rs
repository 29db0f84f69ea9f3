//! Audit events, tombstones, and the bound on the audit trail.

use super::*;

// Audit events, tombstones
#[actix_rt::test]
async fn create_update_delete_events_carry_values_and_source() {
    let fx = manual_store().await;
    let t0 = fx.now();

    let (outcome, created) = fx
        .store
        .write_semantic(w("pref.editor", json!("vim"), 0.9, "consolidation"))
        .await
        .unwrap();
    assert_eq!(outcome, WriteOutcome::Created);
    assert_eq!(created.created_at, t0);
    assert_eq!(created.updated_at, t0);

    let t1 = fx.tick();
    let object = json!({"name": "helix", "version": 24, "plugins": ["lsp", "git"]});
    let (outcome, updated) = fx
        .store
        .write_semantic(w("pref.editor", object.clone(), 0.9, "import"))
        .await
        .unwrap();
    assert_eq!(outcome, WriteOutcome::Updated);
    assert_eq!(updated.created_at, t0);
    assert_eq!(updated.updated_at, t1);

    let t2 = fx.tick();
    fx.store
        .delete_semantic("pref.editor", "dashboard")
        .await
        .unwrap();

    let events = events_for(&fx.store, "pref.editor").await;
    let summary: Vec<_> = events
        .iter()
        .map(|e| (e.event_type.as_str(), e.source.as_str(), e.ts.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("create", "consolidation", t0.as_str()),
            ("update", "import", t1.as_str()),
            ("delete", "dashboard", t2.as_str()),
        ]
    );
    assert!(events.iter().all(|e| e.memory_type == "semantic"));
    assert!(events.windows(2).all(|p| p[0].id < p[1].id));

    // create: no old value, the new one.
    assert_eq!(events[0].old_value, None);
    assert_eq!(events[0].new_value.as_deref(), Some("\"vim\""));
    // update: old and new. Values are canonical JSON (object keys sorted).
    assert_eq!(events[1].old_value.as_deref(), Some("\"vim\""));
    assert_eq!(
        events[1].new_value.as_deref(),
        Some(r#"{"name":"helix","plugins":["lsp","git"],"version":24}"#)
    );
    assert_eq!(parse(&events[1].new_value), object);
    // delete: the old value, nothing new.
    assert_eq!(parse(&events[2].old_value), object);
    assert_eq!(events[2].new_value, None);
}

#[actix_rt::test]
async fn delete_is_a_tombstone_and_a_later_write_recreates() {
    let fx = manual_store().await;
    let (_, original) = fx
        .store
        .write_semantic(w("user.city", json!("Lisbon"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    fx.store
        .write_semantic(w("user.name", json!("Ada"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    fx.tick();
    fx.store
        .delete_semantic("user.city", USER_EXPLICIT)
        .await
        .unwrap();

    // Hidden from every read.
    assert!(matches!(
        fx.store.get_semantic("user.city").await,
        Err(VectorStoreError::NotFound(k)) if k == "user.city"
    ));
    let listed: Vec<_> = fx
        .store
        .list_semantic(None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(listed, ["user.name"]);
    assert!(fx
        .store
        .list_semantic(Some("user.c".into()), 100)
        .await
        .unwrap()
        .is_empty());
    assert!(fx
        .store
        .search_semantic("Lisbon", 10)
        .await
        .unwrap()
        .is_empty());
    assert!(!fx
        .store
        .semantic_context("Lisbon city", 10_000)
        .await
        .unwrap()
        .contains("Lisbon"));
    assert!(fx
        .store
        .export()
        .await
        .unwrap()
        .semantic
        .iter()
        .all(|e| e.key != "user.city"));

    // ...but the row is a tombstone, not gone.
    let stats = fx.store.stats().await.unwrap();
    assert_eq!(stats.semantic.active, 1);
    assert_eq!(stats.semantic.deleted, 1);

    // Deleting again: NotFound, and no event.
    let before = event_count(&fx.store).await;
    assert!(matches!(
        fx.store.delete_semantic("user.city", USER_EXPLICIT).await,
        Err(VectorStoreError::NotFound(_))
    ));
    assert_eq!(event_count(&fx.store).await, before);

    // A non-explicit write is not blocked by the deleted user_explicit row.
    let revived_at = fx.tick();
    let (outcome, revived) = fx
        .store
        .write_semantic(w("user.city", json!("Porto"), 0.85, "consolidation"))
        .await
        .unwrap();
    assert_eq!(outcome, WriteOutcome::Created);
    assert_eq!(revived.created_at, revived_at, "fresh created_at");
    assert_ne!(revived.created_at, original.created_at);
    assert_eq!(revived.source, "consolidation");
    let last = fx.store.list_events(1).await.unwrap().remove(0);
    assert_eq!(last.event_type, "create");
    assert_eq!(
        last.old_value, None,
        "the tombstoned value is not the old value"
    );
    assert_eq!(last.new_value.as_deref(), Some("\"Porto\""));

    let stats = fx.store.stats().await.unwrap();
    assert_eq!(stats.semantic.active, 2);
    assert_eq!(stats.semantic.deleted, 0);
    assert_eq!(
        fx.store.get_semantic("user.city").await.unwrap().value,
        json!("Porto")
    );
}

#[actix_rt::test]
async fn deleting_an_unknown_key_is_not_found() {
    let fx = manual_store().await;
    assert!(matches!(
        fx.store.delete_semantic("pref.nothing", USER_EXPLICIT).await,
        Err(VectorStoreError::NotFound(k)) if k == "pref.nothing"
    ));
    assert_eq!(event_count(&fx.store).await, 0);
}

// Audit trail bound
#[actix_rt::test]
async fn audit_trail_keeps_exactly_the_newest_ten_thousand_events() {
    let (_dir, store) = system_store().await;
    let max = StoreSettings::default().max_events;
    assert_eq!(max, 10_000);
    let total = max as usize + 150;

    let started = Instant::now();
    for i in 0..total {
        store
            .write_semantic(w(&format!("pref.k{i:05}"), json!(i), 1.0, USER_EXPLICIT))
            .await
            .unwrap();
    }
    eprintln!("{total} writes took {:?}", started.elapsed());

    assert_eq!(store.stats().await.unwrap().events, i64::from(max));
    let events = store.list_events(u32::MAX).await.unwrap();
    assert_eq!(events.len(), max as usize);
    // Newest first, contiguous ids: nothing in the middle was dropped.
    assert!(events.windows(2).all(|p| p[0].id == p[1].id + 1));
    assert_eq!(
        events.first().unwrap().key,
        format!("pref.k{:05}", total - 1)
    );
    assert_eq!(
        events.last().unwrap().key,
        format!("pref.k{:05}", total - max as usize)
    );
    let kept: HashSet<&str> = events.iter().map(|e| e.key.as_str()).collect();
    for dropped in 0..(total - max as usize) {
        assert!(!kept.contains(format!("pref.k{dropped:05}").as_str()));
    }
    // The bound is on events, not on data.
    assert_eq!(store.stats().await.unwrap().semantic.active, total as i64);

    // One more write drops exactly one more (the oldest).
    let oldest_id = events.last().unwrap().id;
    store
        .write_semantic(w("pref.extra", json!(true), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    let events = store.list_events(u32::MAX).await.unwrap();
    assert_eq!(events.len(), max as usize);
    assert_eq!(events.last().unwrap().id, oldest_id + 1);
    assert_eq!(events.first().unwrap().key, "pref.extra");
}

/// Issue 10 (8): refused writes are bounded apart from accepted ones, so
/// any number of refusals leaves the accepted history in place; each class
/// keeps its newest `max_events` rows.
#[actix_rt::test]
async fn refusals_never_evict_the_history_of_accepted_writes() {
    let fx = manual_store_with(StoreSettings {
        max_events: 5,
        ..StoreSettings::default()
    })
    .await;
    fx.store
        .write_semantic(w("pref.a", json!(1), 1.0, USER_EXPLICIT))
        .await
        .unwrap(); // create
    fx.store
        .write_semantic(w("pref.a", json!(2), 1.0, USER_EXPLICIT))
        .await
        .unwrap(); // update
    let _ = fx
        .store
        .write_semantic(w("pref.a", json!(3), 1.0, "consolidation"))
        .await; // conflict_skip
    fx.store
        .delete_semantic("pref.a", USER_EXPLICIT)
        .await
        .unwrap(); // delete
    for _ in 0..100 {
        let _ = fx
            .store
            .write_semantic(w("pref.b", json!(INJECTION), 1.0, USER_EXPLICIT))
            .await; // injection_blocked
    }
    let kinds: Vec<_> = all_events(&fx.store)
        .await
        .into_iter()
        .map(|e| e.event_type)
        .collect();
    let accepted: Vec<_> = kinds
        .iter()
        .filter(|k| !matches!(k.as_str(), "conflict_skip" | "injection_blocked"))
        .collect();
    assert_eq!(accepted, ["create", "update", "delete"], "{kinds:?}");
    assert_eq!(kinds.len(), 3 + 5, "five refusals kept: {kinds:?}");
    assert!(kinds[3..].iter().all(|k| k == "injection_blocked"));
    // The accepted class has its own bound of five.
    for i in 0..6 {
        fx.store
            .write_semantic(w(&format!("pref.c{i}"), json!(i), 1.0, USER_EXPLICIT))
            .await
            .unwrap();
    }
    let kinds: Vec<_> = all_events(&fx.store)
        .await
        .into_iter()
        .map(|e| e.event_type)
        .collect();
    assert_eq!(kinds.len(), 5 + 5, "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| k.as_str() == "create").count(),
        5,
        "{kinds:?}"
    );
}
