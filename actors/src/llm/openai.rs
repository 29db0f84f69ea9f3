//! The OpenAI-compatible backend: `POST {base_url}/chat/completions` over
//! ureq (Ollama, llama.cpp's server, vLLM, hosted APIs all speak it).
//!
//! - **Timeouts**: one deadline for the whole request (connect, send,
//!   generation, body), because a model that is generating sends nothing
//!   until it is done.
//! - **Retries**: a transport error, a timeout, 429 and 5xx are retried
//!   with exponential backoff (`backoff`, doubled each time); any other
//!   status is the caller's mistake and is not.
//! - **Size cap**: the body is read with a byte limit; a larger one is
//!   [`LlmError::TooLarge`] (a broken or hostile endpoint cannot make the
//!   daemon buffer without bound).
//! - **JSON mode**: `response_format` carries the answer's JSON Schema
//!   (`json_schema`, the default), or only asks for JSON (`json_object`,
//!   for servers without schema support), or is left out (`off`).
//! - `finish_reason: "length"` is [`LlmError::Truncated`]: the answer is
//!   incomplete and nothing of it is used.

use std::time::Duration;

use serde_json::{json, Value};

use super::client::{LlmClient, LlmError, LlmRequest, ModelInfo};

/// How the endpoint is asked for JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonMode {
    /// `response_format: {type: json_schema, json_schema: {…}}`.
    #[default]
    Schema,
    /// `response_format: {type: json_object}`.
    Object,
    /// No `response_format`.
    Off,
}

impl JsonMode {
    /// Parses `json_schema`, `json_object` or `off`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "json_schema" => Some(JsonMode::Schema),
            "json_object" => Some(JsonMode::Object),
            "off" => Some(JsonMode::Off),
            _ => None,
        }
    }
}

/// Where and how to call the endpoint.
#[derive(Clone, PartialEq)]
pub struct OpenAiConfig {
    /// The API root, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    /// The model name the endpoint knows.
    pub model: String,
    /// Bearer token, if the endpoint needs one.
    pub api_key: Option<String>,
    /// Deadline of one attempt.
    pub timeout: Duration,
    /// Attempts after the first.
    pub retries: u32,
    /// Wait before the first retry (doubled for each next one).
    pub backoff: Duration,
    /// Largest response body read, in bytes.
    pub max_response_bytes: u64,
    /// How JSON is asked for.
    pub json_mode: JsonMode,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key never reaches a log.
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .finish()
    }
}

impl OpenAiConfig {
    /// Defaults for an endpoint: 120 s per attempt, 2 retries from 1 s,
    /// 1 MiB of response, JSON Schema mode.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(120),
            retries: 2,
            backoff: Duration::from_secs(1),
            max_response_bytes: 1024 * 1024,
            json_mode: JsonMode::Schema,
        }
    }
}

/// The OpenAI-compatible client.
#[derive(Debug)]
pub struct OpenAiClient {
    config: OpenAiConfig,
    agent: ureq::Agent,
}

/// One attempt's failure, and whether another attempt may help.
struct Failure {
    error: LlmError,
    retry: bool,
}

impl OpenAiClient {
    /// A client for `config` (nothing is contacted until a request).
    pub fn new(config: OpenAiConfig) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .user_agent(concat!("kirocrew/", env!("CARGO_PKG_VERSION")))
            .timeout_global(Some(config.timeout))
            .build()
            .new_agent();
        Self { config, agent }
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.config.base_url.trim().trim_end_matches('/')
        )
    }

    fn attempt(&self, body: &[u8]) -> Result<String, Failure> {
        let mut request = self.agent.post(self.url()).content_type("application/json");
        if let Some(key) = self.config.api_key.as_deref().filter(|k| !k.is_empty()) {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request.send(body).map_err(transport_failure)?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(self.config.max_response_bytes)
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(n) => Failure {
                    error: LlmError::TooLarge(n),
                    retry: false,
                },
                other => transport_failure(other),
            })?;
        if status != 200 {
            let message: String = String::from_utf8_lossy(&bytes).chars().take(300).collect();
            return Err(Failure {
                error: LlmError::Status { status, message },
                retry: status == 429 || status >= 500,
            });
        }
        parse_completion(&bytes).map_err(|error| Failure {
            error,
            retry: false,
        })
    }
}

fn transport_failure(e: ureq::Error) -> Failure {
    let error = match &e {
        ureq::Error::Timeout(_) => LlmError::Timeout(e.to_string()),
        _ => LlmError::Transport(e.to_string()),
    };
    Failure { error, retry: true }
}

