//! `kirocrew hooks list|test`: the hook configuration of this data home,
//! read through the same runner the daemon uses (config.json `hooks` and
//! hooks.json), and one script hook run on demand with a sample event.
//! The commands are functions writing to any `Write`, so the operator
//! console runs exactly these.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use serde_json::Value;

use super::{CommandError, CommandResult};
use crate::home::DataHome;
use kirocrew_actors::hooks::{HookRunnerHandle, ScriptReport};

/// `kirocrew hooks …`
#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Show the config rules and the script hooks (with any warnings).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run one script hook once with a sample event.
    Test {
        /// The event (`PreToolUse`, `UserPromptSubmit`, …).
        event: String,
        /// Which of that event's hooks (see `hooks list`).
        #[arg(long, default_value_t = 0)]
        index: usize,
        /// The event JSON to send instead of the sample.
        #[arg(long, value_name = "JSON")]
        payload: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a hooks command.
pub(crate) fn run(home: DataHome, cmd: HooksCommand) -> anyhow::Result<ExitCode> {
    let loaded = crate::app::builders::load_config(&home)?;
    crate::telemetry::init(false, "warn");
    actix_rt::System::new().block_on(async move {
        // A test run is a security event, as in the daemon.
        let log = crate::app::builders::start_security_log(&home, &loaded.settings);
        let rules = loaded.settings.hooks.clone();
        let runner = crate::app::builders::start_hook_runner(&home, rules, Some(log.clone()));
        let mut out = std::io::stdout().lock();
        let result = match cmd {
            HooksCommand::List { json } => Ok(list(&runner, json, &mut out).await?),
            HooksCommand::Test {
                event,
                index,
                payload,
                json,
            } => {
                let payload = parse_payload(payload.as_deref())?;
                Ok(test(&runner, "cli", &event, index, payload, json, &mut out).await?)
            }
        };
        log.flush().await.context("writing the security log")?;
        result
    })
}

/// `hooks list`.
pub(crate) async fn list(
    runner: &HookRunnerHandle,
    json: bool,
    out: &mut impl Write,
) -> CommandResult {
    let (listing, _) = runner.list().await?;
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&listing)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let r = &listing.rules;
    writeln!(out, "config rules (config.json \"hooks\"):")?;
    writeln!(out, "  auto_deny_tools:    {}", join(&r.auto_deny_tools))?;
    writeln!(out, "  auto_approve_tools: {}", join(&r.auto_approve_tools))?;
    for a in &r.auto_replies {
        writeln!(out, "  auto_reply  {:?} -> {:?}", a.pattern, a.reply)?;
    }
    for t in &r.transforms {
        writeln!(
            out,
            "  transform   {:?} -> prefix {:?}",
            t.pattern, t.prefix
        )?;
    }
    for c in &r.context_rules {
        writeln!(
            out,
            "  context     {} -> {:?}",
            c.keywords.join(", "),
            c.context
        )?;
    }
    writeln!(out, "script hooks (hooks.json):")?;
    if listing.scripts.is_empty() {
        writeln!(out, "  none")?;
    }
    for s in &listing.scripts {
        writeln!(
            out,
            "  {}#{}  matcher {:?}  timeout {}s  {}",
            s.event, s.index, s.matcher, s.timeout_secs, s.command
        )?;
    }
    for w in listing.warnings.iter().chain(&listing.load_errors) {
        writeln!(out, "warning: {w}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A `--payload` argument: JSON, or a usage error saying so.
pub(crate) fn parse_payload(payload: Option<&str>) -> Result<Option<Value>, CommandError> {
    payload
        .map(serde_json::from_str::<Value>)
        .transpose()
        .map_err(|e| CommandError::Usage(format!("--payload is not JSON: {e}")))
}

fn join(list: &[String]) -> String {
    if list.is_empty() {
        "(none)".into()
    } else {
        list.join(", ")
    }
}

/// `hooks test`.
pub(crate) async fn test(
    runner: &HookRunnerHandle,
    actor: &str,
    event: &str,
    index: usize,
    payload: Option<Value>,
    json: bool,
    out: &mut impl Write,
) -> CommandResult {
    let report = runner.test_hook(event, index, payload, actor).await?;
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_report(&report, out)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(r: &ScriptReport, out: &mut impl Write) -> std::io::Result<()> {
    let o = &r.outcome;
    writeln!(out, "command:  {}", r.command)?;
    let ended = match (o.timed_out, o.exit_code, o.signal, &o.spawn_error) {
        (_, _, _, Some(e)) => format!("could not start: {e}"),
        (true, ..) => "timed out (killed)".into(),
        (_, Some(code), ..) => format!("exit {code}"),
        (_, None, Some(sig), _) => format!("signal {sig}"),
        _ => "unknown".into(),
    };
    writeln!(out, "ended:    {ended} after {} ms", o.duration_ms)?;
    let v = &r.verdict;
    let decision = match (v.permission, v.block) {
        (Some(p), _) => format!("{p:?}").to_lowercase(),
        (None, true) => "block".into(),
        (None, false) => "none".into(),
    };
    writeln!(out, "decision: {decision}")?;
    for (label, text) in [
        ("reason", &v.reason),
        ("context", &v.context),
        ("error", &v.error),
    ] {
        if let Some(t) = text {
            writeln!(out, "{label}:{}{t}", " ".repeat(9 - label.len()))?;
        }
    }
    if !o.stdout.is_empty() {
        writeln!(out, "stdout:\n{}", o.stdout.trim_end())?;
    }
    if !o.stderr.is_empty() {
        writeln!(out, "stderr:\n{}", o.stderr.trim_end())?;
    }
    if o.output_truncated {
        writeln!(out, "(output truncated)")?;
    }
    Ok(())
}
