//! Lessons through the store handle: the ladder against user_explicit, and
//! (with the shared MiniLM model) the embedding rung and lazy backfills.

mod common;

use kirocrew_actors::vector_store::lessons::{LessonOutcome, LessonWrite};
use kirocrew_actors::vector_store::{VectorStoreError, VectorStoreHandle};

async fn open(dir: &tempfile::TempDir) -> VectorStoreHandle {
    common::open_store(dir.path()).await
}

#[actix_rt::test]
async fn migration_never_replaces_or_overwrites_a_user_lesson() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let user = store
        .write_lesson(LessonWrite::user("use dark mode"))
        .await
        .unwrap();
    // Same rule from migration: the user row wins the ladder.
    let same = store
        .write_lesson(LessonWrite::migrated("use dark mode"))
        .await;
    assert!(
        matches!(same, Err(VectorStoreError::ConflictSkipped { .. })),
        "{same:?}"
    );
    // A topic-overlapping migrated rule may not replace it either.
    let overlap = store
        .write_lesson(LessonWrite::migrated("use light mode"))
        .await;
    assert!(
        matches!(&overlap, Err(VectorStoreError::ConflictSkipped { key, .. }) if key == user.key()),
        "{overlap:?}"
    );
    let lessons = store.list_lessons().await.unwrap();
    assert_eq!(lessons.len(), 1);
    assert_eq!(lessons[0].source, "user_explicit");
    // A migrated lesson on a new topic lands at 0.9.
    let migrated = store
        .write_lesson(LessonWrite::migrated("answer in British English"))
        .await
        .unwrap();
    let row = store.get_semantic(migrated.key()).await.unwrap();
    assert_eq!((row.confidence, row.source.as_str()), (0.9, "migration"));
    // The user may replace a migrated lesson.
    let replaced = store
        .write_lesson(LessonWrite::user("answer in American English"))
        .await
        .unwrap();
    assert!(
        matches!(replaced, LessonOutcome::Replaced { .. }),
        "{replaced:?}"
    );
}

#[actix_rt::test]
async fn lazy_backfill_and_vector_ranked_context() {
    let dir = tempfile::tempdir().unwrap();
    let plain = open(&dir).await;
    // Written without a model: no vectors yet.
    for rule in [
        "prefer ripgrep when searching source code",
        "keep commit messages under seventy characters",
        "always reply in French",
    ] {
        plain.write_lesson(LessonWrite::user(rule)).await.unwrap();
    }
    assert_eq!(plain.stats().await.unwrap().semantic.embedded, 0);
    let Some(store) = common::with_model(plain).await else {
        return;
    };
    // One write embeds its rule and backfills the three others.
    store
        .write_lesson(LessonWrite::user("run the linter before pushing"))
        .await
        .unwrap();
    assert_eq!(store.stats().await.unwrap().semantic.embedded, 4);
    // No keyword in common with any lesson: the stored vectors rank it.
    let block = store
        .lessons_context("parle-moi en français s'il te plaît", 10_000)
        .await
        .unwrap();
    let first = block.lines().nth(2).unwrap();
    assert_eq!(first, "- always reply in French", "{block}");
    assert!(block.ends_with("(4 of 4 lessons shown, 0 omitted.)"));
}
