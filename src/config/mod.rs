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

use std::path::Path;

use serde_json::{Map, Value};

/// Every key with its default, compiled in.
pub const DEFAULTS_JSON: &str = include_str!("../../config/defaults.json");

/// Reference environment names that map onto config keys.
pub const ENV_ALIASES: &[(&str, &str)] = &[
    ("KIROCREW_LOG_FORMAT", "log.format"),
    ("KIROCREW_LLM_BASE_URL", "consolidation.llm_base_url"),
    ("KIROCREW_LLM_MODEL", "consolidation.llm_model"),
    ("KIROCREW_LLM_API_KEY", "consolidation.llm_api_key"),
    ("KIROCREW_CHAT_MODEL_PATH", "consolidation.chat_model_path"),
    ("KIROCREW_CHAT_MODEL_URL", "consolidation.chat_model_url"),
    (
        "KIROCREW_CHAT_MODEL_SHA256",
        "consolidation.chat_model_sha256",
    ),
];

mod error;
mod integrations;
mod settings;
#[cfg(test)]
mod tests;

pub use error::ConfigError;
pub use integrations::{ClaudeCodeSettings, CLAUDE_CODE_INLINE_CHARS};
pub use settings::{
    AuthSettings, ChannelSettings, ConsolidationConfig, LogSettings, MemorySettings,
    SecuritySettings, ServerSettings, Settings, SkillsSettings,
};

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

/// Keys whose value is a structure (lists of objects, maps of hook lists)
/// rather than a scalar or a list of strings: taken as written and checked
/// by the typed settings, which name the failing field.
const STRUCTURED_KEYS: &[&str] = &[
    "hooks.auto_replies",
    "hooks.transforms",
    "hooks.context_rules",
    "agent.kiro_hooks",
    "context.model_windows",
];

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

/// The built-in defaults alone (no file, no environment): what a check
/// that must run on a broken config (`kirocrew doctor`) falls back to.
pub fn default_settings() -> Result<Settings, ConfigError> {
    merge(Map::new(), Vec::<(String, String)>::new()).map(|c| c.settings)
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
        let value = parse_key_raw(&key, default, &raw).map_err(|reason| ConfigError::Env {
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
        if STRUCTURED_KEYS.contains(&key.as_str()) {
            set_path(effective, &key, value.clone());
            continue;
        }
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

/// Parses a raw value for `key`: JSON for a structured key, else by the
/// default's type.
fn parse_key_raw(key: &str, default: &Value, raw: &str) -> Result<Value, String> {
    if STRUCTURED_KEYS.contains(&key) {
        return serde_json::from_str(raw.trim()).map_err(|e| format!("{raw:?} is not JSON: {e}"));
    }
    parse_raw(default, raw)
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

/// `value` with every non-empty secret (a key whose name contains
/// `api_key` or `token`) replaced by `"[redacted]"`, for printing: a
/// terminal or a console transcript is not where a credential belongs (it
/// stays readable in config.json or the environment that set it).
pub fn redacted(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let secret = (k.contains("api_key") || k.contains("token"))
                        && v.as_str().is_some_and(|s| !s.is_empty());
                    let shown = if secret {
                        Value::String("[redacted]".into())
                    } else {
                        redacted(v)
                    };
                    (k.clone(), shown)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The compiled-in default of `key`, if it is a config key.
pub fn default_value(key: &str) -> Option<Value> {
    lookup(&defaults(), key).cloned()
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
    if default.is_object() && !STRUCTURED_KEYS.contains(&key) {
        return Err(ConfigError::UnknownKey(format!(
            "{key} (a section, not a key)"
        )));
    }
    let value = parse_key_raw(key, default, raw).map_err(|reason| ConfigError::WrongType {
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

/// Replaces the whole section `section` of `$home/config.json` with
/// `value` (an object), after checking the resulting file loads. The file
/// is replaced atomically; on any error it is left untouched.
pub fn set_section(home: &Path, section: &str, value: Value) -> Result<(), ConfigError> {
    let defaults = defaults();
    if !lookup(&defaults, section).is_some_and(Value::is_object) || section.contains('.') {
        return Err(ConfigError::UnknownKey(format!(
            "{section} (not a section)"
        )));
    }
    if !value.is_object() {
        return Err(ConfigError::WrongType {
            key: section.to_owned(),
            expected: "an object",
            got: value.to_string(),
        });
    }
    let path = home.join("config.json");
    let mut file = read_config_file(&path)?;
    file.insert(section.to_owned(), value);
    let loaded = merge(file.clone(), std::iter::empty())?;
    if let Some(unknown) = loaded
        .warnings
        .iter()
        .find(|w| w.contains(&format!("\"{section}.")))
    {
        return Err(ConfigError::UnknownKey(unknown.clone()));
    }
    write_atomically(&path, &Value::Object(file))
}

fn write_atomically(path: &Path, doc: &Value) -> Result<(), ConfigError> {
    let io_err = |source| ConfigError::Io {
        path: path.display().to_string(),
        source,
    };
    let text = serde_json::to_string_pretty(doc).unwrap_or_default() + "\n";
    kirocrew_actors::atomic_file::write_atomic(path, text.as_bytes()).map_err(io_err)
}
