//! The in-process backend: a chat GGUF run by llama.cpp (llama-cpp-2) with
//! a GBNF grammar derived from the request's schema, so every answer that
//! finishes is schema-shaped JSON (spec: "Consolidation"; the embedded
//! default, so consolidation works without any server).
//!
//! ## Threads
//! Like the embedder: loading runs on its own thread (`kc-chat-load`), and
//! one worker thread (`kc-chat`) owns the model's context (neither `Send`
//! nor `Sync`) and serves generation jobs from a channel — the SyncArbiter
//! shape. [`LlmClient::complete`] blocks its caller (a blocking-pool
//! thread) until the worker answers; requests queue in the channel, one
//! generation at a time. The CPU kernel verification and llama.cpp's
//! process-wide backend are the embedder's (`embedder/llama/config.rs`
//! `verified_backend`), never initialized twice.
//!
//! ## Readiness
//! While the file is absent (the default model still downloading) or
//! loading, `complete` answers [`LlmError::NotReady`] at once and the
//! consolidator tries again later. A failed load is retried after the
//! cooldown. The state machine is the embedder's (`crate::model_loader`).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;

use super::client::{LlmClient, LlmError, LlmRequest, ModelInfo};
use super::generate::{worker, ChatJob, ChatSettings};
use crate::embedder::llama::config::verified_backend;
use crate::model_loader::{spawn_worker, LoadState, ModelLoader};

/// Tunables of the local chat backend.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalChatConfig {
    /// The GGUF file.
    pub path: PathBuf,
    /// Context size in tokens (prompt + answer).
    pub n_ctx: u32,
    /// llama.cpp threads (1: see shared/models/README.md on spinning
    /// barriers under load).
    pub n_threads: i32,
    /// Sampling seed (fixed: the same transcript gives the same answer).
    pub seed: u32,
    /// Sampling temperature after the grammar (0: greedy).
    pub temperature: f32,
    /// Wait after a failed load.
    pub cooldown: Duration,
}

impl LocalChatConfig {
    /// Defaults for `path`: 4096 tokens, 1 thread, seed 42, temperature 0.7.
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            n_ctx: 4096,
            n_threads: 1,
            seed: 42,
            temperature: 0.7,
            cooldown: Duration::from_secs(300),
        }
    }
}

struct Shared {
    config: LocalChatConfig,
    state: ModelLoader<mpsc::Sender<ChatJob>>,
}

/// The llama.cpp chat backend.
#[derive(Clone)]
pub struct LocalChat {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for LocalChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalChat")
            .field("path", &self.shared.config.path)
            .finish()
    }
}

impl LocalChat {
    /// A backend for `config.path`; nothing loads until first use (or
    /// [`Self::start_loading`]).
    pub fn new(config: LocalChatConfig) -> Self {
        let state = ModelLoader::new("kc-chat-load", config.cooldown);
        Self {
            shared: Arc::new(Shared { config, state }),
        }
    }

    /// Starts the background load now, if the file is there and no load
    /// ran (or the cooldown passed).
    pub fn start_loading(&self) {
        self.kick();
    }

    /// Waits up to `timeout` for the model to be ready (tests, benches),
    /// also while its file is not there yet.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            self.kick();
            let left = deadline.saturating_duration_since(Instant::now());
            match &*self.shared.state.wait_while_loading(left) {
                LoadState::Ready(_) => return true,
                LoadState::Failed { .. } | LoadState::Closed => return false,
                LoadState::Idle | LoadState::Loading => {}
            }
            if Instant::now() >= deadline {
                return false;
            }
            // Idle: the file is not there yet.
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the worker (it finishes its current job first).
    pub fn close(&self) {
        self.shared.state.close();
    }

    fn kick(&self) {
        // A missing file is not a failed load: no cooldown starts, and the
        // load begins as soon as the download has installed it.
        if !self.shared.config.path.is_file() {
            return;
        }
        let shared = Arc::clone(&self.shared);
        self.shared.state.kick(move || {
            let path = shared.config.path.display();
            match load(&shared.config) {
                Ok(jobs) => {
                    tracing::info!(path = %path, "chat model loaded");
                    Ok(jobs)
                }
                Err(error) => {
                    tracing::warn!(path = %path, %error, "chat model failed to load; retrying after cooldown");
                    Err(error)
                }
            }
        });
    }

    fn jobs(&self) -> Result<mpsc::Sender<ChatJob>, LlmError> {
        self.kick();
        match &*self.shared.state.lock() {
            LoadState::Ready(jobs) => Ok(jobs.clone()),
            LoadState::Closed => Err(LlmError::Closed),
            LoadState::Failed { error, .. } => Err(LlmError::Load(error.clone())),
            LoadState::Idle if !self.shared.config.path.is_file() => Err(LlmError::NotReady(
                format!("{} is not there yet", self.shared.config.path.display()),
            )),
            LoadState::Idle | LoadState::Loading => Err(LlmError::NotReady("loading".into())),
        }
    }
}

/// Loads the model and starts its worker; answers the job queue.
fn load(config: &LocalChatConfig) -> Result<mpsc::Sender<ChatJob>, String> {
    let backend = verified_backend(&config.path)?;
    let model = LlamaModel::load_from_file(backend, &config.path, &LlamaModelParams::default())
        .map_err(|e| format!("{}: not a loadable GGUF model ({e})", config.path.display()))?;
    let settings = ChatSettings {
        n_ctx: config.n_ctx.max(256),
        n_threads: config.n_threads.max(1),
        seed: config.seed,
        temperature: config.temperature,
    };
    spawn_worker("kc-chat".into(), move |jobs, ready| {
        worker(model, backend, settings, jobs, ready)
    })
}

/// The file name shown in the status.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

impl LlmClient for LocalChat {
    fn info(&self) -> ModelInfo {
        let config = &self.shared.config;
        let guard = self.shared.state.lock();
        let (state, error) = match &*guard {
            LoadState::Idle if !config.path.is_file() => ("missing", None),
            LoadState::Failed { error, .. } => ("failed", Some(error.clone())),
            other => (other.name(), None),
        };
        ModelInfo {
            backend: "llama_cpp",
            model: file_name(&config.path),
            state: state.into(),
            error,
        }
    }

    fn wait_until_ready(&self, timeout: Duration) -> Result<(), LlmError> {
        if self.wait_ready(timeout) {
            Ok(())
        } else {
            self.jobs().map(drop)
        }
    }

    fn complete(&self, request: &LlmRequest) -> Result<String, LlmError> {
        let jobs = self.jobs()?;
        let (reply, answer) = mpsc::channel();
        jobs.send(ChatJob {
            request: request.clone(),
            reply,
        })
        .map_err(|_| LlmError::Closed)?;
        answer.recv().map_err(|_| LlmError::Closed)?
    }
}
