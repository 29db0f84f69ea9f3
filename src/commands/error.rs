//! What a shared operator command can fail with, typed, so each face words
//! it its own way without guessing: the CLI prints it and exits non-zero
//! (through `anyhow` at the program's edge), the operator console maps the
//! actors' errors to the REST API's stable codes with one exhaustive match
//! (`console::commands`) instead of downcasting an `anyhow::Error`.

use std::fmt::Display;

use kirocrew_actors::hooks::HookError;
use kirocrew_actors::sensitive_paths::SafeReadError;
use kirocrew_actors::skills::SkillError;
use kirocrew_actors::vector_store::VectorStoreError;

use crate::config::ConfigError;

/// A shared command's failure.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The memory store refused or failed.
    #[error(transparent)]
    Store(#[from] VectorStoreError),
    /// The skills actor refused or failed.
    #[error(transparent)]
    Skills(#[from] SkillError),
    /// The hook runner refused or failed.
    #[error(transparent)]
    Hooks(#[from] HookError),
    /// The configuration could not be read, or a key does not exist.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The command's own check of what it was given (in the CLI's words,
    /// e.g. `--confidence is required`).
    #[error("{0}")]
    Usage(String),
    /// A file the command was asked to read, refused by the sensitive-path
    /// policy (recorded as `read_denied`) or unreadable.
    #[error(transparent)]
    Read(#[from] SafeReadError),
    /// A file the command was asked to write, or its own scratch file.
    #[error("{what}: {source}")]
    File {
        /// What was being done, naming the file.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Writing the command's output failed (a closed pipe or stream).
    #[error("writing the output: {0}")]
    Output(#[from] std::io::Error),
    /// A value could not be rendered as JSON.
    #[error("rendering JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Any other failure the command reports in words (an editor that
    /// exited non-zero, a refused toggle, a check that could not run).
    #[error("{0}")]
    Failed(String),
}

impl CommandError {
    /// A mapper for a file operation's error: `what` says what was being
    /// done (`reading /x`), so the message names the file.
    pub fn file(what: impl Display) -> impl FnOnce(std::io::Error) -> Self {
        move |source| Self::File {
            what: what.to_string(),
            source,
        }
    }
}

/// What a shared command answers: its exit status, or why it failed.
pub type CommandResult = Result<std::process::ExitCode, CommandError>;
