//! A worker thread of the llama.cpp backend: owns one context (which
//! borrows the model and is neither Send nor Sync) and serves decode jobs
//! from its channel until the backend closes.

use std::num::NonZeroU32;
use std::sync::mpsc;
use std::sync::Arc;

use llama_cpp_2::context::params::{LlamaContextParams, LlamaPoolingType};
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;

use super::super::backend::EmbedError;
use super::super::pack::pack;
use super::super::profile::Pooling;
use super::super::vector::l2_normalize;
use super::config::{Job, MAX_SEQS_PER_DECODE};
use crate::model_loader::{report_ready, WorkerReady};

#[derive(Clone, Copy)]
pub(super) struct WorkerSettings {
    pub(super) n_ctx: u32,
    pub(super) batch_tokens: usize,
    pub(super) n_threads: i32,
    pub(super) pooling: Pooling,
    pub(super) normalize: bool,
}

pub(super) fn worker(
    model: Arc<LlamaModel>,
    backend: &'static LlamaBackend,
    settings: WorkerSettings,
    jobs: mpsc::Receiver<Job>,
    ready: WorkerReady,
) {
    let pooling = match settings.pooling {
        Pooling::Mean => LlamaPoolingType::Mean,
        Pooling::Cls => LlamaPoolingType::Cls,
        Pooling::Last => LlamaPoolingType::Last,
    };
    let params = LlamaContextParams::default()
        .with_embeddings(true)
        .with_pooling_type(pooling)
        .with_n_ctx(NonZeroU32::new(settings.n_ctx))
        .with_n_batch(settings.n_ctx)
        // Encoder models need a whole input in one micro-batch.
        .with_n_ubatch(settings.n_ctx)
        .with_n_seq_max(MAX_SEQS_PER_DECODE as u32)
        .with_n_threads(settings.n_threads)
        .with_n_threads_batch(settings.n_threads);
    let Some(mut ctx) = report_ready(&ready, model.new_context(backend, params)) else {
        return;
    };
    let mut batch = LlamaBatch::new(settings.n_ctx as usize, MAX_SEQS_PER_DECODE as i32);
    while let Ok(job) = jobs.recv() {
        let lengths: Vec<usize> = job.seqs.iter().map(Vec::len).collect();
        let mut out = vec![Vec::new(); job.seqs.len()];
        let result = pack(&lengths, settings.batch_tokens, MAX_SEQS_PER_DECODE)
            .into_iter()
            .try_for_each(|group| {
                batch.clear();
                for (seq_id, &index) in group.iter().enumerate() {
                    batch
                        .add_sequence(&job.seqs[index], seq_id as i32, true)
                        .map_err(|e| EmbedError::Inference(e.to_string()))?;
                }
                ctx.clear_kv_cache();
                ctx.decode(&mut batch)
                    .map_err(|e| EmbedError::Inference(e.to_string()))?;
                for (seq_id, &index) in group.iter().enumerate() {
                    let mut v = ctx
                        .embeddings_seq_ith(seq_id as i32)
                        .map_err(|e| EmbedError::Inference(e.to_string()))?
                        .to_vec();
                    if settings.normalize {
                        l2_normalize(&mut v);
                    }
                    out[index] = v;
                }
                Ok(())
            });
        let _ = job.reply.send(result.map(|()| out));
    }
}
