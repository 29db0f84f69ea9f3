//! `kirocrew console`'s line reading (pure): a typed line — CLI syntax,
//! `memory search deploy --limit 5` — becomes a console request `{cmd,
//! args}` through the CLI's own clap definition, so the shell accepts
//! exactly the CLI's words and prints clap's own help and errors.

use clap::parser::ValueSource;
use clap::{ArgAction, CommandFactory};
use serde_json::{json, Map, Value};

use super::args::Cli;

/// Splits a line into words: whitespace separates, single and double
/// quotes group, a backslash escapes the next character (outside single
/// quotes).
pub(crate) fn split_line(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), c) => word.push(c),
            (_, '\\') => match chars.next() {
                Some(next) => {
                    word.push(next);
                    in_word = true;
                }
                None => return Err("the line ends with a lone backslash".into()),
            },
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err("a quote is not closed".into());
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// A request to send, or text to show instead (help, a usage error).
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// Send `{cmd, args}`.
    Request(String, Value),
    /// Show this (clap's help or error), send nothing.
    Show(String),
}

/// Reads `words` as a console request: `subscribe STREAM [LEVEL]`,
/// `unsubscribe STREAM`, or a CLI command parsed by the CLI's parser.
pub(crate) fn to_request(words: &[String]) -> Line {
    match words.first().map(String::as_str) {
        Some("subscribe") => {
            let mut args = json!({"stream": words.get(1).cloned().unwrap_or_default()});
            if let Some(level) = words.get(2) {
                args["level"] = json!(level);
            }
            return Line::Request("subscribe".into(), args);
        }
        Some("unsubscribe") => {
            let args = json!({"stream": words.get(1).cloned().unwrap_or_default()});
            return Line::Request("unsubscribe".into(), args);
        }
        _ => {}
    }
    let root = Cli::command();
    let argv = std::iter::once("kirocrew".to_owned()).chain(words.iter().cloned());
    let matches = match root.clone().try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => return Line::Show(e.render().to_string()),
    };
    let mut cmd_words = Vec::new();
    let mut spec = &root;
    let mut m = &matches;
    while let Some((name, sub)) = m.subcommand() {
        cmd_words.push(name.to_owned());
        let Some(next) = spec.find_subcommand(name) else {
            break;
        };
        spec = next;
        m = sub;
    }
    let mut args = Map::new();
    for arg in spec.get_arguments() {
        let id = arg.get_id().as_str();
        if m.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let value = match arg.get_action() {
            ArgAction::SetTrue => json!(true),
            ArgAction::SetFalse => json!(false),
            action => {
                let raw: Vec<String> = m
                    .get_raw(id)
                    .map(|vals| vals.map(|v| v.to_string_lossy().into_owned()).collect())
                    .unwrap_or_default();
                match (action, raw.as_slice()) {
                    (ArgAction::Append, _) => json!(raw),
                    (_, [one]) => json!(one),
                    _ => json!(raw),
                }
            }
        };
        args.insert(id.to_owned(), value);
    }
    Line::Request(cmd_words.join(" "), Value::Object(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        split_line(line).unwrap()
    }

    #[test]
    fn quotes_and_escapes_group_words() {
        assert_eq!(
            words(r#"learn add "always run tests" --category tool"#),
            vec!["learn", "add", "always run tests", "--category", "tool"]
        );
        assert_eq!(words(r"a\ b 'c d' '' x"), vec!["a b", "c d", "", "x"]);
        assert!(split_line("say \"hi").is_err());
        assert!(split_line("oops\\").is_err());
    }

    #[test]
    fn cli_words_become_console_args_by_name() {
        let line = to_request(&words("memory search deploy --limit 5 --json"));
        assert_eq!(
            line,
            Line::Request(
                "memory search".into(),
                json!({"query": "deploy", "limit": "5", "json": true})
            )
        );
        let line = to_request(&words("skills edit x --trigger a --trigger b"));
        assert_eq!(
            line,
            Line::Request(
                "skills edit".into(),
                json!({"name": "x", "triggers": ["a", "b"]})
            )
        );
    }

    #[test]
    fn help_and_usage_errors_are_shown_not_sent() {
        assert!(
            matches!(to_request(&words("memory search --help")), Line::Show(t) if t.contains("Usage"))
        );
        assert!(matches!(to_request(&words("memory nope")), Line::Show(_)));
        assert_eq!(
            to_request(&words("subscribe log debug")),
            Line::Request(
                "subscribe".into(),
                json!({"stream": "log", "level": "debug"})
            )
        );
    }
}
