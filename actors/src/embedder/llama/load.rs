//! Loading a GGUF for the llama.cpp backend: metadata and profile, the
//! optional BF16 working copy, and the worker contexts (runs on the
//! `kc-embed-load` thread, never on a caller's).

use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Instant;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;

use super::super::bf16;
use super::super::profile::{detect, ModelFacts, Pooling};
use super::config::{verified_backend, Job, LlamaConfig, Loaded, Weights};
use super::worker::{worker, WorkerSettings};
use crate::model_loader::spawn_worker;

pub(super) fn load(config: &LlamaConfig) -> Result<Loaded, String> {
    let meta =
        std::fs::metadata(&config.path).map_err(|e| format!("{}: {e}", config.path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a file", config.path.display()));
    }
    // The CPU kernels must be proven for this model's weight types before
    // anything computes with them (see `kernels/`).
    let backend = verified_backend(&config.path)?;
    let (model, weights) = open_model(backend, config)?;
    let arch = model
        .meta_val_str("general.architecture")
        .unwrap_or_default();
    let facts = ModelFacts {
        name: model.meta_val_str("general.name").unwrap_or_default(),
        file_name: config
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        pooling: model
            .meta_val_str(&format!("{arch}.pooling_type"))
            .ok()
            .and_then(|v| v.trim().parse::<i64>().ok())
            .and_then(Pooling::from_gguf),
        n_ctx_train: model.n_ctx_train() as usize,
    };
    let profile = detect(&facts, &config.profile)?;
    let dim = usize::try_from(model.n_embd_out()).unwrap_or(0);
    if dim == 0 {
        return Err("model reports no embedding dimension".into());
    }
    let vocab = model.vocab();
    let trailing_special = vocab.should_add_eos() || vocab.should_add_sep();
    let model = Arc::new(model);
    let batch_tokens = config.batch_tokens.max(1);
    let n_ctx = profile.max_tokens.max(batch_tokens) as u32;
    let mut workers = Vec::new();
    // Contexts are created one at a time: llama.cpp mutates the model while
    // creating a context, so parallel creation is unsound.
    for index in 0..config.workers.max(1) {
        let model = Arc::clone(&model);
        let settings = WorkerSettings {
            n_ctx,
            batch_tokens,
            n_threads: config.n_threads.max(1),
            pooling: profile.pooling,
            normalize: profile.normalize,
        };
        let tx = spawn_worker::<Job, _>(format!("kc-embed-{index}"), move |jobs, ready| {
            worker(model, backend, settings, jobs, ready)
        })?;
        workers.push(tx);
    }
    Ok(Loaded {
        model,
        weights,
        dim,
        profile,
        trailing_special,
        workers,
        next_worker: AtomicUsize::new(0),
    })
}

/// Loads the model, as a BF16 copy when [`Weights`] asks for it and the
/// file has F16 tensors. A failed conversion falls back to the file.
fn open_model(
    backend: &LlamaBackend,
    config: &LlamaConfig,
) -> Result<(LlamaModel, &'static str), String> {
    let params = LlamaModelParams::default();
    let bf16 = match config.weights {
        Weights::Auto => super::kernels::bf16_kernels(),
        Weights::Bf16 => true,
        Weights::Stored => false,
    };
    if bf16 {
        match bf16_copy(&config.path) {
            Ok(Some(copy)) => {
                // llama.cpp maps the file; the mapping outlives the
                // directory entry, which `copy` removes when dropped.
                match LlamaModel::load_from_file(backend, copy.path(), &params) {
                    Ok(model) => return Ok((model, "bf16_from_f16")),
                    Err(error) => {
                        tracing::warn!(path = %config.path.display(), %error, "BF16 copy did not load; using the file as stored");
                    }
                }
            }
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(path = %config.path.display(), %error, "no BF16 copy; using the file as stored");
            }
        }
    }
    let model = LlamaModel::load_from_file(backend, &config.path, &params)
        .map_err(|e| format!("{}: not a loadable GGUF model ({e})", config.path.display()))?;
    Ok((model, "stored"))
}

/// The BF16 copy of `path` in a fresh temporary file, or `None` when the
/// file has no F16 tensors.
fn bf16_copy(path: &Path) -> std::io::Result<Option<tempfile::NamedTempFile>> {
    let started = Instant::now();
    let mut copy = tempfile::Builder::new()
        .prefix("kirocrew-bf16-")
        .suffix(".gguf")
        .tempfile()?;
    let Some(done) = bf16::convert(path, copy.as_file_mut())? else {
        return Ok(None);
    };
    tracing::info!(
        path = %path.display(),
        tensors = done.tensors,
        weights = done.weights,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "F16 weights converted to BF16 for the AVX512-BF16 kernels"
    );
    Ok(Some(copy))
}
