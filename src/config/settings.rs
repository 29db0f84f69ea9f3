//! The typed configuration ([`Settings`]) and the range checks its types
//! cannot express.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use kirocrew_actors::hooks::HookRules;
use kirocrew_actors::vector_store::episodic::Methods;
use kirocrew_actors::vector_store::{normalize_prefix, StoreSettings};

use super::error::ConfigError;
use super::integrations::ClaudeCodeSettings;

/// The typed, validated configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// HTTP server.
    pub server: ServerSettings,
    /// API authentication.
    pub auth: AuthSettings,
    /// Logging.
    pub log: LogSettings,
    /// Memory subsystem.
    pub memory: MemorySettings,
    /// Security event log.
    pub security: SecuritySettings,
    /// Config-driven hooks (spec "Hooks").
    pub hooks: HookRules,
    /// Agent integration.
    pub agent: AgentSettings,
    /// Channel history.
    pub channels: ChannelSettings,
    /// The context builder.
    pub context: ContextConfig,
    /// Skills.
    pub skills: SkillsSettings,
    /// The consolidator and its model.
    pub consolidation: ConsolidationConfig,
    /// The Claude Code hook adapter.
    pub claude_code: ClaudeCodeSettings,
}

/// `consolidation.*`: which model consolidates. An endpoint
/// (`llm_base_url` + `llm_model`, env `KIROCREW_LLM_BASE_URL`,
/// `KIROCREW_LLM_MODEL`, `KIROCREW_LLM_API_KEY`) wins; otherwise the local
/// GGUF `chat_model_path` (env `KIROCREW_CHAT_MODEL_PATH`); otherwise the
/// default model file under `models/`.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsolidationConfig {
    /// Consolidate at all (off: no run is ever started).
    pub enabled: bool,
    /// OpenAI-compatible API root (e.g. `http://127.0.0.1:11434/v1`).
    pub llm_base_url: String,
    /// The endpoint's model name.
    pub llm_model: String,
    /// Bearer token for the endpoint (empty: none).
    pub llm_api_key: String,
    /// `json_schema`, `json_object` or `off`.
    pub llm_json_mode: String,
    /// Deadline of one endpoint attempt.
    pub llm_timeout_secs: u64,
    /// Endpoint attempts after the first.
    pub llm_retries: u32,
    /// Largest endpoint response read.
    pub llm_max_response_bytes: u64,
    /// A local chat GGUF.
    pub chat_model_path: String,
    /// Fetch the default chat model when neither an endpoint nor
    /// `chat_model_path` is set (`KIROCREW_SKIP_MODEL_DOWNLOAD=1` also
    /// stops it).
    pub chat_model_download: bool,
    /// Where the default chat model is fetched from (env
    /// `KIROCREW_CHAT_MODEL_URL`; blank: the built-in URL).
    pub chat_model_url: String,
    /// Its sha256 pin (env `KIROCREW_CHAT_MODEL_SHA256`; blank: the
    /// built-in pin).
    pub chat_model_sha256: String,
    /// The local model's context, in tokens.
    pub chat_ctx_tokens: u32,
    /// llama.cpp threads for the local model.
    pub chat_threads: u32,
    /// Most tokens an answer may take.
    pub max_answer_tokens: u32,
    /// Characters of transcript a prompt carries, at most.
    pub transcript_chars: usize,
    /// How long a forced run waits for a chat model still loading.
    pub forced_run_wait_secs: u64,
}

impl std::fmt::Debug for ConsolidationConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The API key never reaches a log.
        f.debug_struct("ConsolidationConfig")
            .field("enabled", &self.enabled)
            .field("llm_base_url", &self.llm_base_url)
            .field("llm_model", &self.llm_model)
            .field(
                "llm_api_key",
                &(!self.llm_api_key.is_empty()).then_some("<set>"),
            )
            .field("chat_model_path", &self.chat_model_path)
            .field("chat_model_download", &self.chat_model_download)
            .field("chat_model_url", &self.chat_model_url)
            .finish_non_exhaustive()
    }
}

/// `skills.*`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillsSettings {
    /// Skills matched per message by trigger words (0: the matcher is off,
    /// the stock setting).
    pub max_triggered: u32,
    /// Session context gets pinned skills plus a usage-ranked top-K within
    /// the skills budget instead of the full index.
    pub lazy_load: bool,
    /// More skill roots to list (never written to; project and data-home
    /// skills win on a name clash).
    pub extra_paths: Vec<String>,
}

