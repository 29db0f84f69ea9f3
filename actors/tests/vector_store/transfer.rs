//! `set_semantic_if_absent`, export and import.

use super::*;

#[actix_rt::test]
async fn set_semantic_if_absent_never_overwrites() {
    let fx = manual_store().await;
    fx.store
        .write_semantic(w("pref.theme", json!("dark"), 0.8, "consolidation"))
        .await
        .unwrap();
    let before = row_bytes(&fx.store, "pref.theme").await;
    let events_before = event_count(&fx.store).await;
    fx.tick();

    // Even writes the ladder would accept (user_explicit, higher confidence).
    for write in [
        w("pref.theme", json!("light"), 1.0, USER_EXPLICIT),
        w("pref.theme", json!("light"), 1.0, "import"),
        w("pref.theme", json!("dark"), 0.8, "consolidation"),
    ] {
        assert_eq!(
            fx.store.set_semantic_if_absent(write).await.unwrap(),
            IfAbsentOutcome::Exists
        );
    }
    assert_eq!(row_bytes(&fx.store, "pref.theme").await, before);
    assert_eq!(
        event_count(&fx.store).await,
        events_before,
        "no event for Exists"
    );

    // An absent key is inserted, with a create event.
    let now = fx.tick();
    let outcome = fx
        .store
        .set_semantic_if_absent(w("pref.font", json!("mono"), 0.9, "import"))
        .await
        .unwrap();
    let IfAbsentOutcome::Inserted(entry) = outcome else {
        panic!("expected Inserted, got {outcome:?}");
    };
    assert_eq!(entry.value, json!("mono"));
    assert_eq!(entry.source, "import");
    assert_eq!(entry.created_at, now);
    assert_eq!(fx.store.get_semantic("pref.font").await.unwrap(), entry);
    let ev = fx.store.list_events(1).await.unwrap().remove(0);
    assert_eq!(
        (ev.event_type.as_str(), ev.key.as_str(), ev.source.as_str()),
        ("create", "pref.font", "import")
    );
    assert_eq!(ev.old_value, None);

    // A tombstoned key counts as absent.
    fx.store
        .delete_semantic("pref.font", USER_EXPLICIT)
        .await
        .unwrap();
    assert!(matches!(
        fx.store
            .set_semantic_if_absent(w("pref.font", json!("serif"), 0.9, "import"))
            .await
            .unwrap(),
        IfAbsentOutcome::Inserted(_)
    ));

    // Validation still applies.
    assert!(matches!(
        fx.store
            .set_semantic_if_absent(w("nope.key", json!(1), 1.0, "import"))
            .await,
        Err(VectorStoreError::KeyNotAllowed { .. })
    ));
    assert!(matches!(
        fx.store
            .set_semantic_if_absent(w("pref.lowconf", json!(1), 0.5, "import"))
            .await,
        Err(VectorStoreError::BelowConfidenceThreshold { .. })
    ));
}

fn keys_of(entries: &[SemanticEntry]) -> Vec<String> {
    entries.iter().map(|e| e.key.clone()).collect()
}

