//! Running a console request's CLI command inside the daemon: the parsed
//! command ([`super::argv`]) goes to the very function the CLI calls, with
//! the daemon's own handles (its store, skills actor, hook runner) and a
//! buffer in place of standard output. So console and CLI print the same
//! text, and every write passes the same owner's writer (validation,
//! screening, audit); the console has no write path of its own.

use std::process::ExitCode;

use serde::Serialize;
use serde_json::Value;

use super::argv::ConsoleCommand;
use super::protocol::ConsoleError;
use crate::app::AppState;
use crate::commands::hooks::HooksCommand;
use crate::commands::CommandError;
use crate::error::ApiError;

/// What a command printed, and how it ended.
#[derive(Debug, Clone, Serialize)]
pub struct CommandOutput {
    /// 0 on success, 1 when the command reported a failure (as the CLI's
    /// exit status).
    pub exit_code: u8,
    /// Everything the command printed.
    pub output: String,
    /// The output read as JSON, when it is JSON (`"json": true` commands).
    pub data: Option<Value>,
}

impl CommandOutput {
    fn new(code: ExitCode, bytes: Vec<u8>) -> Self {
        let output = String::from_utf8_lossy(&bytes).into_owned();
        let data = serde_json::from_str(output.trim()).ok();
        Self {
            exit_code: if code == ExitCode::SUCCESS { 0 } else { 1 },
            output,
            data,
        }
    }
}

/// Runs `command` on the daemon's state.
pub async fn run(state: &AppState, command: ConsoleCommand) -> Result<CommandOutput, ConsoleError> {
    let mut out = Vec::new();
    let result = match command {
        ConsoleCommand::Memory(cmd) => {
            let cap = state.settings.memory.semantic_context_cap;
            let reader = state.safe_reader.for_actor("console");
            crate::commands::memory::execute(&state.store, &reader, cmd, cap, &mut out).await
        }
        ConsoleCommand::Learn(cmd) => {
            crate::commands::learn::run_on_store(&state.store, cmd, &mut out).await
        }
        ConsoleCommand::Skills(cmd) => {
            let reader = state.safe_reader.for_actor("console");
            crate::commands::skills::execute(&state.skills, &reader, cmd, false, &mut out).await
        }
        ConsoleCommand::Hooks(HooksCommand::List { json }) => {
            crate::commands::hooks::list(&state.hooks, json, &mut out).await
        }
        ConsoleCommand::Hooks(HooksCommand::Test {
            event,
            index,
            payload,
            json,
        }) => match crate::commands::hooks::parse_payload(payload.as_deref()) {
            Ok(payload) => {
                let hooks = &state.hooks;
                crate::commands::hooks::test(
                    hooks, "console", &event, index, payload, json, &mut out,
                )
                .await
            }
            Err(e) => Err(e),
        },
        ConsoleCommand::Config(crate::commands::config_cmd::ConfigCommand::Get { key }) => {
            crate::commands::config_cmd::get(&state.home, key.as_deref(), &mut out)
        }
        ConsoleCommand::Doctor(_) => {
            crate::commands::doctor::report(&state.home, Ok(&state.store), &mut out).await
        }
        ConsoleCommand::Embedding(crate::commands::embedding::EmbeddingCommand::Status {
            json,
        }) => match serde_json::to_value(state.embeddings.status().await) {
            Ok(status) => crate::commands::embedding::print_status(&status, json, &mut out),
            Err(e) => Err(CommandError::Json(e)),
        },
        // `argv::parse_command` offers nothing else.
        _ => {
            return Err(ConsoleError::new(
                "command_not_allowed",
                "the console does not run this command",
            ))
        }
    };
    match result {
        Ok(code) => Ok(CommandOutput::new(code, out)),
        Err(e) => Err(describe(e)),
    }
}

/// An actor error as the REST API would word it (same stable code; a
/// server-side cause is logged, not answered); any other failure (the
/// command's own checks, e.g. `--confidence is required`) in its words,
/// as `command_failed`.
fn describe(err: CommandError) -> ConsoleError {
    let api = match err {
        CommandError::Store(e) => ApiError::from(e),
        CommandError::Skills(e) => ApiError::from(e),
        CommandError::Hooks(e) => ApiError::from(e),
        CommandError::Config(e) => ApiError::from_config(e),
        CommandError::Read(e) => ApiError::from(e),
        own @ (CommandError::Usage(_)
        | CommandError::File { .. }
        | CommandError::Output(_)
        | CommandError::Json(_)
        | CommandError::Failed(_)) => {
            return ConsoleError::new("command_failed", own.to_string());
        }
    };
    if api.is_server_error() {
        tracing::error!(code = api.code(), error = %api, "console command failed");
    }
    ConsoleError::new(api.code(), api.public_message(None))
}
