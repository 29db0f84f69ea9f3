//! The embedding seam: every consumer (vector memory, later the knowledge
//! library) sees only [`EmbeddingBackend`], so another runtime (a remote
//! endpoint, ONNX, a user's model) can replace llama.cpp without touching
//! them (spec: "Embedding backend abstraction").
//!
//! Methods are blocking where they compute (`embed`, `embed_batch`); the
//! `Embedder` actor calls them on a blocking thread. `is_ready` never
//! blocks: it only reports, and kicks a background load if none ran yet.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

/// Whether a text is a search query or a stored document (models such as
/// Qwen3-Embedding or E5 prefix the two differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedKind {
    /// A search query.
    Query,
    /// Text being stored.
    Document,
}

/// Everything embedding can fail with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbedError {
    /// The model is not loaded (yet); a load was started if possible.
    #[error("embedding model not ready")]
    NotReady,
    /// Empty or whitespace-only input has no meaning to embed.
    #[error("cannot embed empty or whitespace-only text")]
    EmptyText,
    /// Loading the model failed; retried after the cooldown.
    #[error("embedding model failed to load: {0}")]
    Load(String),
    /// Inference failed.
    #[error("embedding failed: {0}")]
    Inference(String),
    /// The backend was closed.
    #[error("embedding backend is closed")]
    Closed,
    /// The embedder actor is not running.
    #[error("embedder unavailable: {0}")]
    Unavailable(String),
    /// The model's cosine scale could not be measured (its probe pairs
    /// are not in order: it cannot tell a paraphrase from noise).
    #[error("embedding model cannot be calibrated: {0}")]
    Uncalibrated(String),
}

/// Load state, for status endpoints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendStatus {
    /// `idle`, `loading`, `ready`, `failed` or `closed`.
    pub state: &'static str,
    /// The model's id (file stem), once known.
    pub model_id: Option<String>,
    /// Vector dimension, once loaded.
    pub dim: Option<usize>,
    /// The weights computed with, once loaded: `stored` (the file as is)
    /// or `bf16_from_f16` (a BF16 copy of an F16 file).
    pub weights: Option<&'static str>,
    /// The llama.cpp CPU kernels computing it, once loaded: the features of
    /// the CPU backend module picked for this processor (`AVX2`,
    /// `AVX512_BF16`, …). `None` for backends that are not llama.cpp.
    pub kernels: Option<String>,
    /// The last load error.
    pub error: Option<String>,
    /// The model file.
    pub path: Option<String>,
    /// The profile in use (pooling, cut, prefixes).
    pub profile: Option<super::profile::EmbeddingProfile>,
}

/// A source of embedding vectors.
pub trait EmbeddingBackend: Send + Sync + 'static {
    /// Identifies the vector space: vectors of different ids never compare.
    fn model_id(&self) -> String;
    /// Vector dimension, once known.
    fn dim(&self) -> Option<usize>;
    /// Loaded and able to embed. Never blocks; kicks a background load.
    fn is_ready(&self) -> bool;
    /// Blocks until ready, failed, or `timeout`; for the one-shot CLI and
    /// tests, never for a request path.
    fn wait_ready(&self, timeout: Duration) -> bool;
    /// Embeds one text.
    fn embed(&self, text: &str, kind: EmbedKind) -> Result<Vec<f32>, EmbedError> {
        self.embed_batch(&[text.to_owned()], kind)
            .map(|mut v| v.pop().unwrap_or_default())
    }
    /// Embeds many texts, in order.
    fn embed_batch(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Current load state.
    fn status(&self) -> BackendStatus;
    /// Unloads the model and frees its memory; later calls fail with Closed.
    fn close(&self);
}

/// A shared backend.
pub type SharedBackend = Arc<dyn EmbeddingBackend>;

/// Builds the default backend (used to restore it after a swap).
pub type BackendFactory = Arc<dyn Fn() -> SharedBackend + Send + Sync>;

impl From<actix::MailboxError> for EmbedError {
    fn from(e: actix::MailboxError) -> Self {
        EmbedError::Unavailable(e.to_string())
    }
}
