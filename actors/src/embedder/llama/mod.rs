//! The llama.cpp backend (spec: "In-Process Embedder"), through the
//! `llama-cpp-2` crate.
//!
//! ## Threads
//! `LlamaModel` is `Send + Sync`; `LlamaContext` is neither and borrows the
//! model. So each worker is a dedicated thread that holds an
//! `Arc<LlamaModel>` and creates its context on its own stack, then serves
//! jobs from a channel until the backend is closed; dropping the channel
//! ends the thread, the context and (with the last `Arc`) the model. That
//! is the SyncArbiter shape without a `'static` borrow of the model.
//!
//! Loading runs on its own thread (`kc-embed-load`), so `is_ready` and the
//! embed calls never wait for it: until the model is resident they answer
//! `NotReady` at once. A failed load is retried only after a cooldown
//! (300 s) so a broken file cannot spawn a loader per call. That state
//! machine is `crate::model_loader`, shared with the local chat model.
//!
//! ## Threads per context
//! Each context runs with `n_threads` (default 1): with 2 OpenMP threads on
//! a 2-core machine whose other core is busy, llama.cpp's spinning barrier
//! collapses to ~1 embedding/s (see shared/models/README.md). Parallelism
//! comes from `workers` instead: a batch is split across worker contexts,
//! each single-threaded, which degrades gracefully under load.
//!
//! ## Packing
//! A batch is packed into decode calls of at most `batch_tokens` (256)
//! tokens. llama.cpp runs an encoder's decode as one micro-batch, and its
//! CPU flash attention converts the mask of every 64×64 tile of it (only
//! the arithmetic of fully masked tiles is skipped), a cost quadratic in
//! the decode's tokens: two 256-token texts in one 512-token decode cost
//! more than two decodes (measured at 1 thread: long texts 10.8 → 11.3
//! emb/s, short texts in batches of 32 200 → 210 emb/s). A single text longer than
//! the budget still gets a decode of its own (the context holds
//! `max_tokens`).
//!
//! ## Kernels
//! ggml's CPU backend is a module chosen at run time for the processor and
//! verified on it in a child process before this one computes with it
//! (`kernels/`), loaded once before the llama.cpp backend starts. A
//! model's weight types are verified before the model loads.
//!
//! ## Weights
//! An F16 model is computed in BF16 when that CPU backend has
//! AVX512-BF16 kernels (see `bf16.rs`): ~40% faster, vectors within cosine
//! 0.99997 of the F32 reference. The BF16 copy lives in an unlinked
//! temporary file that llama.cpp maps; [`Weights`] can force either way.
//!
//! ## Inputs
//! Text gets the profile's query/document prefix, is tokenized with the
//! model's special tokens, and is cut at `max_tokens` at a token boundary,
//! keeping the final special token ([SEP]/EOS) when the tokenizer adds one,
//! which is what sentence-transformers does.

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use llama_cpp_2::token::LlamaToken;

use super::backend::{BackendStatus, EmbedError, EmbedKind, EmbeddingBackend};
use super::pack::split_by_weight;
use crate::model_loader::{LoadState, ModelLoader};

pub(crate) mod config;
mod cpu_backend;
pub mod kernels;
mod load;
mod worker;

pub use config::{model_id_for, LlamaConfig, Weights, LOAD_COOLDOWN};
pub use cpu_backend::{CpuBackend, BACKENDS_DIR_ENV};
pub use kernels::{bf16_kernels, cpu_backend};

use config::{Job, Loaded};

use load::load;

struct Shared {
    config: LlamaConfig,
    model_id: String,
    state: ModelLoader<Arc<Loaded>>,
}

/// The llama.cpp embedding backend.
#[derive(Clone)]
pub struct LlamaCppBackend {
    shared: Arc<Shared>,
}

impl LlamaCppBackend {
    /// A backend for `config.path`; nothing is loaded until first use
    /// (or [`Self::start_loading`]).
    pub fn new(config: LlamaConfig) -> Self {
        let model_id = model_id_for(&config.path);
        let state = ModelLoader::new("kc-embed-load", config.cooldown);
        Self {
            shared: Arc::new(Shared {
                config,
                model_id,
                state,
            }),
        }
    }

    /// Starts the background load now (if none ran or the cooldown passed).
    pub fn start_loading(&self) {
        self.kick();
    }

    fn kick(&self) {
        let shared = Arc::clone(&self.shared);
        self.shared.state.kick(move || {
            let started = Instant::now();
            match load(&shared.config) {
                Ok(loaded) => {
                    tracing::info!(
                        model = %shared.model_id,
                        dim = loaded.dim,
                        profile = %loaded.profile.name,
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        "embedding model loaded"
                    );
                    Ok(Arc::new(loaded))
                }
                Err(error) => {
                    tracing::warn!(model = %shared.model_id, %error, "embedding model failed to load; retrying after cooldown");
                    Err(error)
                }
            }
        });
    }

