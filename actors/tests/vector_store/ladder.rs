//! The conflict ladder: who may overwrite whom.

use super::*;

#[actix_rt::test]
async fn user_explicit_overwrites_anything() {
    let fx = manual_store().await;

    // Over an automated row with full confidence, even at very low confidence.
    fx.store
        .write_semantic(w("pref.theme", json!("dark"), 1.0, "consolidation"))
        .await
        .unwrap();
    assert_overwrites(&fx, w("pref.theme", json!("light"), 0.1, USER_EXPLICIT)).await;

    // Over another user_explicit row, downwards in confidence.
    fx.store
        .write_semantic(w("pref.font", json!("mono"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    assert_overwrites(&fx, w("pref.font", json!("serif"), 0.2, USER_EXPLICIT)).await;

    // Over an imported row.
    fx.store
        .write_semantic(w("user.name", json!("Ada"), 0.9, "import"))
        .await
        .unwrap();
    assert_overwrites(&fx, w("user.name", json!("Ada L."), 0.5, USER_EXPLICIT)).await;
}

#[actix_rt::test]
async fn only_user_explicit_may_replace_user_explicit() {
    let fx = manual_store().await;
    fx.store
        .write_semantic(w("pref.editor", json!("vim"), 0.5, USER_EXPLICIT))
        .await
        .unwrap();

    for source in ["consolidation", "import", "migration", "task_runner"] {
        let reason = assert_skipped(&fx, w("pref.editor", json!("emacs"), 1.0, source)).await;
        assert!(reason.contains(USER_EXPLICIT), "reason: {reason}");
    }
    let skips: Vec<_> = events_for(&fx.store, "pref.editor")
        .await
        .into_iter()
        .filter(|e| e.event_type == "conflict_skip")
        .collect();
    assert_eq!(skips.len(), 4);
    for skip in &skips {
        assert_eq!(skip.old_value.as_deref(), Some("\"vim\""));
        assert_eq!(skip.new_value.as_deref(), Some("\"emacs\""));
    }
    assert_eq!(
        fx.store.get_semantic("pref.editor").await.unwrap().value,
        json!("vim")
    );
}

#[actix_rt::test]
async fn higher_confidence_wins_outside_the_tie_band() {
    let fx = manual_store().await;
    fx.store
        .write_semantic(w("project.lang", json!("rust"), 0.8, "consolidation"))
        .await
        .unwrap();
    // 0.95 beats 0.8 by more than the band: the incoming write wins.
    assert_overwrites(&fx, w("project.lang", json!("go"), 0.95, "import")).await;
    // Back down to 0.8: the stored 0.95 wins.
    let reason = assert_skipped(&fx, w("project.lang", json!("zig"), 0.8, "consolidation")).await;
    assert!(
        reason.contains("0.95"),
        "reason names the stored confidence: {reason}"
    );
    // A strictly higher confidence wins even from a different source.
    assert_overwrites(&fx, w("project.lang", json!("c"), 1.0, "consolidation")).await;
    assert_eq!(
        fx.store.get_semantic("project.lang").await.unwrap().value,
        json!("c")
    );
}

#[actix_rt::test]
async fn within_the_tie_band_the_newer_write_wins() {
    let fx = manual_store().await;
    // (stored, incoming, incoming wins?)
    let cases = [
        (0.95, 0.85, true),  // exactly 0.1 apart (above in f64): newer wins
        (0.96, 0.85, false), // 0.11 apart: stored wins
        (0.9, 0.8, true),    // 0.1 apart (below in f64): newer wins
        (0.85, 0.85, true),  // equal: newer wins
        (0.9, 0.95, true),   // slightly higher
        (1.0, 0.89, false),  // 0.11 apart
        (1.0, 0.9, true),    // 0.1 apart
    ];
    for (i, (stored, incoming, wins)) in cases.into_iter().enumerate() {
        let key = format!("pref.case{i}");
        fx.store
            .write_semantic(w(&key, json!(format!("old {i}")), stored, "consolidation"))
            .await
            .unwrap();
        let write = w(&key, json!(format!("new {i}")), incoming, "import");
        if wins {
            assert_overwrites(&fx, write).await;
        } else {
            assert_skipped(&fx, write).await;
        }
    }
}

#[actix_rt::test]
async fn re_affirming_the_same_value_updates_without_changing_created_at() {
    let fx = manual_store().await;
    let (_, first) = fx
        .store
        .write_semantic(w("pref.shell", json!("zsh"), 0.9, "consolidation"))
        .await
        .unwrap();
    let now = fx.tick();
    let (outcome, second) = fx
        .store
        .write_semantic(w("pref.shell", json!("zsh"), 0.9, "consolidation"))
        .await
        .unwrap();
    assert_eq!(outcome, WriteOutcome::Updated);
    assert_eq!(second.created_at, first.created_at);
    assert_eq!(second.updated_at, now);
}