#[actix_rt::test]
async fn export_then_import_round_trips_into_a_fresh_store() {
    let a = manual_store().await;
    let entries = sample_entries();
    for write in entries.clone() {
        a.store.write_semantic(write).await.unwrap();
        a.tick();
    }
    // A lesson travels as a lesson.* row and comes back through the lesson
    // path, under the same key (derived from its rule).
    let lesson = a.store.write_lesson(sample_lesson()).await.unwrap();
    let total = entries.len() + 1;
    // A deleted key is not exported.
    a.store
        .write_semantic(w("pref.gone", json!("x"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    a.store
        .delete_semantic("pref.gone", USER_EXPLICIT)
        .await
        .unwrap();

    let export = a.store.export().await.unwrap();
    assert_eq!(export.format, EXPORT_FORMAT);
    assert_eq!(export.version, EXPORT_VERSION);
    assert_eq!(export.exported_at, a.now());
    assert_eq!(export.semantic.len(), total);
    assert!(keys_of(&export.semantic).contains(&lesson.key().to_owned()));
    let keys: Vec<_> = export.semantic.iter().map(|e| e.key.clone()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "export is sorted by key");

    // Through JSON text, as a file would carry it.
    let text = serde_json::to_string_pretty(&export).unwrap();
    let document: Value = serde_json::from_str(&text).unwrap();

    let b = manual_store().await;
    b.clock.set(start_time() + Duration::days(30));
    let report = b.store.import(document.clone()).await.unwrap();
    assert_eq!(
        (report.imported, report.skipped, report.rejected),
        (total, 0, 0),
        "{report:?}"
    );
    assert!(report.details.is_empty());

    let restored = b.store.export().await.unwrap();
    assert_eq!(b.store.list_lessons().await.unwrap()[0].key, lesson.key());
    assert_eq!(essence(&restored.semantic), essence(&export.semantic));
    // Restored rows carry the import time, not the exported timestamps.
    assert!(restored.semantic.iter().all(|e| e.created_at == b.now()));
    let events = all_events(&b.store).await;
    assert_eq!(events.len(), total);
    assert!(events
        .iter()
        .all(|e| e.event_type == "create" && e.old_value.is_none()));

    // Importing again changes nothing and reports every entry as skipped.
    let before = serde_json::to_vec(&b.store.export().await.unwrap().semantic).unwrap();
    let again = b.store.import(document.clone()).await.unwrap();
    assert_eq!(
        (again.imported, again.skipped, again.rejected),
        (0, total, 0)
    );
    assert_eq!(again.details.len(), total);
    for (item, key) in again.details.iter().zip(&keys) {
        assert_eq!(&item.key, key);
        assert_eq!(item.outcome, "skipped");
        assert_eq!(item.reason, "key already exists");
    }
    assert_eq!(
        serde_json::to_vec(&b.store.export().await.unwrap().semantic).unwrap(),
        before
    );
    assert_eq!(event_count(&b.store).await, total as i64);

    // Importing into the origin store is a no-op too.
    let onto_self = a.store.import(document).await.unwrap();
    assert_eq!(onto_self.skipped, total);
    assert_eq!(onto_self.imported, 0);
}

#[actix_rt::test]
async fn import_rejects_malformed_entries_with_reasons_and_stores_the_rest() {
    let fx = manual_store().await;
    fx.store
        .write_semantic(w("pref.kept", json!("mine"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    let document = json!({
        "format": EXPORT_FORMAT,
        "version": 1,
        "semantic": [
            {"key": "pref.good", "value": "ok"},                                  // 0 imported
            {"value": "no key here"},                                             // 1 missing key
            {"key": "Pref.Bad", "value": 1},                                      // 2 bad key
            {"key": "secret.token", "value": 1},                                  // 3 not allowed
            {"key": "pref.nan", "value": 1, "confidence": f64::NAN},              // 4 NaN -> null
            {"key": "pref.nan_text", "value": 1, "confidence": "NaN"},            // 5 not a number
            {"key": "pref.over", "value": 1, "confidence": 1.5},                  // 6 out of range
            {"key": "pref.under", "value": 1, "confidence": -0.25},               // 7 out of range
            {"key": "pref.low", "value": 1, "confidence": 0.5, "source": "import"}, // 8 gate
            {"key": "pref.inject", "value": INJECTION},                           // 9 injection
            {"key": "pref.null", "value": null},                                  // 10 null value
            {"key": "pref.kept", "value": "theirs", "source": USER_EXPLICIT},     // 11 exists
            {"key": "pref.badsource", "value": 1, "source": "Not Valid"},         // 12 bad source
            {"key": 42, "value": 1},                                              // 13 key not a string
            "just a string",                                                      // 14 not an object
            {"key": "user.good", "value": {"x": [1, 2]}, "confidence": 0.9,
             "source": "migration", "created_at": "2020-01-01T00:00:00Z"},        // 15 imported
        ]
    });
    let report = fx.store.import(document).await.unwrap();
    assert_eq!(report.imported, 2, "{report:#?}");
    assert_eq!(report.skipped, 1, "{report:#?}");
    assert_eq!(report.rejected, 13, "{report:#?}");

    let expect: &[(&str, &str, &str)] = &[
        ("#1", "rejected", "missing field `key`"),
        ("Pref.Bad", "rejected", "invalid key"),
        ("secret.token", "rejected", "allowed prefix"),
        ("pref.nan", "rejected", "malformed entry"),
        ("pref.nan_text", "rejected", "malformed entry"),
        ("pref.over", "rejected", "invalid confidence"),
        ("pref.under", "rejected", "invalid confidence"),
        ("pref.low", "rejected", "below the threshold"),
        ("pref.inject", "rejected", "injection screening"),
        ("pref.null", "rejected", "invalid value"),
        ("pref.kept", "skipped", "key already exists"),
        ("pref.badsource", "rejected", "invalid source"),
        ("#13", "rejected", "malformed entry"),
        ("#14", "rejected", "malformed entry"),
    ];
    assert_eq!(report.details.len(), expect.len(), "{report:#?}");
    for (item, (key, outcome, reason)) in report.details.iter().zip(expect) {
        assert_eq!(item.key, *key);
        assert_eq!(item.outcome, *outcome, "{item:?}");
        assert!(
            item.reason.to_lowercase().contains(&reason.to_lowercase()),
            "{key}: reason {:?} lacks {reason:?}",
            item.reason
        );
    }

    let stored: BTreeSet<_> = fx
        .store
        .list_semantic(None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.key, e.value.to_string(), e.source))
        .collect();
    assert_eq!(
        stored,
        BTreeSet::from([
            ("pref.good".into(), "\"ok\"".into(), "import".into()),
            ("pref.kept".into(), "\"mine\"".into(), USER_EXPLICIT.into()),
            (
                "user.good".into(),
                r#"{"x":[1,2]}"#.into(),
                "migration".into()
            ),
        ])
    );
    // Defaults: confidence 1.0 and source `import`; timestamps from the clock.
    let good = fx.store.get_semantic("pref.good").await.unwrap();
    assert_eq!(good.confidence, 1.0);
    let user_good = fx.store.get_semantic("user.good").await.unwrap();
    assert_eq!(user_good.created_at, fx.now());

    let kinds: Vec<_> = all_events(&fx.store)
        .await
        .into_iter()
        .map(|e| (e.event_type, e.key))
        .collect();
    assert_eq!(
        kinds,
        [
            ("create".to_owned(), "pref.kept".to_owned()),
            ("create".to_owned(), "pref.good".to_owned()),
            ("injection_blocked".to_owned(), "pref.inject".to_owned()),
            ("create".to_owned(), "user.good".to_owned()),
        ]
    );
}

#[actix_rt::test]
async fn import_refuses_foreign_documents_whole() {
    let fx = manual_store().await;
    for bad in [
        json!({"format": "something-else", "version": 1, "semantic": [{"key": "pref.a", "value": 1}]}),
        json!({"format": EXPORT_FORMAT, "version": EXPORT_VERSION + 1, "semantic": []}),
        json!({"format": EXPORT_FORMAT, "version": 0, "semantic": []}),
        json!({"format": EXPORT_FORMAT, "version": 1, "episodic": []}),
        json!([{"key": "pref.a", "value": 1}]),
    ] {
        assert!(
            matches!(
                fx.store.import(bad.clone()).await,
                Err(VectorStoreError::InvalidExport(_))
            ),
            "{bad}"
        );
    }
    assert!(fx.store.list_semantic(None, 10).await.unwrap().is_empty());
}

/// Issue 10 (4): a backup is whole. Semantic rows, lessons (with their
/// category) and episodic memories survive export → empty home → import →
/// export, byte-identical apart from the timestamps the format lets differ
/// (`exported_at`, and semantic `created_at`/`updated_at`, which take the
/// import time); episodic `created_at` is kept.
#[actix_rt::test]
async fn a_backup_round_trips_semantic_lessons_and_episodic_memory() {
    use kirocrew_actors::vector_store::episodic::EpisodicWrite;
    use kirocrew_actors::vector_store::lessons::{LessonCategory, LessonWrite};

    let a = manual_store().await;
    for write in sample_entries() {
        a.store.write_semantic(write).await.unwrap();
        a.tick();
    }
    let mut lesson = LessonWrite::user("run cargo fmt before committing");
    lesson.category = LessonCategory::Tool;
    a.store.write_lesson(lesson).await.unwrap();
    for (i, text) in [
        "We planned a trip to Lisbon in May with Ana.",
        "The billing dashboard shipped on Friday after review.",
    ]
    .iter()
    .enumerate()
    {
        let mut w = EpisodicWrite::new(*text, "test");
        w.tags = vec![format!("Tag {i}")];
        w.importance = 0.25 + 0.5 * i as f64;
        w.created_at = Some(start_time() - Duration::days(10 - i as i64));
        a.store.write_episodic(w).await.unwrap();
    }
    let export = a.store.export().await.unwrap();
    assert_eq!(export.episodic.len(), 2);
    let text = serde_json::to_string_pretty(&export).unwrap();

    let b = manual_store().await;
    b.clock.set(start_time() + Duration::days(30));
    let report = b.store.import_json(&text).await.unwrap();
    assert_eq!(report.rejected, 0, "{report:?}");
    assert_eq!(report.imported, export.semantic.len() + 2, "{report:?}");

    let mut restored = b.store.export().await.unwrap();
    let mut original = export.clone();
    for doc in [&mut restored, &mut original] {
        doc.exported_at.clear();
        for e in &mut doc.semantic {
            e.created_at.clear();
            e.updated_at.clear();
        }
    }
    assert_eq!(
        serde_json::to_string_pretty(&restored).unwrap(),
        serde_json::to_string_pretty(&original).unwrap()
    );
    // A second import changes nothing.
    let again = b.store.import_json(&text).await.unwrap();
    assert_eq!(again.imported, 0, "{again:?}");
}

/// Issue 10 (8): one entry nested past any parser's depth limit is
/// reported and skipped; the rest of the document is restored.
#[actix_rt::test]
async fn import_decodes_entry_by_entry() {
    let fx = manual_store().await;
    let deep = format!("{}1{}", "[".repeat(125), "]".repeat(125));
    let text = format!(
        r#"{{"format": "{EXPORT_FORMAT}", "version": 1, "semantic": [
            {{"key": "pref.deep", "value": {deep}}},
            {{"key": "pref.ok", "value": "kept"}},
            {{"key": 5}}
        ]}}"#
    );
    let report = fx.store.import_json(&text).await.unwrap();
    assert_eq!((report.imported, report.rejected), (1, 2), "{report:?}");
    assert!(report.details[0].reason.contains("nested"), "{report:?}");
    assert_eq!(
        fx.store.get_semantic("pref.ok").await.unwrap().value,
        json!("kept")
    );
}

#[actix_rt::test]
async fn imported_lesson_rows_obey_the_lesson_rules() {
    let fx = manual_store().await;
    let long = "always ".repeat(571);
    let document = json!({
        "format": EXPORT_FORMAT,
        "version": 1,
        "semantic": [
            {"key": "lesson.number", "value": 42},
            {"key": "lesson.object", "value": {"rule": "obey"}},
            {"key": "lesson.long", "value": long},
            {"key": "lesson.legacy", "value": "prefer rg over grep"},
            {"key": "lesson.again", "value": "prefer rg over grep"},
            {"key": "lesson.flip", "value": "use rg \u{202E}"},
            {"key": "pref.flip", "value": {"note": "zero\u{0}byte"}},
        ]
    });
    let report = fx.store.import(document).await.unwrap();
    assert_eq!(
        (report.imported, report.skipped, report.rejected),
        (1, 1, 5),
        "{report:#?}"
    );
    for item in &report.details[report.details.len() - 2..] {
        assert!(item.reason.contains("control character"), "{item:?}");
    }
    assert!(report.details[2].reason.contains("1000"), "{report:#?}");
    let lessons = fx.store.list_lessons().await.unwrap();
    assert_eq!(lessons.len(), 1);
    assert_eq!(lessons[0].rule, "prefer rg over grep");
    assert!(matches!(
        fx.store.get_semantic("lesson.legacy").await,
        Err(VectorStoreError::NotFound(_))
    ));
}
