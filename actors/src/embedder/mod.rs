//! # Embedder: the owner of the embedding backend
//!
//! Owns the shared [`EmbeddingBackend`] (llama.cpp by default) and the
//! embedding cache. Talked to by the `VectorStore` handle (write-time and
//! query embeddings), the embedding endpoints and `kirocrew bench embed`,
//! always through [`EmbedderHandle`].
//!
//! Spec: "In-Process Embedder" (non-blocking load, cooldown, cache, swap
//! seam) and "Embedding backend abstraction".
//!
//! The actor never computes on its own thread: a cache miss is embedded on
//! a blocking thread (the backend's workers do the work), so the mailbox
//! keeps answering — in particular `NotReady` comes back at once while the
//! model loads. The cache is touched only inside the actor, so it needs no
//! lock. `SwapBackend` installs a new backend and closes the old one in the
//! same step, so two models never stay resident together.

mod actor;
mod backend;
mod bf16;
mod cache;
pub mod calibration;
mod handle;
pub(crate) mod llama;
mod messages;
mod pack;
mod profile;
pub mod vector;

pub use backend::{
    BackendFactory, BackendStatus, EmbedError, EmbedKind, EmbeddingBackend, SharedBackend,
};
pub use cache::{CacheStats, CACHE_CAPACITY};
pub use calibration::{Calibration, CosineScale, Similarity, Thresholds};
pub use handle::EmbedderHandle;
pub use llama::kernels;
pub use llama::{
    bf16_kernels, cpu_backend, model_id_for, CpuBackend, LlamaConfig, LlamaCppBackend, Weights,
    BACKENDS_DIR_ENV, LOAD_COOLDOWN,
};
pub use messages::{EmbeddedTexts, EmbedderStatus, MAX_WAIT};
pub use profile::{known_profiles, EmbeddingProfile, Pooling};