/// `context.*`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// How long a build waits for the query embedding before it retrieves
    /// by keywords (the embed still completes and is cached).
    pub embed_deadline_ms: u64,
    /// How long a session build waits for a thread-history summary before
    /// it truncates instead (the summary still completes and is cached).
    pub history_compress_deadline_ms: u64,
    /// Model id → context window in tokens, added to (and overriding) the
    /// built-in table.
    pub model_windows: std::collections::BTreeMap<String, u64>,
}

/// `agent.*`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    /// User kiro-cli hooks, merged after the bundled ones (spec "User
    /// kiro-cli Hooks"); kept raw because malformed entries are skipped
    /// with a warning rather than failing the configuration.
    pub kiro_hooks: serde_json::Value,
}

/// `channels.*`: the observe-mode bounds (the mention-mode pair, 50
/// entries and 300 s, has no knob, as in the spec).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelSettings {
    /// Entries an observe-mode channel keeps.
    pub observe_max_messages: u32,
    /// How long an observe-mode entry is kept, in hours.
    pub observe_ttl_hours: f64,
}

/// Largest `channels.observe_max_messages`.
const MAX_OBSERVE_MESSAGES: u32 = 10_000;

/// Largest `channels.observe_ttl_hours` (one year).
const MAX_OBSERVE_TTL_HOURS: f64 = 8_760.0;

impl ChannelSettings {
    /// The observe-mode lifetime.
    pub fn observe_ttl(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.observe_ttl_hours * 3_600.0)
    }
}

/// `security.*`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecuritySettings {
    /// Rotate `security-events.jsonl` when the next event would take it
    /// past this many bytes.
    pub log_max_bytes: u64,
    /// Rotated security logs kept (`.1` … `.N`).
    pub log_keep: u32,
    /// Days a quarantined write is kept for review before it expires
    /// (issue 41; an audit event each).
    pub quarantine_days: u32,
}

/// `server.*`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// Address to bind (127.0.0.1 by default: the API is local-only).
    pub bind: String,
    /// TCP port; 0 picks a free one.
    pub port: u16,
    /// Largest accepted request body, in bytes (413 beyond).
    pub body_limit_bytes: usize,
    /// Largest accepted `POST /api/memory/import` body, in bytes.
    pub import_limit_bytes: usize,
    /// How long a graceful stop waits for in-flight requests.
    pub shutdown_timeout_secs: u64,
    /// HTTP worker threads.
    pub workers: usize,
    /// Extra `Host` header values accepted (e.g. a reverse proxy's name).
    pub allowed_hosts: Vec<String>,
    /// How long a request body may take to arrive once the head is in
    /// (408 beyond), so a client trickling its body cannot hold a
    /// connection forever.
    pub body_timeout_secs: u64,
    /// Operator console sessions open at once, at most (409
    /// `console_busy` beyond).
    pub console_max_sessions: usize,
    /// A console session that sends nothing (not even a pong) for this
    /// long is closed.
    pub console_idle_secs: u64,
}

/// `auth.*`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// Skip the bearer token for callers on a loopback address.
    pub loopback_trusted: bool,
}

/// `log.*`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    /// `text` or `json`.
    pub format: String,
}

/// `memory.*`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySettings {
    /// Idle time before a session's history is consolidated.
    pub history_idle_hours: f64,
    /// Daily history files older than this are pruned.
    pub history_max_days: u32,
    /// Seconds between heartbeat ticks (idle check; index rebuild every 15
    /// ticks; history prune every 1,440).
    pub heartbeat_interval_secs: u64,
    /// Key prefixes allowed besides pref./project./user./lesson.
    pub extra_prefixes: Vec<String>,
    /// Confidence automated semantic writes need.
    pub confidence_threshold: f64,
    /// Audit events kept.
    pub max_events: u32,
    /// Active episodic fragments kept (least important, oldest evicted).
    pub episodic_max: u64,
    /// The retrieval-v2 methods hybrid episodic search uses: `speakers`
    /// (boost and `speaker_mismatch` gate), `sessions`, `graph`,
    /// `neighbours`; leave one out to switch it off.
    pub episodic_methods: Vec<String>,
    /// Character cap of the `[Semantic Memory]` block.
    pub semantic_context_cap: usize,
    /// Whether the legacy Markdown memory has been migrated.
    pub migrated: bool,
    /// Mirror URL of the embedding model (empty: the built-in default).
    pub embed_model_url: String,
    /// sha256 pin for a custom `embed_model_url`.
    pub embed_model_sha256: String,
    /// A local GGUF to embed with instead of the downloaded default.
    pub embed_model_path: String,
    /// Force an embedding profile (empty: detect from the GGUF).
    pub embed_model_profile: String,
    /// llama.cpp threads per embedding context (1 never collapses under load).
    pub embed_threads: u32,
    /// Parallel embedding contexts a batch is spread over.
    pub embed_workers: u32,
}

