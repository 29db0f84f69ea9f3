//! From a console request to the CLI's own parsed command: `{"cmd":
//! "memory search", "args": {"query": "deploy", "limit": 5}}` becomes the
//! argument list `kirocrew memory search --limit=5 -- deploy`, which
//! [`ConsoleCli`] then reads. Its groups are the very argument types the
//! CLI embeds ([`crate::commands`]), so the console has exactly the CLI's
//! options, names, defaults and validation, and a new CLI option is a
//! console option too. The CLI's tests check that every CLI command is
//! either in [`ConsoleCommand`] or named in [`CLI_ONLY`].
//!
//! Only the commands in [`COMMANDS`] are offered: those that read, or
//! write through the owners' writers. Commands that read or write files on
//! the daemon's machine by path (`memory import|export`, `skills new
//! --from`), start processes for the operator (`skills edit` in
//! `$EDITOR`), or run the daemon itself are refused with
//! `command_not_allowed`.

use clap::{ArgAction, CommandFactory, Parser, Subcommand};
use serde_json::{Map, Value};

use super::protocol::ConsoleError;
use crate::commands::{config_cmd, doctor, embedding, hooks, learn, memory, skills};

/// The console's grammar: the CLI's shared command groups.
#[derive(Debug, Parser)]
#[command(name = "kirocrew")]
pub struct ConsoleCli {
    /// What to do.
    #[command(subcommand)]
    pub command: ConsoleCommand,
}

/// The command groups the console shares with the CLI (the same types).
#[derive(Debug, Subcommand)]
pub enum ConsoleCommand {
    /// Inspect and manage long-term memory.
    #[command(subcommand)]
    Memory(memory::MemoryCommand),
    /// Read configuration.
    #[command(subcommand)]
    Config(config_cmd::ConfigCommand),
    /// Check the installation and the data home.
    Doctor(doctor::DoctorArgs),
    /// Teach, list and remove lessons.
    #[command(subcommand)]
    Learn(learn::LearnCommand),
    /// Skills.
    #[command(subcommand)]
    Skills(skills::SkillsCommand),
    /// Show and test hooks.
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    /// The embedding model.
    #[command(subcommand)]
    Embedding(embedding::EmbeddingCommand),
}

/// The CLI's top-level commands the console never runs (they run the
/// daemon, start processes, read files by path or talk to a daemon from
/// outside): answered `command_not_allowed`, not `unknown_command`.
pub const CLI_ONLY: &[&str] = &[
    "serve",
    "context",
    "console",
    "bench",
    "hook",
    "install",
    "uninstall",
    "mcp",
    "consolidation",
    "security",
    "probe-cpu-module",
];

/// The CLI commands the console runs.
pub const COMMANDS: &[&str] = &[
    "memory list",
    "memory search",
    "memory stats",
    "memory audit",
    "memory set",
    "memory delete",
    "memory quarantine list",
    "memory quarantine release",
    "memory quarantine drop",
    "learn add",
    "learn list",
    "learn remove",
    "skills list",
    "skills show",
    "skills search",
    "skills budget",
    "skills new",
    "skills edit",
    "skills remove",
    "hooks list",
    "hooks test",
    "config get",
    "doctor",
    "embedding status",
];

/// Options refused even on an allowed command, with why.
const REFUSED_OPTIONS: &[(&str, &str, &str)] = &[
    (
        "memory search",
        "files",
        "search the memory files with the REST API (GET /api/memory/search)",
    ),
    (
        "skills new",
        "from",
        "it reads a file on the daemon's machine; send the content with POST /api/skills",
    ),
    (
        "skills edit",
        "body_from",
        "it reads a file on the daemon's machine",
    ),
    ("doctor", "backends_dir", "a packaging aid for the CLI"),
];

