//! What the llama.cpp backend is made of, apart from its state machine
//! (`mod.rs`): its configuration, the process-wide llama.cpp backend, and
//! the loaded model with its worker queue. `load.rs` and `worker.rs`
//! build on these, and `mod.rs` on all three.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::kernels::{cpu_backend, cpu_backend_for, model_types};
use crate::embedder::backend::EmbedError;
use crate::embedder::profile::EmbeddingProfile;

/// Wait after a failed load before trying again.
pub const LOAD_COOLDOWN: Duration = Duration::from_secs(300);

/// Most sequences one decode call carries.
pub(super) const MAX_SEQS_PER_DECODE: usize = 64;

/// Which weights llama.cpp computes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Weights {
    /// BF16 for an F16 file when the build has AVX512-BF16 kernels,
    /// otherwise the file as stored.
    #[default]
    Auto,
    /// The file as stored.
    Stored,
    /// BF16 for an F16 file even without the kernels (slower; for tests).
    Bf16,
}

/// Tunables of the llama.cpp backend.
#[derive(Debug, Clone, PartialEq)]
pub struct LlamaConfig {
    /// The GGUF file.
    pub path: PathBuf,
    /// llama.cpp threads per context (1 cannot collapse under load).
    pub n_threads: i32,
    /// Worker contexts; a batch is spread over them.
    pub workers: usize,
    /// Token budget of one decode call when packing a batch.
    pub batch_tokens: usize,
    /// Which weights to compute with.
    pub weights: Weights,
    /// Forced profile name, or empty to detect.
    pub profile: String,
    /// Wait after a failed load.
    pub cooldown: Duration,
}

impl LlamaConfig {
    /// Defaults for `path`: 1 thread, 1 worker, 256-token decodes, BF16
    /// when it pays.
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            n_threads: 1,
            workers: 1,
            batch_tokens: 256,
            weights: Weights::Auto,
            profile: String::new(),
            cooldown: LOAD_COOLDOWN,
        }
    }
}

/// llama.cpp's process-wide backend: initialized once, never dropped
/// (`llama_backend_free` would pull the rug from every model).
pub(super) fn llama_backend() -> Result<&'static LlamaBackend, EmbedError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // The CPU kernels are a loadable module picked for this
            // processor; without one nothing can run.
            let cpu = cpu_backend()?;
            tracing::info!(dir = %cpu.dir.display(), features = %cpu.kernels(), "llama.cpp CPU backend loaded");
            let mut backend = LlamaBackend::init().map_err(|e| e.to_string())?;
            // llama.cpp prints every tensor on load; our own logs say what matters.
            backend.void_logs();
            Ok(backend)
        })
        .as_ref()
        .map_err(|e| EmbedError::Load(format!("llama.cpp backend: {e}")))
}

/// The llama.cpp backend for computing with the GGUF at `path`: the CPU
/// kernels are first proven for the model's weight types (see `kernels/`),
/// then the process-wide backend is initialized (once). Every llama.cpp
/// user goes through here: the embedder's loader and the chat backend
/// (`crate::llm`).
pub(crate) fn verified_backend(path: &Path) -> Result<&'static LlamaBackend, String> {
    let types = model_types(path);
    cpu_backend_for(&types).map_err(|e| format!("llama.cpp backend: {e}"))?;
    llama_backend().map_err(|e| e.to_string())
}

/// Model id for a GGUF path: its file stem (quantizations differ slightly,
/// so each file is its own vector space).
pub fn model_id_for(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_else(|| "embedding-model".to_owned())
}

/// One decode request for a worker: token sequences and where to answer.
pub(super) struct Job {
    pub(super) seqs: Vec<Vec<LlamaToken>>,
    pub(super) reply: mpsc::Sender<Result<Vec<Vec<f32>>, EmbedError>>,
}

/// A loaded model and the workers serving it.
pub(super) struct Loaded {
    pub(super) model: Arc<LlamaModel>,
    /// `stored` or `bf16_from_f16`.
    pub(super) weights: &'static str,
    pub(super) dim: usize,
    pub(super) profile: EmbeddingProfile,
    pub(super) trailing_special: bool,
    pub(super) workers: Vec<mpsc::Sender<Job>>,
    pub(super) next_worker: AtomicUsize,
}
