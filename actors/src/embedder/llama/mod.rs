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
//! (300 s) so a broken file cannot spawn a loader per call.
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
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use llama_cpp_2::token::LlamaToken;

use super::backend::{BackendStatus, EmbedError, EmbedKind, EmbeddingBackend};
use super::pack::split_by_weight;

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

enum State {
    Idle,
    Loading,
    Ready(Arc<Loaded>),
    Failed { error: String, at: Instant },
    Closed,
}

struct Shared {
    config: LlamaConfig,
    model_id: String,
    state: Mutex<State>,
    changed: Condvar,
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
        Self {
            shared: Arc::new(Shared {
                config,
                model_id,
                state: Mutex::new(State::Idle),
                changed: Condvar::new(),
            }),
        }
    }

    /// Starts the background load now (if none ran or the cooldown passed).
    pub fn start_loading(&self) {
        self.kick();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock leaves a consistent enum value;
        // keep serving rather than poisoning every later call.
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn kick(&self) {
        let mut state = self.lock();
        let start = match &*state {
            State::Idle => true,
            State::Failed { at, .. } => at.elapsed() >= self.shared.config.cooldown,
            State::Loading | State::Ready(_) | State::Closed => false,
        };
        if !start {
            return;
        }
        *state = State::Loading;
        drop(state);
        let shared = Arc::clone(&self.shared);
        let spawned = std::thread::Builder::new()
            .name("kc-embed-load".into())
            .spawn(move || {
                let started = Instant::now();
                let outcome = load(&shared.config);
                let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
                if matches!(*state, State::Closed) {
                    return;
                }
                *state = match outcome {
                    Ok(loaded) => {
                        tracing::info!(
                            model = %shared.model_id,
                            dim = loaded.dim,
                            profile = %loaded.profile.name,
                            elapsed_ms = started.elapsed().as_millis() as u64,
                            "embedding model loaded"
                        );
                        State::Ready(Arc::new(loaded))
                    }
                    Err(error) => {
                        tracing::warn!(model = %shared.model_id, %error, "embedding model failed to load; retrying after cooldown");
                        State::Failed {
                            error,
                            at: Instant::now(),
                        }
                    }
                };
                shared.changed.notify_all();
            });
        if let Err(e) = spawned {
            *self.lock() = State::Failed {
                error: format!("cannot start loader thread: {e}"),
                at: Instant::now(),
            };
        }
    }

    fn loaded(&self) -> Result<Arc<Loaded>, EmbedError> {
        let state = self.lock();
        match &*state {
            State::Ready(loaded) => Ok(Arc::clone(loaded)),
            State::Closed => Err(EmbedError::Closed),
            State::Idle | State::Loading | State::Failed { .. } => {
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
        match &*self.lock() {
            State::Ready(loaded) => Some(loaded.dim),
            _ => None,
        }
    }

    fn is_ready(&self) -> bool {
        self.loaded().is_ok()
    }

    fn wait_ready(&self, timeout: Duration) -> bool {
        self.kick();
        let deadline = Instant::now() + timeout;
        let mut state = self.lock();
        loop {
            match &*state {
                State::Ready(_) => return true,
                State::Failed { .. } | State::Closed | State::Idle => return false,
                State::Loading => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
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
        let state = self.lock();
        let (name, error, loaded) = match &*state {
            State::Idle => ("idle", None, None),
            State::Loading => ("loading", None, None),
            State::Ready(l) => ("ready", None, Some(Arc::clone(l))),
            State::Failed { error, .. } => ("failed", Some(error.clone()), None),
            State::Closed => ("closed", None, None),
        };
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
        let mut state = self.lock();
        // Dropping `Loaded` drops the worker channels: each worker finishes
        // its current job, exits, and frees its context and model reference.
        *state = State::Closed;
        self.shared.changed.notify_all();
    }
}