/// Parses `cmd` and `args` as the CLI would parse the same words.
pub fn parse_command(cmd: &str, args: &Map<String, Value>) -> Result<ConsoleCommand, ConsoleError> {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let joined = words.join(" ");
    if words.first().is_some_and(|w| CLI_ONLY.contains(w)) {
        return Err(not_offered(&joined));
    }
    let root = ConsoleCli::command();
    let mut spec = &root;
    for word in &words {
        spec = spec
            .find_subcommand(word)
            .ok_or_else(|| unknown_command(&joined))?;
    }
    if words.is_empty() || spec.has_subcommands() {
        return Err(unknown_command(&joined));
    }
    if !COMMANDS.contains(&joined.as_str()) {
        return Err(not_offered(&joined));
    }
    let mut argv: Vec<String> = vec!["kirocrew".into()];
    argv.extend(words.iter().map(|w| (*w).to_owned()));
    let mut positionals: Vec<(usize, Vec<String>)> = Vec::new();
    for (name, value) in args {
        let id = name.replace('-', "_");
        if let Some((_, _, why)) = REFUSED_OPTIONS
            .iter()
            .find(|(c, o, _)| *c == joined && *o == id)
        {
            return Err(ConsoleError::new(
                "option_not_allowed",
                format!("`{name}` is not offered on the console: {why}"),
            ));
        }
        let arg = spec
            .get_arguments()
            .find(|a| a.get_id().as_str() == id)
            .ok_or_else(|| unknown_argument(&joined, name, spec))?;
        if arg.is_positional() {
            // The command's declared order, never the JSON object's (whose
            // key order depends on serde_json's `preserve_order` feature);
            // clap's `get_index` is only set for an explicit `index`.
            let order = spec
                .get_positionals()
                .position(|p| p.get_id() == arg.get_id())
                .unwrap_or(usize::MAX);
            positionals.push((order, values(name, value)?));
            continue;
        }
        let long = arg.get_long().unwrap_or(arg.get_id().as_str());
        match arg.get_action() {
            ArgAction::SetTrue => match value {
                Value::Bool(true) => argv.push(format!("--{long}")),
                Value::Bool(false) | Value::Null => {}
                _ => {
                    return Err(ConsoleError::new(
                        "invalid_argument",
                        format!("`{name}` is a flag: true or false"),
                    ))
                }
            },
            ArgAction::Append => {
                for v in values(name, value)? {
                    argv.push(format!("--{long}={v}"));
                }
            }
            _ => argv.push(format!("--{long}={}", scalar(name, value)?)),
        }
    }
    if !positionals.is_empty() {
        positionals.sort_by_key(|(index, _)| *index);
        // After `--` a value is never read as an option, whatever it starts
        // with.
        argv.push("--".into());
        argv.extend(positionals.into_iter().flat_map(|(_, v)| v));
    }
    ConsoleCli::try_parse_from(argv)
        .map(|cli| cli.command)
        .map_err(|e| ConsoleError::new("invalid_argument", clap_message(&e.to_string())))
}

fn not_offered(joined: &str) -> ConsoleError {
    ConsoleError::new(
        "command_not_allowed",
        format!(
            "`{joined}` is a CLI command the console does not run; run it with the kirocrew CLI"
        ),
    )
}

/// The first line of a clap error, without its `error: ` prefix and the
/// usage lines (which name CLI syntax, not console args).
fn clap_message(text: &str) -> String {
    let first = text.lines().next().unwrap_or(text);
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}

fn unknown_command(cmd: &str) -> ConsoleError {
    ConsoleError::new(
        "unknown_command",
        format!(
            "unknown command {cmd:?}; the commands are: {}",
            COMMANDS.join(", ")
        ),
    )
}

fn unknown_argument(cmd: &str, name: &str, spec: &clap::Command) -> ConsoleError {
    let known: Vec<&str> = spec.get_arguments().map(|a| a.get_id().as_str()).collect();
    ConsoleError::new(
        "unknown_argument",
        format!(
            "`{cmd}` has no argument {name:?}; it takes: {}",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        ),
    )
}