impl Settings {
    /// Range and format checks that types alone cannot express.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, reason: String| {
            Err(ConfigError::InvalidValue {
                key: key.to_owned(),
                reason,
            })
        };
        if self.server.bind.parse::<IpAddr>().is_err() {
            return bad(
                "server.bind",
                format!("{:?} is not an IP address", self.server.bind),
            );
        }
        if self.server.body_limit_bytes < 1024 {
            return bad("server.body_limit_bytes", "must be at least 1024".into());
        }
        if self.server.import_limit_bytes < self.server.body_limit_bytes {
            return bad(
                "server.import_limit_bytes",
                "must be at least server.body_limit_bytes".into(),
            );
        }
        if !(1..=3600).contains(&self.server.body_timeout_secs) {
            return bad(
                "server.body_timeout_secs",
                "must be between 1 and 3600".into(),
            );
        }
        if !(1..=256).contains(&self.server.console_max_sessions) {
            return bad(
                "server.console_max_sessions",
                "must be between 1 and 256".into(),
            );
        }
        if !(10..=86_400).contains(&self.server.console_idle_secs) {
            return bad(
                "server.console_idle_secs",
                "must be between 10 and 86400".into(),
            );
        }
        if !(1..=64).contains(&self.server.workers) {
            return bad("server.workers", "must be between 1 and 64".into());
        }
        if !matches!(self.log.format.as_str(), "text" | "json") {
            return bad(
                "log.format",
                format!("{:?} is not \"text\" or \"json\"", self.log.format),
            );
        }
        let c = &self.consolidation;
        if kirocrew_actors::llm::JsonMode::parse(&c.llm_json_mode).is_none() {
            return bad(
                "consolidation.llm_json_mode",
                format!(
                    "{:?} is not json_schema, json_object or off",
                    c.llm_json_mode
                ),
            );
        }
        if c.llm_base_url.trim().is_empty() != c.llm_model.trim().is_empty() {
            return bad(
                "consolidation.llm_model",
                "llm_base_url and llm_model are set together".into(),
            );
        }
        if !(1..=3_600).contains(&c.llm_timeout_secs) {
            return bad(
                "consolidation.llm_timeout_secs",
                "must be between 1 and 3600".into(),
            );
        }
        if c.llm_retries > 10 {
            return bad("consolidation.llm_retries", "must be at most 10".into());
        }
        if !(1_024..=64 * 1024 * 1024).contains(&c.llm_max_response_bytes) {
            return bad(
                "consolidation.llm_max_response_bytes",
                "must be between 1024 and 67108864".into(),
            );
        }
        if !(512..=131_072).contains(&c.chat_ctx_tokens) {
            return bad(
                "consolidation.chat_ctx_tokens",
                "must be between 512 and 131072".into(),
            );
        }
        if !(1..=64).contains(&c.chat_threads) {
            return bad(
                "consolidation.chat_threads",
                "must be between 1 and 64".into(),
            );
        }
        if !(64..=32_768).contains(&c.max_answer_tokens) {
            return bad(
                "consolidation.max_answer_tokens",
                "must be between 64 and 32768".into(),
            );
        }
        if !(1..=3_600).contains(&c.forced_run_wait_secs) {
            return bad(
                "consolidation.forced_run_wait_secs",
                "must be between 1 and 3600".into(),
            );
        }
        if !(500..=1_000_000).contains(&c.transcript_chars) {
            return bad(
                "consolidation.transcript_chars",
                "must be between 500 and 1000000".into(),
            );
        }
        check_pin("consolidation.chat_model_sha256", &c.chat_model_sha256)?;
        let url = c.chat_model_url.trim();
        if !url.is_empty() && !url.starts_with("https://") && !url.starts_with("http://") {
            return bad(
                "consolidation.chat_model_url",
                "must be an http:// or https:// URL".into(),
            );
        }
        if !(1..=60_000).contains(&self.context.embed_deadline_ms) {
            return bad(
                "context.embed_deadline_ms",
                "must be between 1 and 60000".into(),
            );
        }
        if self.context.history_compress_deadline_ms > 60_000 {
            return bad(
                "context.history_compress_deadline_ms",
                "must be between 0 and 60000".into(),
            );
        }
        if let Some((model, _)) = self
            .context
            .model_windows
            .iter()
            .find(|(m, w)| m.trim().is_empty() || !(1_000..=100_000_000).contains(*w))
        {
            return bad(
                "context.model_windows",
                format!("{model:?}: a window must be 1000-100000000 tokens and the id non-empty"),
            );
        }
        self.claude_code.validate()?;
        if let Err(reason) = self.hooks.validate() {
            return bad("hooks", reason);
        }
        if self.security.log_max_bytes < 64 * 1024 {
            return bad("security.log_max_bytes", "must be at least 65536".into());
        }
        if self.skills.max_triggered > 50 {
            return bad("skills.max_triggered", "must be between 0 and 50".into());
        }
        if self.skills.extra_paths.iter().any(|p| p.trim().is_empty()) {
            return bad("skills.extra_paths", "entries must not be empty".into());
        }
        if self.security.log_keep > 100 {
            return bad("security.log_keep", "must be at most 100".into());
        }
        if !(1..=3650).contains(&self.security.quarantine_days) {
            return bad("security.quarantine_days", "must be 1-3650".into());
        }
        let c = &self.channels;
        if !(1..=MAX_OBSERVE_MESSAGES).contains(&c.observe_max_messages) {
            return bad(
                "channels.observe_max_messages",
                format!("must be between 1 and {MAX_OBSERVE_MESSAGES}"),
            );
        }
        let ttl = c.observe_ttl_hours;
        if !(ttl.is_finite() && ttl > 0.0 && ttl <= MAX_OBSERVE_TTL_HOURS) {
            return bad(
                "channels.observe_ttl_hours",
                format!("must be a number in (0, {MAX_OBSERVE_TTL_HOURS}]"),
            );
        }
        let m = &self.memory;
        if !(m.history_idle_hours.is_finite() && m.history_idle_hours > 0.0) {
            return bad(
                "memory.history_idle_hours",
                "must be a positive number".into(),
            );
        }
        if m.history_max_days == 0 {
            return bad("memory.history_max_days", "must be at least 1".into());
        }
        if !(1..=86_400).contains(&m.heartbeat_interval_secs) {
            return bad(
                "memory.heartbeat_interval_secs",
                "must be between 1 and 86400".into(),
            );
        }
        if !(m.confidence_threshold.is_finite() && (0.0..=1.0).contains(&m.confidence_threshold)) {
            return bad("memory.confidence_threshold", "must be in [0, 1]".into());
        }
        if m.episodic_max == 0 {
            return bad("memory.episodic_max", "must be at least 1".into());
        }
        if m.max_events == 0 {
            return bad("memory.max_events", "must be at least 1".into());
        }
        if let Err(reason) = Methods::from_names(&m.episodic_methods) {
            return bad("memory.episodic_methods", reason);
        }
        if !(1..=64).contains(&m.embed_threads) {
            return bad("memory.embed_threads", "must be between 1 and 64".into());
        }
        if !(1..=16).contains(&m.embed_workers) {
            return bad("memory.embed_workers", "must be between 1 and 16".into());
        }
        let profiles = kirocrew_actors::embedder::known_profiles();
        if !m.embed_model_profile.is_empty() && !profiles.contains(&m.embed_model_profile.as_str())
        {
            return bad(
                "memory.embed_model_profile",
                format!("unknown profile; known: {}", profiles.join(", ")),
            );
        }
        check_pin("memory.embed_model_sha256", &m.embed_model_sha256)?;
        for prefix in &m.extra_prefixes {
            if let Err(reason) = normalize_prefix(prefix) {
                return bad("memory.extra_prefixes", reason);
            }
        }
        Ok(())
    }

    /// The vector store's tunables.
    pub fn store_settings(&self) -> StoreSettings {
        StoreSettings {
            extra_prefixes: self
                .memory
                .extra_prefixes
                .iter()
                .filter_map(|p| normalize_prefix(p).ok())
                .collect(),
            confidence_threshold: self.memory.confidence_threshold,
            max_events: self.memory.max_events,
            episodic_max: self.memory.episodic_max,
            // Validated on load; an unknown name cannot get here.
            episodic_methods: Methods::from_names(&self.memory.episodic_methods)
                .unwrap_or_default(),
            ..StoreSettings::default()
        }
    }
}

/// A sha256 pin setting: empty (none) or 64 hex digits.
fn check_pin(key: &str, sha: &str) -> Result<(), ConfigError> {
    if sha.is_empty() || (sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit())) {
        return Ok(());
    }
    Err(ConfigError::InvalidValue {
        key: key.to_owned(),
        reason: "must be 64 hex digits".into(),
    })
}
