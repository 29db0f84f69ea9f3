//! The embedding-space contract of the store, without a model: vectors
//! commit only in the generation they were made in, a space change clears
//! foreign vectors, the backfill slot is single-flight.

use std::sync::Arc;

mod common;

use kirocrew_actors::vector_store::lessons::LessonWrite;

use kirocrew_actors::vector_store::{
    CommitVector, SemanticWrite, VectorStoreError, VectorStoreHandle,
};

async fn open(dir: &tempfile::TempDir) -> VectorStoreHandle {
    common::open_store(dir.path()).await
}

fn write(key: &str, value: &str) -> SemanticWrite {
    SemanticWrite {
        key: key.into(),
        value: serde_json::json!(value),
        confidence: 1.0,
        source: "user_explicit".into(),
    }
}

fn vector(model: &str, generation: i64) -> CommitVector {
    CommitVector {
        vector: Arc::new(vec![0.6, 0.8]),
        model_id: model.into(),
        generation,
    }
}

#[actix_rt::test]
async fn vectors_commit_only_in_the_current_generation() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    assert_eq!(store.space().await.unwrap().generation, 0);
    let (space, cleared) = store.reconcile_space("m1", 2).await.unwrap();
    assert_eq!((space.generation, cleared), (1, 0));

    store
        .write_with_vector(write("pref.a", "x"), Some(vector("m1", 1)))
        .await
        .unwrap();
    // Embedded before a swap landed: stored without a vector.
    store
        .write_with_vector(write("pref.b", "y"), Some(vector("m1", 0)))
        .await
        .unwrap();
    // Another model's vector never lands in this space.
    store
        .write_with_vector(write("pref.c", "z"), Some(vector("m2", 1)))
        .await
        .unwrap();
    let stats = store.stats().await.unwrap();
    assert_eq!(stats.semantic.embedded, 1);
    assert_eq!(store.count_missing_vectors().await.unwrap(), 2);

    // Re-affirming the same value keeps the vector; a new value clears it.
    store
        .write_with_vector(write("pref.a", "x"), None)
        .await
        .unwrap();
    assert_eq!(store.stats().await.unwrap().semantic.embedded, 1);
    store
        .write_with_vector(write("pref.a", "changed"), None)
        .await
        .unwrap();
    assert_eq!(store.stats().await.unwrap().semantic.embedded, 0);

    // Lessons are never listed for the semantic backfill (their vectors
    // come from the rule text, not the key-value document); nor are they
    // writable through the semantic entry points.
    assert!(matches!(
        store
            .write_with_vector(write("lesson.k", "always test"), None)
            .await,
        Err(VectorStoreError::LessonKeyReserved { .. })
    ));
    let lesson = store
        .write_lesson(LessonWrite::user("always test"))
        .await
        .unwrap();
    let missing: Vec<String> = store
        .missing_vectors(100)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert!(!missing.iter().any(|k| k == lesson.key()));
    assert_eq!(missing.len(), 3);
}

#[actix_rt::test]
async fn a_space_change_clears_old_vectors_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    store.reconcile_space("m1", 2).await.unwrap();
    store
        .write_with_vector(write("pref.a", "x"), Some(vector("m1", 1)))
        .await
        .unwrap();
    // The same model again is a no-op.
    let (space, cleared) = store.reconcile_space("m1", 2).await.unwrap();
    assert_eq!((space.generation, cleared), (1, 0));
    let (space, cleared) = store.reconcile_space("m2", 2).await.unwrap();
    assert_eq!((space.generation, cleared), (2, 1));
    assert_eq!(store.stats().await.unwrap().semantic.embedded, 0);
    store.close().await.unwrap();
    let store = open(&dir).await;
    let space = store.space().await.unwrap();
    assert_eq!(
        (space.model_id.as_deref(), space.dim, space.generation),
        (Some("m2"), Some(2), 2)
    );
}

#[actix_rt::test]
async fn the_reembed_slot_is_single_flight() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    store.begin_reembed("applying", 0).await.unwrap();
    assert!(matches!(
        store.begin_reembed("running", 5).await,
        Err(VectorStoreError::ReembedBusy("applying"))
    ));
    store.record_reembed(3, 5, None, None).await;
    let status = store.reembed_status().await.unwrap();
    assert_eq!((status.step, status.done, status.total), ("running", 3, 5));
    store.record_reembed(5, 5, Some("done"), None).await;
    store.begin_reembed("running", 0).await.unwrap();
    // Without an embedder a sweep has nothing to do.
    assert_eq!(
        kirocrew_actors::vector_store::run_backfill(&store, true)
            .await
            .unwrap(),
        0
    );
}