fn values(name: &str, value: &Value) -> Result<Vec<String>, ConsoleError> {
    match value {
        Value::Array(items) => items.iter().map(|v| scalar(name, v)).collect(),
        other => Ok(vec![scalar(name, other)?]),
    }
}

/// One argument value as command-line text; objects (e.g. `hooks test`'s
/// `payload`) as their JSON.
fn scalar(name: &str, value: &Value) -> Result<String, ConsoleError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Null => Err(ConsoleError::new(
            "invalid_argument",
            format!("`{name}` needs a value"),
        )),
        Value::Object(_) | Value::Array(_) => Ok(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::memory::MemoryCommand;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn options_by_name_become_the_cli_command() {
        let c = parse_command(
            "memory search",
            &args(json!({"query": "deploy", "limit": 5})),
        )
        .unwrap();
        let ConsoleCommand::Memory(MemoryCommand::Search {
            query,
            limit,
            json,
            episodic,
            ..
        }) = c
        else {
            panic!("{c:?}")
        };
        assert_eq!(
            (query.as_str(), limit, json, episodic),
            ("deploy", 5, false, false)
        );
    }

    #[test]
    fn positionals_keep_their_order_and_may_start_with_a_dash() {
        let c =
            parse_command("memory set", &args(json!({"value": "-1", "key": "pref.x"}))).unwrap();
        let ConsoleCommand::Memory(MemoryCommand::Set { key, value, .. }) = c else {
            panic!("{c:?}")
        };
        assert_eq!((key.as_str(), value.as_str()), ("pref.x", "-1"));
    }

    #[test]
    fn flags_take_booleans_and_the_cli_defaults_apply() {
        let c = parse_command("memory list", &args(json!({"json": true}))).unwrap();
        let ConsoleCommand::Memory(MemoryCommand::List { json, limit, .. }) = c else {
            panic!("{c:?}")
        };
        assert!(json);
        assert_eq!(limit, 100);
        let e = parse_command("memory list", &args(json!({"json": "yes"}))).unwrap_err();
        assert_eq!(e.code, "invalid_argument");
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse_command("memory fly", &Map::new()).unwrap_err();
        assert_eq!(e.code, "unknown_command");
        let e = parse_command("memory", &Map::new()).unwrap_err();
        assert_eq!(e.code, "unknown_command");
        let e = parse_command("serve", &Map::new()).unwrap_err();
        assert_eq!(e.code, "command_not_allowed");
        let e = parse_command("memory import", &args(json!({"file": "/etc/passwd"}))).unwrap_err();
        assert_eq!(e.code, "command_not_allowed");
        let e = parse_command("memory list", &args(json!({"colour": 1}))).unwrap_err();
        assert_eq!(e.code, "unknown_argument");
        assert!(e.message.contains("prefix"), "{}", e.message);
        let e = parse_command("memory list", &args(json!({"home": "/tmp"}))).unwrap_err();
        assert_eq!(e.code, "unknown_argument");
        let e = parse_command("memory search", &Map::new()).unwrap_err();
        assert_eq!(e.code, "invalid_argument");
        assert!(!e.message.contains("Usage"), "{}", e.message);
        let e = parse_command("memory list", &args(json!({"limit": "many"}))).unwrap_err();
        assert_eq!(e.code, "invalid_argument");
        let e = parse_command("memory search", &args(json!({"query": "x", "files": true})))
            .unwrap_err();
        assert_eq!(e.code, "option_not_allowed");
    }

    #[test]
    fn every_offered_command_exists_in_the_grammar() {
        let root = ConsoleCli::command();
        for cmd in COMMANDS {
            let mut spec = &root;
            for word in cmd.split(' ') {
                spec = spec
                    .find_subcommand(word)
                    .unwrap_or_else(|| panic!("{cmd}"));
            }
        }
    }
}
