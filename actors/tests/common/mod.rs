//! Fixtures shared by every test crate of kirocrew-actors: a store in a
//! temporary directory, and the real embedding model from
//! `../shared/models` (tests that need it are skipped with a printed
//! reason only when that folder is absent; CI has it).
//!
//! Each test crate includes this with `mod common;` and uses what it needs,
//! so not every crate uses every item.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kirocrew_actors::clock::{system_clock, SharedClock};
use kirocrew_actors::embedder::{EmbedderHandle, LlamaConfig, LlamaCppBackend, SharedBackend};
use kirocrew_actors::vector_store::{StoreSettings, VectorStoreHandle};

/// The MiniLM model the store tests embed with (small and fast).
pub(crate) const TEST_MODEL: &str = "all-minilm-l6-v2-q8_0.gguf";

/// `../shared/models`, or `None` (with the reason printed) when it is absent.
pub(crate) fn models_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/models");
    if dir.join(TEST_MODEL).exists() {
        Some(dir)
    } else {
        eprintln!("skipped: ../shared/models is absent");
        None
    }
}

/// Opens `memory.db` in `dir` with `settings` on the system clock.
pub(crate) async fn open_store_with(dir: &Path, settings: StoreSettings) -> VectorStoreHandle {
    open_store_on(dir, settings, system_clock()).await
}

/// Opens `memory.db` in `dir` with default settings on the system clock.
pub(crate) async fn open_store(dir: &Path) -> VectorStoreHandle {
    open_store_with(dir, StoreSettings::default()).await
}

/// Opens `memory.db` in `dir` with `settings` on `clock`.
pub(crate) async fn open_store_on(
    dir: &Path,
    settings: StoreSettings,
    clock: SharedClock,
) -> VectorStoreHandle {
    open_db(&dir.join("memory.db"), settings, clock).await
}

/// Opens the database file at `path` with `settings` on `clock`.
pub(crate) async fn open_db(
    path: &Path,
    settings: StoreSettings,
    clock: SharedClock,
) -> VectorStoreHandle {
    VectorStoreHandle::open(path.to_path_buf(), settings, clock)
        .await
        .expect("open store")
}

/// An embedder serving the model at `path`, loaded and ready.
pub(crate) async fn ready_embedder(path: PathBuf) -> EmbedderHandle {
    let embedder = EmbedderHandle::start(Arc::new(move || {
        Arc::new(LlamaCppBackend::new(LlamaConfig::new(path.clone()))) as SharedBackend
    }));
    assert!(embedder.wait_ready(Duration::from_secs(60)).await.unwrap());
    embedder
}

/// `store` with the test model attached (its space recorded), or `None`
/// when the models folder is absent.
pub(crate) async fn with_model(store: VectorStoreHandle) -> Option<VectorStoreHandle> {
    let path = models_dir()?.join(TEST_MODEL);
    let embedder = ready_embedder(path).await;
    Some(store.with_ready_embedder(embedder).await.unwrap())
}
