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
use kirocrew_actors::embedder::{
    BackendStatus, EmbedError, EmbedKind, EmbedderHandle, EmbeddingBackend, LlamaConfig,
    LlamaCppBackend, SharedBackend,
};
use kirocrew_actors::vector_store::{StoreSettings, VectorStoreHandle};

pub(crate) mod chat_server;
pub(crate) mod consolidator_rig;

/// The MiniLM model the store tests embed with (small and fast).
pub(crate) const TEST_MODEL: &str = "all-minilm-l6-v2-q8_0.gguf";

/// `../shared/<rel>` beside the checkout, or `None` with the reason
/// printed when it is absent. In CI (`CI=true`) an absent asset fails the
/// test instead: CI has `../shared`, and a test that passes by skipping
/// there would prove nothing.
pub(crate) fn shared_asset(rel: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .join(rel);
    if path.exists() {
        return Some(path);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true but {} is absent", path.display());
    }
    eprintln!("skipped: {} is absent", path.display());
    None
}

/// `../shared/models`, or `None` (with the reason printed) when it is absent.
pub(crate) fn models_dir() -> Option<PathBuf> {
    shared_asset(&format!("models/{TEST_MODEL}"))?
        .parent()
        .map(Path::to_path_buf)
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

/// A deterministic embedding backend for tests that need many vectors or a
/// model change without paying for real inference: each word is hashed
/// into two of `dim` buckets (weights 1 and 0.5), then L2-normalized. The
/// model id is a parameter, so "changing the model" is attaching another.
pub(crate) struct HashingBackend {
    /// The model id it reports (its vector space).
    pub(crate) model_id: &'static str,
    /// Vector dimension.
    pub(crate) dim: usize,
}

impl EmbeddingBackend for HashingBackend {
    fn model_id(&self) -> String {
        self.model_id.into()
    }
    fn dim(&self) -> Option<usize> {
        Some(self.dim)
    }
    fn is_ready(&self) -> bool {
        true
    }
    fn wait_ready(&self, _: Duration) -> bool {
        true
    }
    fn embed_batch(&self, texts: &[String], _: EmbedKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dim];
                for w in t.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
                    if !w.is_empty() {
                        let h = blake3::hash(w.as_bytes());
                        let b = h.as_bytes();
                        v[b[0] as usize % self.dim] += 1.0;
                        v[b[1] as usize % self.dim] += 0.5;
                    }
                }
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                v.iter_mut().for_each(|x| *x /= n);
                v
            })
            .collect())
    }
    fn status(&self) -> BackendStatus {
        BackendStatus {
            state: "ready",
            model_id: Some(self.model_id()),
            dim: Some(self.dim),
            error: None,
            path: None,
            profile: None,
            weights: None,
            kernels: None,
        }
    }
    fn close(&self) {}
}

/// An embedder serving a [`HashingBackend`].
pub(crate) fn hashing_embedder(model_id: &'static str, dim: usize) -> EmbedderHandle {
    EmbedderHandle::start(Arc::new(move || {
        Arc::new(HashingBackend { model_id, dim }) as SharedBackend
    }))
}

/// A skills configuration in `home` (skills/ and skill-usage.json there),
/// bundled sync off, a one-hour catalog TTL (writes invalidate it) and a
/// one-hour flush debounce (tests flush explicitly) unless changed.
pub(crate) fn skills_config(
    home: &Path,
    clock: SharedClock,
) -> kirocrew_actors::skills::SkillsConfig {
    let mut config = kirocrew_actors::skills::SkillsConfig::new(home, clock);
    config.flush_delay = Duration::from_secs(3600);
    config.catalog_ttl = Duration::from_secs(3600);
    config
}

/// Writes `root/name/SKILL.md`.
pub(crate) fn write_skill(root: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(root.join(name)).expect("skill dir");
    std::fs::write(root.join(name).join("SKILL.md"), text).expect("SKILL.md");
}
