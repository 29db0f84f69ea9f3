//! The episodic HNSW index inside the store: built off the actor once the
//! store holds enough vectors, kept in step with tombstones, saved at close,
//! loaded (not rebuilt) on the next start, rebuilt from SQLite when the file
//! is corrupt or missing, and search results the same either way.
//!
//! Vectors come from a small deterministic embedding backend (feature
//! hashing of words into 64 dimensions): 2,000+ real model embeds would cost
//! the suite half a minute, and the index does not care where vectors come
//! from. Retrieval quality with the real model is measured by
//! `kirocrew bench locomo`.

mod common;

use std::time::Duration;

use kirocrew_actors::clock::system_clock;
use kirocrew_actors::vector_store::episodic::{index_path, ANN_MIN_ROWS};
use kirocrew_actors::vector_store::episodic::{EpisodicQuery, EpisodicWrite, SearchMode};
use kirocrew_actors::vector_store::{StoreSettings, VectorStoreHandle};

const DIM: usize = 64;

async fn open(path: &std::path::Path) -> VectorStoreHandle {
    let store = common::open_db(
        path,
        StoreSettings {
            episodic_max: 100_000,
            ..StoreSettings::default()
        },
        system_clock(),
    )
    .await;
    let embedder = common::hashing_embedder("test-hashing", DIM);
    store.with_ready_embedder(embedder).await.unwrap()
}

fn text(i: usize) -> String {
    const A: &[&str] = &[
        "river", "garden", "violin", "harbor", "meadow", "lantern", "canyon",
    ];
    const B: &[&str] = &[
        "painted",
        "visited",
        "repaired",
        "photographed",
        "described",
    ];
    format!(
        "Fragment {i}: someone {} the {} near word{} and word{}.",
        B[i % B.len()],
        A[(i / 5) % A.len()],
        i % 97,
        i % 89
    )
}

async fn write_rows(store: &VectorStoreHandle, range: std::ops::Range<usize>) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in range {
        let mut w = EpisodicWrite::new(text(i), "test");
        w.dedup = false;
        ids.push(store.write_episodic(w).await.unwrap());
    }
    ids
}

/// Searches (which also triggers the build) until the index is ready.
async fn until_ready(
    store: &VectorStoreHandle,
) -> kirocrew_actors::vector_store::episodic::IndexState {
    for _ in 0..200 {
        store
            .search_episodic(EpisodicQuery::new("violin", 1))
            .await
            .unwrap();
        let state = store.episodic_index_state().await.unwrap();
        if state.state == "ready" {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the index never became ready");
}

/// The top hit for each probe's own text (a self-match, cosine 1).
async fn self_hits(store: &VectorStoreHandle, probes: &[(usize, i64)]) -> usize {
    let mut found = 0;
    for &(i, id) in probes {
        let mut q = EpisodicQuery::new(text(i), 10);
        q.mode = SearchMode::Vector;
        q.mmr = false;
        let hits = store.search_episodic(q).await.unwrap();
        if hits.first().is_some_and(|h| h.entry.id == id) {
            found += 1;
        }
    }
    found
}

#[actix_rt::test]
async fn index_builds_follows_tombstones_saves_loads_and_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = open(&db).await;
    let n = ANN_MIN_ROWS + 100;
    let ids = write_rows(&store, 0..n).await;
    let state = until_ready(&store).await;
    assert_eq!(
        (state.rows, state.loaded),
        (n, false),
        "built from the vectors"
    );
    let probes: Vec<(usize, i64)> = (0..n).step_by(97).map(|i| (i, ids[i])).collect();
    assert_eq!(self_hits(&store, &probes).await, probes.len());

    // A tombstone leaves the graph: the row is never returned again.
    let (gone_i, gone_id) = probes[3];
    store
        .delete_episodic(gone_id, "user_explicit")
        .await
        .unwrap();
    let mut q = EpisodicQuery::new(text(gone_i), 10);
    q.mode = SearchMode::Vector;
    let hits = store.search_episodic(q).await.unwrap();
    assert!(hits.iter().all(|h| h.entry.id != gone_id));
    assert_eq!(store.episodic_index_state().await.unwrap().rows, n - 1);
    // Rows written after the build are added as the mirror sees them.
    let late = write_rows(&store, n..n + 5).await;
    assert_eq!(self_hits(&store, &[(n + 2, late[2])]).await, 1);
    assert_eq!(store.episodic_index_state().await.unwrap().rows, n + 4);
    store.close().await.unwrap();
    assert!(index_path(&db).is_file(), "saved beside memory.db");

    // Normal restart: loaded from disk, not rebuilt; same answers.
    let store = open(&db).await;
    let state = until_ready(&store).await;
    assert_eq!((state.rows, state.loaded), (n + 4, true));
    let live: Vec<(usize, i64)> = probes.iter().copied().filter(|p| p.1 != gone_id).collect();
    assert_eq!(self_hits(&store, &live).await, live.len());
    store.close().await.unwrap();

    // Garbage over the index file: rebuilt from SQLite, still correct.
    std::fs::write(index_path(&db), b"not an index at all").unwrap();
    let store = open(&db).await;
    let state = until_ready(&store).await;
    assert_eq!((state.rows, state.loaded), (n + 4, false));
    assert_eq!(self_hits(&store, &live).await, live.len());
    store.close().await.unwrap();

    // Missing file: rebuilt too.
    std::fs::remove_file(index_path(&db)).unwrap();
    let store = open(&db).await;
    let state = until_ready(&store).await;
    assert!(!state.loaded);
    store.close().await.unwrap();
}

#[actix_rt::test]
async fn small_stores_scan_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("memory.db")).await;
    let ids = write_rows(&store, 0..50).await;
    assert_eq!(self_hits(&store, &[(7, ids[7])]).await, 1);
    assert_eq!(store.episodic_index_state().await.unwrap().state, "absent");
    store.close().await.unwrap();
    assert!(!index_path(&dir.path().join("memory.db")).exists());
}
