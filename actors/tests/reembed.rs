//! The re-embed sweep after a model change covers every kind of row:
//! semantic entries, episodic fragments and lessons (whose vectors are made
//! from the rule text, as the lesson writer makes them).
//!
//! Vectors come from a deterministic feature-hashing backend whose model id
//! is a parameter, so "changing the model" is attaching another instance.

mod common;

use kirocrew_actors::vector_store::episodic::EpisodicWrite;
use kirocrew_actors::vector_store::lessons::LessonWrite;
use kirocrew_actors::vector_store::{run_backfill, SemanticWrite, VectorStoreHandle};

const DIM: usize = 16;

async fn attach(store: VectorStoreHandle, model: &'static str) -> VectorStoreHandle {
    let embedder = common::hashing_embedder(model, DIM);
    store.with_ready_embedder(embedder).await.unwrap()
}

#[actix_rt::test]
async fn a_model_change_re_embeds_lessons_too() {
    let dir = tempfile::tempdir().unwrap();
    let store = attach(common::open_store(dir.path()).await, "hash-a").await;
    store
        .write_semantic(SemanticWrite {
            key: "pref.editor".into(),
            value: serde_json::json!("helix"),
            confidence: 1.0,
            source: "user_explicit".into(),
        })
        .await
        .unwrap();
    store
        .write_lesson(LessonWrite::user("always run the tests before committing"))
        .await
        .unwrap();
    store
        .write_episodic(EpisodicWrite::new(
            "We planned a trip to Lisbon in May.",
            "test",
        ))
        .await
        .unwrap();
    assert_eq!(store.stats().await.unwrap().semantic.embedded, 2);
    assert_eq!(store.count_missing_vectors().await.unwrap(), 0);

    // Another model: its space clears every old vector, the lesson's too,
    // and the lesson counts toward the sweep's total.
    let store = attach(store, "hash-b").await;
    assert_eq!(store.stats().await.unwrap().semantic.embedded, 0);
    assert_eq!(store.count_missing_vectors().await.unwrap(), 3);

    assert_eq!(run_backfill(&store, false).await.unwrap(), 3);
    assert_eq!(store.stats().await.unwrap().semantic.embedded, 2);
    assert_eq!(store.count_missing_vectors().await.unwrap(), 0);
    let status = store.reembed_status().await.unwrap();
    assert_eq!((status.step, status.done, status.total), ("done", 3, 3));
    // Embedding the lesson left it as it was.

    assert_eq!(store.list_lessons().await.unwrap().len(), 1);
}