    fn loaded(&self) -> Result<Arc<Loaded>, EmbedError> {
        let state = self.shared.state.lock();
        match &*state {
            LoadState::Ready(loaded) => Ok(Arc::clone(loaded)),
            LoadState::Closed => Err(EmbedError::Closed),
            LoadState::Idle | LoadState::Loading | LoadState::Failed { .. } => {
                drop(state);
                self.kick();
                Err(EmbedError::NotReady)
            }
        }
    }
}

impl Loaded {
    fn tokenize(&self, text: &str, kind: EmbedKind) -> Result<Vec<LlamaToken>, EmbedError> {
        if text.trim().is_empty() {
            return Err(EmbedError::EmptyText);
        }
        let prefix = match kind {
            EmbedKind::Query => &self.profile.query_prefix,
            EmbedKind::Document => &self.profile.document_prefix,
        };
        let input = format!("{prefix}{text}");
        let mut tokens = self.model.vocab().tokenize(input.as_bytes(), true, false);
        let max = self.profile.max_tokens.max(2);
        if tokens.len() > max {
            if self.trailing_special {
                let last = tokens[tokens.len() - 1];
                tokens.truncate(max - 1);
                tokens.push(last);
            } else {
                tokens.truncate(max);
            }
        }
        if tokens.is_empty() {
            return Err(EmbedError::EmptyText);
        }
        Ok(tokens)
    }

    fn run(&self, seqs: Vec<Vec<LlamaToken>>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let weights: Vec<usize> = seqs.iter().map(Vec::len).collect();
        let parts = if seqs.len() > 1 {
            self.workers.len()
        } else {
            1
        };
        let ranges = split_by_weight(&weights, parts);
        let mut pending = Vec::new();
        let mut seqs = seqs.into_iter();
        for range in ranges {
            let chunk: Vec<_> = seqs.by_ref().take(range.len()).collect();
            let worker = self.next_worker.fetch_add(1, Ordering::Relaxed) % self.workers.len();
            let (reply, answer) = mpsc::channel();
            self.workers[worker]
                .send(Job { seqs: chunk, reply })
                .map_err(|_| EmbedError::Closed)?;
            pending.push(answer);
        }
        let mut out = Vec::new();
        for answer in pending {
            out.extend(answer.recv().map_err(|_| EmbedError::Closed)??);
        }
        Ok(out)
    }
}

impl EmbeddingBackend for LlamaCppBackend {
    fn model_id(&self) -> String {
        self.shared.model_id.clone()
    }

    fn dim(&self) -> Option<usize> {
        match &*self.shared.state.lock() {
            LoadState::Ready(loaded) => Some(loaded.dim),
            _ => None,
        }
    }

    fn is_ready(&self) -> bool {
        self.loaded().is_ok()
    }

    fn wait_ready(&self, timeout: Duration) -> bool {
        self.kick();
        let state = self.shared.state.wait_while_loading(timeout);
        matches!(*state, LoadState::Ready(_))
    }

    fn embed_batch(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let loaded = self.loaded()?;
        let seqs = texts
            .iter()
            .map(|t| loaded.tokenize(t, kind))
            .collect::<Result<Vec<_>, _>>()?;
        loaded.run(seqs)
    }

    fn status(&self) -> BackendStatus {
        let state = self.shared.state.lock();
        let name = state.name();
        let (error, loaded) = match &*state {
            LoadState::Ready(l) => (None, Some(Arc::clone(l))),
            LoadState::Failed { error, .. } => (Some(error.clone()), None),
            LoadState::Idle | LoadState::Loading | LoadState::Closed => (None, None),
        };
        drop(state);
        BackendStatus {
            state: name,
            model_id: Some(self.shared.model_id.clone()),
            dim: loaded.as_ref().map(|l| l.dim),
            weights: loaded.as_ref().map(|l| l.weights),
            // Loaded implies the CPU backend is too: this only reads it.
            kernels: loaded
                .as_ref()
                .and_then(|_| cpu_backend().ok())
                .map(|cpu| cpu.kernels()),
            error,
            path: Some(self.shared.config.path.display().to_string()),
            profile: loaded.map(|l| l.profile.clone()),
        }
    }

    fn close(&self) {
        // Dropping `Loaded` drops the worker channels: each worker finishes
        // its current job, exits, and frees its context and model reference.
        self.shared.state.close();
    }
}
