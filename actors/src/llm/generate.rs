//! The chat worker thread of the local backend: owns one llama.cpp context
//! (it borrows the model and is neither `Send` nor `Sync`) and runs one
//! grammar-constrained generation per job until the backend closes.
//!
//! A job: render the chat with the model's template (ChatML when the GGUF
//! has none), decode the prompt in one batch, then sample under the
//! schema's grammar (checked lazily, `sampler.rs`: only schema-shaped
//! continuations are ever accepted) and stop at an end-of-generation token. A run that
//! reaches the token limit first is [`LlmError::Truncated`]: a grammar can
//! only guarantee valid JSON once its root rule is complete, so a cut
//! answer is never passed on (shared/models/README.md, "Verification").

use std::num::NonZeroU32;
use std::sync::mpsc;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};

use super::client::{LlmError, LlmRequest};
use super::grammar::schema_grammar;
use super::sampler::{GrammarSampler, Sampling};
use crate::model_loader::{report_ready, WorkerReady};

/// Tokens kept free for the answer at the least.
const MIN_ANSWER_TOKENS: usize = 64;

/// One generation request and where to answer.
pub(super) struct ChatJob {
    pub(super) request: LlmRequest,
    pub(super) reply: mpsc::Sender<Result<String, LlmError>>,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct ChatSettings {
    pub(super) n_ctx: u32,
    pub(super) n_threads: i32,
    pub(super) seed: u32,
    pub(super) temperature: f32,
}

pub(super) fn worker(
    model: LlamaModel,
    backend: &'static LlamaBackend,
    settings: ChatSettings,
    jobs: mpsc::Receiver<ChatJob>,
    ready: WorkerReady,
) {
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(settings.n_ctx))
        // The whole prompt goes in one decode.
        .with_n_batch(settings.n_ctx)
        .with_n_threads(settings.n_threads)
        .with_n_threads_batch(settings.n_threads);
    let Some(mut ctx) = report_ready(&ready, model.new_context(backend, params)) else {
        return;
    };
    while let Ok(job) = jobs.recv() {
        let answer = generate(&model, &mut ctx, settings, &job.request);
        let _ = job.reply.send(answer);
    }
}

fn generation(e: impl std::fmt::Display) -> LlmError {
    LlmError::Generation(e.to_string())
}

/// The prompt text: the chat rendered with the model's template.
fn render(model: &LlamaModel, request: &LlmRequest) -> Result<String, LlmError> {
    let template = match model.chat_template(None) {
        Ok(t) => t,
        Err(_) => LlamaChatTemplate::new("chatml").map_err(generation)?,
    };
    let chat = [
        LlamaChatMessage::new("system".into(), request.system.clone()).map_err(generation)?,
        LlamaChatMessage::new("user".into(), request.user.clone()).map_err(generation)?,
    ];
    model
        .apply_chat_template(&template, &chat, true)
        .map_err(generation)
}

fn generate(
    model: &LlamaModel,
    ctx: &mut LlamaContext<'_>,
    settings: ChatSettings,
    request: &LlmRequest,
) -> Result<String, LlmError> {
    let grammar = schema_grammar(&request.schema)?;
    let prompt = render(model, request)?;
    let vocab = model.vocab();
    let tokens = vocab.tokenize(prompt.as_bytes(), true, true);
    let n_ctx = settings.n_ctx as usize;
    if tokens.len() + MIN_ANSWER_TOKENS > n_ctx {
        return Err(LlmError::Generation(format!(
            "prompt of {} tokens leaves no room for an answer in {n_ctx}",
            tokens.len()
        )));
    }
    let budget = (request.max_tokens as usize).min(n_ctx - tokens.len());
    let mut sampler = GrammarSampler::new(
        model,
        &grammar,
        Sampling {
            temperature: settings.temperature,
            seed: settings.seed,
        },
    )?;
    let started = Instant::now();
    ctx.clear_kv_cache();
    let mut batch = LlamaBatch::new(n_ctx, 1);
    batch.add_sequence(&tokens, 0, false).map_err(generation)?;
    ctx.decode(&mut batch).map_err(generation)?;
    let prompt_done = Instant::now();
    let mut bytes = Vec::new();
    let start = i32::try_from(tokens.len()).map_err(generation)?;
    let mut generated = 0usize;
    let outcome = loop {
        if generated == budget {
            break Err(LlmError::Truncated);
        }
        let token = sampler.sample(ctx, batch.n_tokens() - 1)?;
        if vocab.is_eog(token) {
            break String::from_utf8(std::mem::take(&mut bytes))
                .map_err(|e| LlmError::Malformed(format!("answer is not UTF-8: {e}")));
        }
        bytes.extend(vocab.token_to_piece(token, false, None));
        batch.clear();
        let pos = start + i32::try_from(generated).map_err(generation)?;
        batch.add(token, pos, &[0], true).map_err(generation)?;
        ctx.decode(&mut batch).map_err(generation)?;
        generated += 1;
    };
    // Where a slow answer's time went: the prompt (quadratic in its
    // length) or the answer (linear in its tokens).
    tracing::debug!(
        prompt_tokens = tokens.len(),
        prompt_ms = (prompt_done - started).as_millis() as u64,
        answer_tokens = generated,
        answer_ms = prompt_done.elapsed().as_millis() as u64,
        grammar_resampled = sampler.resampled,
        truncated = matches!(outcome, Err(LlmError::Truncated)),
        "chat generation"
    );
    outcome
}
