//! `kirocrew config get [KEY]` and `kirocrew config set KEY VALUE`.
//!
//! `set` checks the key exists and the value has its type, then rewrites
//! config.json atomically; a running daemon picks the change up at its next
//! start.

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;

use crate::config;
use crate::home::DataHome;

/// `kirocrew config …`
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective value of KEY (or the whole configuration).
    Get {
        /// Dotted key, e.g. memory.history_idle_hours.
        key: Option<String>,
    },
    /// Set KEY to VALUE in config.json.
    Set {
        /// Dotted key, e.g. memory.history_idle_hours.
        key: String,
        /// The value (JSON for arrays, e.g. '["team"]', or comma-separated).
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
}

/// Runs a config command.
pub(crate) fn run(home: DataHome, cmd: ConfigCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ConfigCommand::Get { key } => {
            return Ok(get(&home, key.as_deref(), &mut std::io::stdout().lock())?);
        }
        ConfigCommand::Set { key, value } => {
            home.ensure()?;
            let stored = config::set_value(home.root(), &key, &value)?;
            println!("{key} = {stored}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `config get [KEY]`: the effective value (secrets redacted), from the
/// configuration on disk and the environment, as the daemon loads it.
pub(crate) fn get(
    home: &DataHome,
    key: Option<&str>,
    out: &mut impl Write,
) -> super::CommandResult {
    let loaded = crate::app::builders::load_config(home)?;
    let shown = config::redacted(&loaded.effective);
    let value = match key {
        Some(key) => config::get_value(&shown, key)?,
        None => &shown,
    };
    match value {
        serde_json::Value::String(s) => writeln!(out, "{s}")?,
        other => writeln!(out, "{}", serde_json::to_string_pretty(other)?)?,
    }
    Ok(ExitCode::SUCCESS)
}
