//! `kirocrew config get [KEY]` and `kirocrew config set KEY VALUE`.
//!
//! `set` checks the key exists and the value has its type, then rewrites
//! config.json atomically; a running daemon picks the change up at its next
//! start.

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
pub(super) fn run(home: DataHome, cmd: ConfigCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ConfigCommand::Get { key } => {
            let loaded = super::load_config(&home)?;
            let shown = config::redacted(&loaded.effective);
            let value = match &key {
                Some(key) => config::get_value(&shown, key)?,
                None => &shown,
            };
            match value {
                serde_json::Value::String(s) => println!("{s}"),
                other => println!("{}", serde_json::to_string_pretty(other)?),
            }
        }
        ConfigCommand::Set { key, value } => {
            home.ensure()?;
            let stored = config::set_value(home.root(), &key, &value)?;
            println!("{key} = {stored}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
