//! The interactive shell's helpers: tab completion of the commands the
//! daemon's `hello` frame lists (and the stream names after `subscribe`),
//! and the `help` text.

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use serde_json::Value;

/// The commands (`memory search`, `subscribe`, …) a `hello` frame lists.
pub(crate) fn commands_of(hello: &Value) -> Vec<String> {
    let mut commands: Vec<String> = hello["commands"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    commands.retain(|c| c != "auth");
    commands.extend(["help".to_owned(), "exit".to_owned()]);
    commands
}

/// The `help` text.
pub(crate) fn help(completion: Option<&Completion>) -> String {
    let mut text = String::from(
        "Commands are the CLI's, in its syntax (`memory search deploy --limit 5`;\n\
         `<command> --help` shows its options). Streams: `subscribe audit|security|progress`,\n\
         `subscribe log [error|warn|info|debug]`, `unsubscribe <stream>`.\n",
    );
    if let Some(c) = completion {
        text.push_str("\nAvailable: ");
        text.push_str(&c.commands.join(", "));
    }
    text
}

/// Completes the words typed so far against the command list.
pub(crate) struct Completion {
    commands: Vec<String>,
}

impl Completion {
    /// A completer for `commands`.
    pub(crate) fn new(commands: Vec<String>) -> Self {
        Self { commands }
    }

    /// The candidates for a line prefix (pure): whole command names whose
    /// start matches, or stream names after `subscribe`.
    pub(crate) fn candidates(&self, prefix: &str) -> Vec<String> {
        if let Some(rest) = prefix
            .strip_prefix("subscribe ")
            .or_else(|| prefix.strip_prefix("unsubscribe "))
        {
            let head = &prefix[..prefix.len() - rest.len()];
            return ["audit", "security", "progress", "log"]
                .iter()
                .filter(|s| s.starts_with(rest))
                .map(|s| format!("{head}{s}"))
                .collect();
        }
        self.commands
            .iter()
            .filter(|c| c.starts_with(prefix))
            .cloned()
            .collect()
    }
}

impl Completer for Completion {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let prefix = line.get(..pos).unwrap_or(line);
        let found = self
            .candidates(prefix)
            .into_iter()
            .map(|c| Pair {
                display: c.clone(),
                replacement: format!("{c} "),
            })
            .collect();
        Ok((0, found))
    }
}

impl Hinter for Completion {
    type Hint = String;
}

impl Highlighter for Completion {}

impl Validator for Completion {}

impl Helper for Completion {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn completes_commands_and_streams() {
        let c = Completion::new(commands_of(&json!({
            "commands": ["memory list", "memory search", "learn add", "auth", "subscribe"]
        })));
        assert_eq!(c.candidates("memory s"), vec!["memory search"]);
        assert_eq!(c.candidates("mem").len(), 2);
        assert!(c.candidates("au").is_empty(), "auth is not for people");
        assert_eq!(c.candidates("subscribe pr"), vec!["subscribe progress"]);
    }
}
