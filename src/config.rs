//! Layered configuration: compiled-in defaults ← `$KIROCREW_HOME/config.json`
//! ← `KIROCREW_*` environment variables.
//!
//! `config/defaults.json` names every key the service reads, with its default;
//! it is both the documentation of the key set and the type oracle: a value
//! from config.json, the environment or `kirocrew config set` must have the
//! JSON type of its default (an integer default takes only integers). After
//! merging, the result is deserialized into [`Settings`] and range-checked, so
//! a bad value fails start-up with a message naming the key.
//!
//! config.json may hold sections this build does not know (the reference's
//! file carries gateway and Slack settings); they are kept on disk, ignored,
//! and reported as warnings. `config set` refuses unknown keys.
//!
//! Environment variables: `KIROCREW_<SECTION>__<KEY>` (double underscore
//! between levels, e.g. `KIROCREW_SERVER__PORT=9000`), plus the reference's
//! names listed in [`ENV_ALIASES`]. `KIROCREW_HOME` and `KIROCREW_LOG` are not
//! config keys (data home and log filter).

use std::net::IpAddr;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use kirocrew_actors::vector_store::{normalize_prefix, StoreSettings};

/// Every key with its default, compiled in.
pub const DEFAULTS_JSON: &str = include_str!("../config/defaults.json");

/// Reference environment names that map onto config keys.
pub const ENV_ALIASES: &[(&str, &str)] = &[("KIROCREW_LOG_FORMAT", "log.format")];

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
    fn validate(&self) -> Result<(), ConfigError> {
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
        if !(1..=64).contains(&self.server.workers) {
            return bad("server.workers", "must be between 1 and 64".into());
        }
        if !matches!(self.log.format.as_str(), "text" | "json") {
            return bad(
                "log.format",
                format!("{:?} is not \"text\" or \"json\"", self.log.format),
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
        let sha = &m.embed_model_sha256;
        let valid_pin = sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit());
        if !sha.is_empty() && !valid_pin {
            return bad("memory.embed_model_sha256", "must be 64 hex digits".into());
        }
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
        }
    }
}

/// Configuration problems, each naming the key or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// No such key in defaults.json.
    #[error("unknown config key {0:?} (see `kirocrew config get` for the key list)")]
    UnknownKey(String),
    /// The value has the wrong JSON type.
    #[error("{key} must be {expected}, got {got}")]
    WrongType {
        /// Dotted key.
        key: String,
        /// Expected type.
        expected: &'static str,
        /// What was given.
        got: String,
    },
    /// The value has the right type but is out of range.
    #[error("invalid value for {key}: {reason}")]
    InvalidValue {
        /// Dotted key.
        key: String,
        /// Why.
        reason: String,
    },
    /// An environment variable could not be applied.
    #[error("environment variable {var}: {reason}")]
    Env {
        /// The variable.
        var: String,
        /// Why.
        reason: String,
    },
    /// config.json could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// config.json is not a JSON object.
    #[error("{path} is not valid JSON: {reason}")]
    Parse {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// The merged configuration.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// Typed and validated.
    pub settings: Settings,
    /// The merged document (what `config get` prints).
    pub effective: Value,
    /// Non-fatal findings (unknown keys in config.json).
    pub warnings: Vec<String>,
}

fn defaults() -> Value {
    // The file is compiled in and checked by a unit test.
    serde_json::from_str(DEFAULTS_JSON).unwrap_or_else(|e| panic!("defaults.json: {e}"))
}