/// The request body for `request` (pure).
pub(crate) fn request_body(model: &str, mode: JsonMode, request: &LlmRequest) -> Value {
    let mut body = json!({
        "model": model,
        "messages": [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.user},
        ],
        "temperature": 0.2,
        "max_tokens": request.max_tokens,
        "stream": false,
    });
    let format = match mode {
        JsonMode::Schema => Some(json!({
            "type": "json_schema",
            "json_schema": {"name": "consolidation", "strict": true, "schema": request.schema},
        })),
        JsonMode::Object => Some(json!({"type": "json_object"})),
        JsonMode::Off => None,
    };
    if let (Some(format), Some(fields)) = (format, body.as_object_mut()) {
        fields.insert("response_format".into(), format);
    }
    body
}

/// The answer text of a chat-completions response body (pure).
pub(crate) fn parse_completion(bytes: &[u8]) -> Result<String, LlmError> {
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| LlmError::Malformed(format!("not JSON: {e}")))?;
    let choice = doc
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| LlmError::Malformed("no choices".into()))?;
    if choice.get("finish_reason").and_then(Value::as_str) == Some("length") {
        return Err(LlmError::Truncated);
    }
    choice
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| LlmError::Malformed("choice has no message content".into()))
}

impl LlmClient for OpenAiClient {
    fn info(&self) -> ModelInfo {
        ModelInfo {
            backend: "openai_compatible",
            model: self.config.model.clone(),
            state: "configured".into(),
            error: None,
        }
    }

    fn complete(&self, request: &LlmRequest) -> Result<String, LlmError> {
        let body = request_body(&self.config.model, self.config.json_mode, request);
        let body = serde_json::to_vec(&body).map_err(|e| LlmError::Malformed(e.to_string()))?;
        let mut wait = self.config.backoff;
        let mut attempt = 0;
        loop {
            match self.attempt(&body) {
                Ok(answer) => return Ok(answer),
                Err(f) if f.retry && attempt < self.config.retries => {
                    tracing::warn!(error = %f.error, attempt = attempt + 1, "model request failed; retrying");
                    std::thread::sleep(wait);
                    wait = wait.saturating_mul(2);
                    attempt += 1;
                }
                Err(f) => return Err(f.error),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> LlmRequest {
        LlmRequest {
            system: "sys".into(),
            user: "hello".into(),
            schema: json!({"type": "object"}),
            max_tokens: 64,
        }
    }

    #[test]
    fn the_body_carries_the_schema_in_json_schema_mode() {
        let body = request_body("m", JsonMode::Schema, &request());
        assert_eq!(body["model"], "m");
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][1]["content"], "hello");
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(
            body["response_format"]["json_schema"]["schema"],
            json!({"type": "object"})
        );
        let object = request_body("m", JsonMode::Object, &request());
        assert_eq!(object["response_format"], json!({"type": "json_object"}));
        let off = request_body("m", JsonMode::Off, &request());
        assert!(off.get("response_format").is_none());
        assert_eq!(JsonMode::parse("json_object"), Some(JsonMode::Object));
        assert_eq!(JsonMode::parse("yaml"), None);
    }

    #[test]
    fn completions_are_read_and_truncation_is_an_error() {
        let ok = br#"{"choices":[{"message":{"role":"assistant","content":"{\"a\":1}"},"finish_reason":"stop"}]}"#;
        assert_eq!(parse_completion(ok).unwrap(), r#"{"a":1}"#);
        let cut = br#"{"choices":[{"message":{"content":"{\"a\":"},"finish_reason":"length"}]}"#;
        assert_eq!(parse_completion(cut), Err(LlmError::Truncated));
        assert!(matches!(
            parse_completion(b"<html>"),
            Err(LlmError::Malformed(_))
        ));
        assert!(matches!(
            parse_completion(br#"{"choices":[]}"#),
            Err(LlmError::Malformed(_))
        ));
        assert!(matches!(
            parse_completion(br#"{"choices":[{"message":{}}]}"#),
            Err(LlmError::Malformed(_))
        ));
    }

    #[test]
    fn the_api_key_never_shows_in_debug_output() {
        let mut config = OpenAiConfig::new("http://x/v1", "m");
        config.api_key = Some("sk-secret".into());
        assert!(!format!("{config:?}").contains("sk-secret"));
    }
}
