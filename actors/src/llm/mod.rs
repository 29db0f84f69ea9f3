//! # LLM clients: the model behind consolidation
//!
//! Not an actor: [`LlmClient`] is one blocking, schema-constrained chat
//! completion, with two real backends (spec: "Consolidation"; issue 14):
//!
//! - [`LocalChat`] (`local.rs`, `generate.rs`, `sampler.rs`): a chat GGUF run in process
//!   by llama.cpp with a GBNF grammar derived from the answer's JSON Schema
//!   (`grammar.rs`) — the default, so consolidation needs no server;
//! - [`OpenAiClient`] (`openai.rs`): an OpenAI-compatible
//!   `/chat/completions` endpoint over ureq, with a deadline, retries with
//!   backoff, a response-size cap and the schema as its JSON mode.
//!
//! The default local model and its pinned download source are in
//! `default_model.rs`.
//!
//! Used by the `Consolidator` actor, which calls [`LlmClient::complete`]
//! on a blocking thread, and by `kirocrew bench consolidate`.

mod client;
mod default_model;
mod generate;
pub mod grammar;
mod local;
mod openai;
mod sampler;

pub use client::{LlmClient, LlmError, LlmRequest, ModelInfo, SharedLlm};
pub use default_model::{
    chat_model_source, DEFAULT_CHAT_MODEL_BYTES, DEFAULT_CHAT_MODEL_FILE,
    DEFAULT_CHAT_MODEL_SHA256, DEFAULT_CHAT_MODEL_URL,
};
pub use grammar::schema_grammar;
pub use local::{LocalChat, LocalChatConfig};
pub use openai::{JsonMode, OpenAiClient, OpenAiConfig};
