//! `kirocrew hook claude-code`: the command Claude Code runs for its hook
//! events (see [`crate::claude_code`]). Reads one event on stdin, answers
//! on stdout, exits 0 — also when the daemon is down (one warning on
//! stderr), because a missing memory must never stop the agent. Unreadable
//! input exits 1, which Claude Code reports as a non-blocking hook error.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;

use crate::claude_code::event::MAX_INPUT_BYTES;
use crate::claude_code::{handle_event, parse_event, HookOutcome};
use crate::config::Settings;
use crate::daemon_client::Daemon;
use crate::home::DataHome;
use kirocrew_actors::security_log::{SecurityEvent, SecurityLogError};

/// `kirocrew hook …`.
#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Answer one Claude Code hook event (JSON on stdin, answer on stdout).
    ClaudeCode,
}

/// Runs the adapter with the process's stdin, stdout and stderr.
pub(crate) fn run(home: DataHome, cmd: HookCommand) -> anyhow::Result<ExitCode> {
    let HookCommand::ClaudeCode = cmd;
    let mut input = String::new();
    let read = std::io::stdin()
        .take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_string(&mut input);
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    if let Err(e) = read {
        writeln!(stderr, "kirocrew hook claude-code: cannot read stdin: {e}")?;
        return Ok(ExitCode::FAILURE);
    }
    Ok(claude_code(&home, &input, &mut stdout, &mut stderr)?)
}

/// The adapter on given streams (the CLI's stdio, or a test's buffers).
pub(crate) fn claude_code(
    home: &DataHome,
    input: &str,
    out: &mut impl Write,
    err: &mut impl Write,
) -> std::io::Result<ExitCode> {
    if input.len() > MAX_INPUT_BYTES {
        writeln!(
            err,
            "kirocrew hook claude-code: hook input is larger than {MAX_INPUT_BYTES} bytes"
        )?;
        return Ok(ExitCode::FAILURE);
    }
    let event = match parse_event(input) {
        Ok(event) => event,
        Err(e) => {
            writeln!(err, "kirocrew hook claude-code: {e}")?;
            return Ok(ExitCode::FAILURE);
        }
    };
    let settings = match crate::config::load(home.root(), std::env::vars()) {
        Ok(loaded) => loaded.settings,
        Err(e) => {
            writeln!(err, "kirocrew hook claude-code: configuration: {e}")?;
            return Ok(ExitCode::FAILURE);
        }
    };
    let daemon = Daemon::discover(home, Duration::from_secs(settings.claude_code.timeout_secs));
    let HookOutcome {
        stdout,
        warning,
        denied,
    } = handle_event(
        &event,
        daemon.as_ref(),
        &settings.claude_code,
        &home.sensitive_paths(),
    );
    if let Some(event) = denied {
        if let Err(e) = record(home, &settings, event) {
            writeln!(err, "kirocrew: the read_denied event was not recorded: {e}")?;
        }
    }
    if let Some(answer) = stdout {
        writeln!(out, "{answer}")?;
    }
    if let Some(warning) = warning {
        writeln!(err, "{warning}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Records a refusal in the data home's security log (this process runs no
/// actors: a one-shot log, flushed before the adapter answers). The refusal
/// stands whether or not it could be recorded.
fn record(
    home: &DataHome,
    settings: &Settings,
    event: SecurityEvent,
) -> Result<(), SecurityLogError> {
    actix_rt::System::new().block_on(async {
        let log = crate::app::builders::start_security_log(home, settings);
        log.record(event).await?;
        log.flush().await
    })
}
