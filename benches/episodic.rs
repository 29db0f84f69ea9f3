//! Episodic memory through the `VectorStore` actor handle with the shared
//! MiniLM model: write throughput with the embed inline (the default) and
//! with `defer_embedding` (bulk writers: stored at once, embedded later by
//! the backfill sweep), and hybrid search at 2,000 stored fragments.
//!
//! Run with `cargo bench --bench episodic`; needs ../shared/models.

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix_rt::System;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::embedder::{EmbedderHandle, LlamaConfig, LlamaCppBackend, SharedBackend};
use kirocrew_actors::vector_store::episodic::{EpisodicQuery, EpisodicWrite, SearchMode};
use kirocrew_actors::vector_store::{StoreSettings, VectorStoreHandle};

const SUBJECTS: &[&str] = &[
    "Caroline",
    "Melanie",
    "The team",
    "My manager",
    "Jon",
    "Gina",
];
const VERBS: &[&str] = &[
    "visited",
    "painted",
    "talked about",
    "planned",
    "fixed",
    "reviewed",
];
const OBJECTS: &[&str] = &[
    "the lake house",
    "a sunrise",
    "the billing dashboard",
    "a trip to Lisbon",
    "the flaky build",
    "the adoption papers",
    "a pottery class",
    "the quarterly report",
];

/// Fragments the search group runs over.
const SEARCH_ROWS: u64 = 3_000;

fn sentence(i: u64) -> String {
    let s = SUBJECTS[(i % 6) as usize];
    let v = VERBS[((i / 6) % 6) as usize];
    let o = OBJECTS[((i / 36) % 8) as usize];
    format!("{s} {v} {o} on day {i} and wrote a note about it.")
}

fn model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/models/all-minilm-l6-v2-f16.gguf")
}

fn bench(c: &mut Criterion) {
    let sys = System::new();
    let dir = tempfile::tempdir().unwrap();
    let store = sys.block_on(async {
        let store = VectorStoreHandle::open(
            dir.path().join("memory.db"),
            StoreSettings {
                episodic_max: 1_000_000,
                ..StoreSettings::default()
            },
            system_clock(),
        )
        .await
        .unwrap();
        let path = model();
        let embedder = EmbedderHandle::start(Arc::new(move || {
            Arc::new(LlamaCppBackend::new(LlamaConfig::new(path.clone()))) as SharedBackend
        }));
        assert!(embedder.wait_ready(Duration::from_secs(120)).await.unwrap());
        store.with_ready_embedder(embedder).await.unwrap()
    });
    let counter = Cell::new(0u64);
    let mut group = c.benchmark_group("episodic_write");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(20);
    group.throughput(Throughput::Elements(1));
    for (name, defer) in [("embed_inline", false), ("deferred", true)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let i = counter.get();
                counter.set(i + 1);
                let mut w = EpisodicWrite::new(sentence(i), "bench");
                w.defer_embedding = defer;
                w.dedup = false;
                sys.block_on(store.write_episodic(w)).unwrap();
            })
        });
    }
    group.finish();

    // Search over at least SEARCH_ROWS fragments, all embedded.
    sys.block_on(async {
        let (_, total) = store.list_episodic(0, 1).await.unwrap();
        for i in (total as u64)..SEARCH_ROWS {
            let mut w = EpisodicWrite::new(sentence(1_000_000 + i), "bench");
            w.defer_embedding = true;
            w.dedup = false;
            store.write_episodic(w).await.unwrap();
        }
        kirocrew_actors::vector_store::run_backfill(&store, false)
            .await
            .unwrap();
    });
    let mut group = c.benchmark_group("episodic_search");
    group.sample_size(30);
    for mode in [SearchMode::Hybrid, SearchMode::Vector, SearchMode::Keyword] {
        for mmr in [true, false] {
            let name = format!("{mode:?}{}", if mmr { "" } else { "_no_mmr" }).to_lowercase();
            group.bench_function(name, |b| {
                b.iter(|| {
                    let mut q =
                        EpisodicQuery::new("When did Caroline plan the trip to Lisbon?", 10);
                    q.mode = mode;
                    q.mmr = mmr;
                    sys.block_on(store.search_episodic(q)).unwrap()
                })
            });
        }
    }
    group.finish();
    sys.block_on(store.close()).unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