/// Loads config for the data home `home`, applying the given environment.
pub fn load(
    home: &Path,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<LoadedConfig, ConfigError> {
    let file = read_config_file(&home.join("config.json"))?;
    merge(file, env)
}

fn merge(
    file: Map<String, Value>,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<LoadedConfig, ConfigError> {
    let mut effective = defaults();
    let mut warnings = Vec::new();
    let defaults = effective.clone();
    apply_file(
        &defaults,
        &mut effective,
        &Value::Object(file),
        "",
        &mut warnings,
    )?;
    for (var, raw) in env {
        let Some(key) = env_key(&var) else { continue };
        let Some(default) = lookup(&defaults, &key) else {
            return Err(ConfigError::Env {
                var,
                reason: format!("{key:?} is not a config key"),
            });
        };
        let value = parse_raw(default, &raw).map_err(|reason| ConfigError::Env {
            var: var.clone(),
            reason,
        })?;
        set_path(&mut effective, &key, value);
    }
    // serde_path_to_error names the failing key ("server.port") instead of
    // only the type mismatch.
    let settings: Settings = serde_path_to_error::deserialize(effective.clone()).map_err(|e| {
        ConfigError::InvalidValue {
            key: e.path().to_string(),
            reason: e.inner().to_string(),
        }
    })?;
    settings.validate()?;
    Ok(LoadedConfig {
        settings,
        effective,
        warnings,
    })
}

/// Maps an environment variable to a dotted key, if it is a config variable.
fn env_key(var: &str) -> Option<String> {
    if let Some((_, key)) = ENV_ALIASES.iter().find(|(name, _)| *name == var) {
        return Some((*key).to_owned());
    }
    let rest = var.strip_prefix("KIROCREW_")?;
    rest.contains("__").then(|| {
        rest.split("__")
            .collect::<Vec<_>>()
            .join(".")
            .to_lowercase()
    })
}

fn read_config_file(path: &Path) -> Result<Map<String, Value>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(ConfigError::Io {
                path: path.display().to_string(),
                source,
            })
        }
    };
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ConfigError::Parse {
            path: path.display().to_string(),
            reason: "the top level must be an object".into(),
        }),
        Err(e) => Err(ConfigError::Parse {
            path: path.display().to_string(),
            reason: e.to_string(),
        }),
    }
}

fn apply_file(
    defaults: &Value,
    effective: &mut Value,
    file: &Value,
    prefix: &str,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let Value::Object(map) = file else {
        return Ok(());
    };
    for (name, value) in map {
        let key = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        match lookup(defaults, &key) {
            None => warnings.push(format!("config.json: unknown key {key:?} ignored")),
            Some(Value::Object(_)) => apply_file(defaults, effective, value, &key, warnings)?,
            Some(default) => {
                check_type(&key, default, value)?;
                set_path(effective, &key, value.clone());
            }
        }
    }
    Ok(())
}

fn lookup<'a>(doc: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(doc, |node, part| node.get(part))
}

fn set_path(doc: &mut Value, key: &str, value: Value) {
    let mut node = doc;
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        let Value::Object(map) = node else { return };
        if parts.peek().is_none() {
            map.insert(part.to_owned(), value);
            return;
        }
        node = map
            .entry(part.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

fn type_name(default: &Value) -> &'static str {
    match default {
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
        Value::Null => "null",
    }
}

fn check_type(key: &str, default: &Value, value: &Value) -> Result<(), ConfigError> {
    let ok = match (default, value) {
        (Value::Bool(_), Value::Bool(_)) => true,
        (Value::Number(d), Value::Number(v)) => d.is_f64() || v.is_u64() || v.is_i64(),
        (Value::String(_), Value::String(_)) => true,
        (Value::Array(d), Value::Array(v)) => {
            // Element type follows the default's elements; an empty default
            // array holds strings (prefixes, host names).
            let element = d.first().cloned().unwrap_or(Value::String(String::new()));
            v.iter().all(|item| check_type(key, &element, item).is_ok())
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(ConfigError::WrongType {
            key: key.to_owned(),
            expected: type_name(default),
            got: value.to_string(),
        })
    }
}

/// Parses a command-line or environment string into the type of `default`.
fn parse_raw(default: &Value, raw: &str) -> Result<Value, String> {
    let raw = raw.trim();
    let value =
        match default {
            Value::String(_) => Value::String(raw.to_owned()),
            Value::Bool(_) => match raw.to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => Value::Bool(true),
                "false" | "0" | "no" | "off" => Value::Bool(false),
                _ => return Err(format!("{raw:?} is not a boolean (true/false)")),
            },
            Value::Number(_) => serde_json::from_str::<Value>(raw)
                .map_err(|_| format!("{raw:?} is not a number"))?,
            Value::Array(_) if raw.starts_with('[') => serde_json::from_str(raw)
                .map_err(|e| format!("{raw:?} is not a JSON array: {e}"))?,
            Value::Array(_) => Value::Array(
                raw.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| Value::String(s.to_owned()))
                    .collect(),
            ),
            Value::Object(_) | Value::Null => return Err("is a section, not a value".into()),
        };
    check_type("value", default, &value)
        .map_err(|_| format!("{raw:?} is not {}", type_name(default)))?;
    Ok(value)
}

