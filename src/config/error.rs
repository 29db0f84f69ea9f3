//! Configuration errors.

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
