//! The seam between the consolidator and a language model: [`LlmClient`]
//! (one blocking, schema-constrained chat completion) and the plain data
//! it takes and answers. The backends are in `openai.rs` (an
//! OpenAI-compatible endpoint) and `local.rs` (llama.cpp in process).

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// One schema-constrained chat completion.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmRequest {
    /// The system message (instructions, caps, an example answer).
    pub system: String,
    /// The user message (the transcript to consolidate).
    pub user: String,
    /// The JSON Schema the answer must satisfy: the local backend turns it
    /// into a GBNF grammar, the endpoint gets it as its JSON mode.
    pub schema: Value,
    /// Most tokens the answer may take; an answer cut off there is
    /// [`LlmError::Truncated`].
    pub max_tokens: u32,
}

/// What serves the model, for the status endpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelInfo {
    /// `openai_compatible` or `llama_cpp`.
    pub backend: &'static str,
    /// The model name (endpoint) or file (local).
    pub model: String,
    /// `ready`, `loading`, `idle`, `missing`, `failed` or `configured`.
    pub state: String,
    /// The last load or request error, if any.
    pub error: Option<String>,
}

/// Why a completion produced no answer. None of these is fatal to the
/// caller: the consolidator records it and tries again on the next trigger.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The model is not loaded (yet), or its file is not there yet.
    #[error("chat model not ready: {0}")]
    NotReady(String),
    /// The model could not be loaded.
    #[error("chat model failed to load: {0}")]
    Load(String),
    /// The endpoint did not answer in time (after the retries).
    #[error("model request timed out: {0}")]
    Timeout(String),
    /// The connection failed (after the retries).
    #[error("model endpoint unreachable: {0}")]
    Transport(String),
    /// The endpoint answered with an error status.
    #[error("model endpoint answered {status}: {message}")]
    Status {
        /// HTTP status.
        status: u16,
        /// The start of the body.
        message: String,
    },
    /// The response body is over the size cap.
    #[error("model response exceeds {0} bytes")]
    TooLarge(u64),
    /// The answer stopped at the token limit: it is incomplete.
    #[error("model answer truncated at the token limit")]
    Truncated,
    /// The response is not a chat completion (the envelope, not the
    /// answer's JSON, which the consolidator checks).
    #[error("malformed model response: {0}")]
    Malformed(String),
    /// Generation failed inside the backend.
    #[error("generation failed: {0}")]
    Generation(String),
    /// The backend was closed.
    #[error("chat backend closed")]
    Closed,
}

/// A chat model. Methods block (network or inference): callers run them on
/// a blocking thread, never on an actor's mailbox turn.
pub trait LlmClient: Send + Sync + 'static {
    /// What serves the model and its state; never blocks.
    fn info(&self) -> ModelInfo;

    /// One completion of `request`; the answer's text (JSON, unchecked).
    fn complete(&self, request: &LlmRequest) -> Result<String, LlmError>;

    /// Blocks until the model can answer, at most `timeout`; answers why
    /// not when it cannot ([`LlmError::NotReady`] while it still loads). A
    /// forced run waits here instead of being dropped as "not ready". An
    /// endpoint is always ready: its failures show when it is asked.
    fn wait_until_ready(&self, timeout: std::time::Duration) -> Result<(), LlmError> {
        let _ = timeout;
        Ok(())
    }
}

/// A shared model client.
pub type SharedLlm = Arc<dyn LlmClient>;