/// The effective value of `key` (a leaf or a whole section).
pub fn get_value<'a>(effective: &'a Value, key: &str) -> Result<&'a Value, ConfigError> {
    lookup(effective, key).ok_or_else(|| ConfigError::UnknownKey(key.to_owned()))
}

/// Sets `key` to `raw` in `$home/config.json`, after checking the key exists,
/// the value has the key's type, and the whole resulting file still loads.
/// The file is replaced atomically; on any error it is left untouched.
pub fn set_value(home: &Path, key: &str, raw: &str) -> Result<Value, ConfigError> {
    let defaults = defaults();
    let default = lookup(&defaults, key).ok_or_else(|| ConfigError::UnknownKey(key.to_owned()))?;
    if default.is_object() {
        return Err(ConfigError::UnknownKey(format!(
            "{key} (a section, not a key)"
        )));
    }
    let value = parse_raw(default, raw).map_err(|reason| ConfigError::WrongType {
        key: key.to_owned(),
        expected: type_name(default),
        got: reason,
    })?;
    let path = home.join("config.json");
    let mut file = Value::Object(read_config_file(&path)?);
    set_path(&mut file, key, value.clone());
    let Value::Object(map) = &file else {
        return Err(ConfigError::UnknownKey(key.to_owned()));
    };
    merge(map.clone(), std::iter::empty())?;
    write_atomically(&path, &file)?;
    Ok(value)
}

