//! Keyword search and the `[Semantic Memory]` context block.

use super::*;

#[actix_rt::test]
async fn key_matches_outrank_value_matches() {
    let fx = manual_store().await;
    // The key match is the OLDEST row, so recency alone would rank it last.
    fx.store
        .write_semantic(w("pref.editor", json!("helix"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    fx.tick();
    fx.store
        .write_semantic(w(
            "pref.tool",
            json!("my editor of choice is vim"),
            1.0,
            USER_EXPLICIT,
        ))
        .await
        .unwrap();
    fx.tick();
    fx.store
        .write_semantic(w(
            "pref.shell",
            json!("zsh with oh-my-zsh"),
            1.0,
            USER_EXPLICIT,
        ))
        .await
        .unwrap();

    let hits = fx.store.search_semantic("editor", 10).await.unwrap();
    let ranked: Vec<_> = hits.iter().map(|h| h.entry.key.as_str()).collect();
    assert_eq!(
        ranked,
        ["pref.editor", "pref.tool"],
        "non-matching rows are left out"
    );
    assert!((hits[0].score - 0.75).abs() < 1e-9, "{}", hits[0].score);
    assert!((hits[1].score - 0.25).abs() < 1e-9, "{}", hits[1].score);

    // Limit applies after ranking.
    let top = fx.store.search_semantic("editor", 1).await.unwrap();
    assert_eq!(top.len(), 1);
    assert_eq!(top[0].entry.key, "pref.editor");

    // Stop words alone do not make everything match.
    let hits = fx
        .store
        .search_semantic("what is the editor", 10)
        .await
        .unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].entry.key, "pref.editor");
}

#[actix_rt::test]
async fn search_stems_word_forms() {
    let fx = manual_store().await;
    fx.store
        .write_semantic(w(
            "pref.sport",
            json!("runs every morning"),
            1.0,
            USER_EXPLICIT,
        ))
        .await
        .unwrap();
    fx.store
        .write_semantic(w("pref.drink", json!("black coffee"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    fx.store
        .write_semantic(w(
            "user.preferences",
            json!("concise answers"),
            1.0,
            USER_EXPLICIT,
        ))
        .await
        .unwrap();

    let hits = fx.store.search_semantic("running", 10).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].entry.key, "pref.sport");
    assert!(hits[0].score > 0.0);

    // Plural/singular in the key.
    let hits = fx.store.search_semantic("preference", 10).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].entry.key, "user.preferences");

    assert!(fx
        .store
        .search_semantic("swimming", 10)
        .await
        .unwrap()
        .is_empty());
}

#[actix_rt::test]
async fn empty_query_returns_newest_first() {
    let fx = manual_store().await;
    for key in ["pref.a", "pref.b", "pref.c", "pref.d"] {
        fx.store
            .write_semantic(w(key, json!(key), 1.0, USER_EXPLICIT))
            .await
            .unwrap();
        fx.tick();
    }
    // Touch pref.a: it becomes the newest.
    fx.store
        .write_semantic(w("pref.a", json!("touched"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();

    for query in ["", "   ", " ,.; "] {
        let hits = fx.store.search_semantic(query, 10).await.unwrap();
        let keys: Vec<_> = hits.iter().map(|h| h.entry.key.as_str()).collect();
        assert_eq!(keys, ["pref.a", "pref.d", "pref.c", "pref.b"], "{query:?}");
        assert!(hits.iter().all(|h| h.score == 0.0));
    }
    let hits = fx.store.search_semantic("", 2).await.unwrap();
    assert_eq!(hits.len(), 2);

    let listed: Vec<_> = fx
        .store
        .list_semantic(None, 3)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(listed, ["pref.a", "pref.d", "pref.c"]);

    // The empty-query context keeps recency order too.
    let block = fx.store.semantic_context("", 10_000).await.unwrap();
    assert_eq!(
        block,
        format!(
            "{SEMANTIC_HEADER}\npref.a: touched\npref.d: pref.d\npref.c: pref.c\npref.b: pref.b"
        )
    );
}

#[actix_rt::test]
async fn semantic_context_excludes_lessons_and_respects_the_cap() {
    let fx = manual_store().await;
    assert_eq!(
        fx.store.semantic_context("theme", 10_000).await.unwrap(),
        ""
    );

    fx.store
        .write_semantic(w(
            "pref.theme",
            json!("dark mode everywhere"),
            1.0,
            USER_EXPLICIT,
        ))
        .await
        .unwrap();
    fx.tick();
    let lesson = fx
        .store
        .write_lesson(LessonWrite::user("theme: always pick the dark theme"))
        .await
        .unwrap();
    fx.tick();
    fx.store
        .write_semantic(w(
            "project.site",
            json!("theme engine\nwritten in rust"),
            0.9,
            "consolidation",
        ))
        .await
        .unwrap();
    fx.tick();
    fx.store
        .write_semantic(w("user.name", json!("Ada"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();

    let full = fx.store.semantic_context("theme", 10_000).await.unwrap();
    assert_eq!(
        full,
        format!(
            "{SEMANTIC_HEADER}\npref.theme: dark mode everywhere\n\
             project.site: theme engine written in rust\nuser.name: Ada"
        ),
        "key match, then value match, then the rest by recency; lessons never"
    );
    assert!(!full.contains("lesson"));
    // The lesson IS searchable; only the context block leaves it out.
    assert!(fx
        .store
        .search_semantic("theme", 10)
        .await
        .unwrap()
        .iter()
        .any(|h| h.entry.key == lesson.key()));

    // One char short: the lowest-ranked line goes first.
    let cap = full.chars().count() - 1;
    let block = fx.store.semantic_context("theme", cap).await.unwrap();
    assert!(block.chars().count() <= cap);
    assert_eq!(
        block,
        format!(
            "{SEMANTIC_HEADER}\npref.theme: dark mode everywhere\n\
             project.site: theme engine written in rust"
        )
    );
    // Exactly the header plus the best line.
    let best = format!("{SEMANTIC_HEADER}\npref.theme: dark mode everywhere");
    let block = fx
        .store
        .semantic_context("theme", best.chars().count())
        .await
        .unwrap();
    assert_eq!(block, best);
    // Too small for any line: no block at all.
    assert_eq!(
        fx.store
            .semantic_context("theme", SEMANTIC_HEADER.len() + 3)
            .await
            .unwrap(),
        ""
    );
    assert_eq!(fx.store.semantic_context("theme", 0).await.unwrap(), "");

    // The cap counts characters, not bytes.
    fx.store
        .write_semantic(w("user.city", json!("東京東京東京"), 1.0, USER_EXPLICIT))
        .await
        .unwrap();
    let line = "\nuser.city: 東京東京東京";
    let cap = SEMANTIC_HEADER.chars().count() + line.chars().count();
    let block = fx.store.semantic_context("city", cap).await.unwrap();
    assert_eq!(block, format!("{SEMANTIC_HEADER}{line}"));
    assert!(
        block.len() > cap,
        "multi-byte text would not fit a byte cap"
    );
}