fn write_atomically(path: &Path, doc: &Value) -> Result<(), ConfigError> {
    let io_err = |source| ConfigError::Io {
        path: path.display().to_string(),
        source,
    };
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io_err)?;
    let text = serde_json::to_string_pretty(doc).unwrap_or_default() + "\n";
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io_err)?;
    tmp.as_file().sync_all().map_err(io_err)?;
    tmp.persist(path).map_err(|e| io_err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn defaults_deserialize_and_validate() {
        let loaded = merge(Map::new(), Vec::new()).unwrap();
        assert_eq!(loaded.settings.server.bind, "127.0.0.1");
        assert_eq!(loaded.settings.memory.max_events, 10_000);
        assert_eq!(loaded.settings.memory.history_idle_hours, 3.0);
    }

    #[test]
    fn file_overrides_defaults_and_env_overrides_file() {
        let file =
            serde_json::json!({"server": {"port": 9000}, "memory": {"history_idle_hours": 2}});
        let Value::Object(map) = file else {
            unreachable!()
        };
        let loaded = merge(map.clone(), Vec::new()).unwrap();
        assert_eq!(loaded.settings.server.port, 9000);
        assert_eq!(loaded.settings.memory.history_idle_hours, 2.0);
        let loaded = merge(map, env(&[("KIROCREW_SERVER__PORT", "9100")])).unwrap();
        assert_eq!(loaded.settings.server.port, 9100);
    }

    #[test]
    fn unknown_file_keys_warn_but_wrong_types_fail() {
        let Value::Object(map) = serde_json::json!({"slack": {"x": 1}, "memory": {"nope": 1}})
        else {
            unreachable!()
        };
        let loaded = merge(map, Vec::new()).unwrap();
        assert_eq!(loaded.warnings.len(), 2);
        let Value::Object(map) = serde_json::json!({"server": {"port": "80"}}) else {
            unreachable!()
        };
        assert!(matches!(
            merge(map, Vec::new()),
            Err(ConfigError::WrongType { .. })
        ));
        let Value::Object(map) = serde_json::json!({"server": {"port": 80.5}}) else {
            unreachable!()
        };
        assert!(merge(map, Vec::new()).is_err());
    }

    #[test]
    fn env_parsing_follows_default_types() {
        let loaded = merge(
            Map::new(),
            env(&[
                ("KIROCREW_AUTH__LOOPBACK_TRUSTED", "yes"),
                ("KIROCREW_MEMORY__EXTRA_PREFIXES", "team, org"),
                ("KIROCREW_LOG_FORMAT", "json"),
                ("KIROCREW_HOME", "/ignored"),
                ("KIROCREW_SKIP_MODEL_DOWNLOAD", "1"),
            ]),
        )
        .unwrap();
        assert!(loaded.settings.auth.loopback_trusted);
        assert_eq!(loaded.settings.memory.extra_prefixes, vec!["team", "org"]);
        assert_eq!(loaded.settings.log.format, "json");
        assert!(matches!(
            merge(Map::new(), env(&[("KIROCREW_SERVER__PROT", "1")])),
            Err(ConfigError::Env { .. })
        ));
        assert!(matches!(
            merge(Map::new(), env(&[("KIROCREW_SERVER__PORT", "abc")])),
            Err(ConfigError::Env { .. })
        ));
    }

    #[test]
    fn ranges_are_checked() {
        for bad in [
            serde_json::json!({"server": {"bind": "localhost"}}),
            serde_json::json!({"log": {"format": "xml"}}),
            serde_json::json!({"memory": {"confidence_threshold": 1.5}}),
            serde_json::json!({"memory": {"extra_prefixes": ["Bad"]}}),
            serde_json::json!({"server": {"port": 70000}}),
        ] {
            let Value::Object(map) = bad.clone() else {
                unreachable!()
            };
            assert!(merge(map, Vec::new()).is_err(), "{bad}");
        }
    }

    #[test]
    fn set_value_validates_and_writes_atomically() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("config.json");
        std::fs::write(&path, r#"{"slack": {"token_file": "x"}}"#).unwrap();
        assert_eq!(
            set_value(home.path(), "memory.history_idle_hours", "2").unwrap(),
            serde_json::json!(2)
        );
        let before = std::fs::read_to_string(&path).unwrap();
        assert!(before.contains("slack"), "unknown sections are preserved");
        assert!(matches!(
            set_value(home.path(), "memory.nope", "1"),
            Err(ConfigError::UnknownKey(_))
        ));
        assert!(matches!(
            set_value(home.path(), "memory.history_idle_hours", "soon"),
            Err(ConfigError::WrongType { .. })
        ));
        assert!(set_value(home.path(), "memory.history_idle_hours", "-1").is_err());
        assert!(set_value(home.path(), "server", "1").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        let loaded = load(home.path(), Vec::new()).unwrap();
        assert_eq!(loaded.settings.memory.history_idle_hours, 2.0);
    }

    #[test]
    fn malformed_config_file_is_a_clear_error() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.json"), "{not json").unwrap();
        assert!(matches!(
            load(home.path(), Vec::new()),
            Err(ConfigError::Parse { .. })
        ));
        assert!(set_value(home.path(), "server.port", "1").is_err());
        assert_eq!(
            std::fs::read_to_string(home.path().join("config.json")).unwrap(),
            "{not json"
        );
    }
}
