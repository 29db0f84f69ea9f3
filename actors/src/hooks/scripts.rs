//! Script hooks: the `hooks.json` configuration (spec "Script hooks"), read
//! in Claude Code's hook schema so the hook files people already have work
//! unchanged:
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
//!     {"type": "command", "command": "/usr/local/bin/guard.sh", "timeout": 10}]}]}}
//! ```
//!
//! Parsing is tolerant the way real files need (see
//! `shared/corpus/hooks/README.md`): a missing, empty or `*` matcher
//! matches everything; letters/digits/`_`/`-`/space/`,`/`|` only means an
//! exact name or a `|`/`,` list; anything else is an unanchored regular
//! expression. Events without matcher support ignore the matcher.
//! Undocumented keys (`description`, `once`) are ignored; handler types
//! other than `command` (`http`, `prompt`, `agent`, `mcp_tool`) and exec-form
//! `args` are skipped with a warning, as is a group in GitHub Copilot's
//! shape (a bare `command` without a `hooks` list is taken as one handler
//! matching everything, since that is what it means there). Nothing in a
//! malformed entry stops the rest from loading.

use std::time::Duration;

use regex::Regex;
use serde_json::Value;

/// Longest matcher accepted, in chars.
const MAX_MATCHER_CHARS: usize = 1_000;

/// Longest command line accepted, in chars.
const MAX_COMMAND_CHARS: usize = 8_000;

/// Events whose matcher is ignored (Claude Code semantics).
const EVENTS_WITHOUT_MATCHER: &[&str] = &[
    "UserPromptSubmit",
    "PostToolBatch",
    "Stop",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "WorktreeCreate",
    "WorktreeRemove",
    "MessageDisplay",
    "CwdChanged",
];

/// How a matcher group selects what it fires on.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Missing, empty or `*`.
    All,
    /// One or more exact names.
    Exact(Vec<String>),
    /// An unanchored regular expression.
    Regex(Regex),
}

impl Matcher {
    /// Reads a matcher string by the characters it contains.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        if t.is_empty() || t == "*" {
            return Ok(Matcher::All);
        }
        if t.chars().count() > MAX_MATCHER_CHARS {
            return Err(format!(
                "matcher longer than {MAX_MATCHER_CHARS} characters"
            ));
        }
        let plain = t
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
        if plain {
            let names = t
                .split(['|', ','])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            return Ok(Matcher::Exact(names));
        }
        regex::RegexBuilder::new(t)
            .size_limit(1 << 20)
            .build()
            .map(Matcher::Regex)
            .map_err(|e| format!("matcher {t:?} is not a valid regular expression: {e}"))
    }

    /// Whether the matcher fires for `target` (the tool name, session
    /// source, …). A target-less event matches only an all-matcher.
    pub fn matches(&self, target: Option<&str>) -> bool {
        match (self, target) {
            (Matcher::All, _) => true,
            (_, None) => false,
            (Matcher::Exact(names), Some(t)) => names.iter().any(|n| n == t),
            (Matcher::Regex(re), Some(t)) => re.is_match(t),
        }
    }

    /// The matcher as configured, for listings.
    pub fn describe(&self) -> String {
        match self {
            Matcher::All => "*".into(),
            Matcher::Exact(names) => names.join("|"),
            Matcher::Regex(re) => re.as_str().into(),
        }
    }
}

/// One runnable script hook.
#[derive(Debug, Clone)]
pub struct ScriptHook {
    /// The event it runs on (`PreToolUse`, `UserPromptSubmit`, …).
    pub event: String,
    /// What it fires on.
    pub matcher: Matcher,
    /// The shell command line (`/bin/sh -c`).
    pub command: String,
    /// Its time limit.
    pub timeout: Duration,
}

impl ScriptHook {
    /// Whether it runs for `event` with `target`.
    pub fn applies(&self, event: &str, target: Option<&str>) -> bool {
        self.event == event
            && (EVENTS_WITHOUT_MATCHER.contains(&event) || self.matcher.matches(target))
    }
}

/// Time limits for script hooks.
#[derive(Debug, Clone, Copy)]
pub struct TimeoutPolicy {
    /// When a handler names none.
    pub default: Duration,
    /// The most any handler gets (longer values are cut to this with a
    /// warning: `5000` in a real file almost always meant milliseconds).
    pub max: Duration,
}

/// The parsed file: runnable hooks plus why anything was skipped.
#[derive(Debug, Clone, Default)]
pub struct ScriptHookSet {
    /// In file order.
    pub hooks: Vec<ScriptHook>,
    /// One line per skipped or adjusted entry.
    pub warnings: Vec<String>,
}

/// Parses a hooks.json value. Never fails: what cannot be used is skipped
/// with a warning naming where it was.
pub fn parse_hooks_json(value: &Value, policy: TimeoutPolicy) -> ScriptHookSet {
    let mut set = ScriptHookSet::default();
    let Some(events) = value.get("hooks").and_then(Value::as_object) else {
        if !value.is_null() {
            set.warnings
                .push("no \"hooks\" object at the top level; no script hooks loaded".into());
        }
        return set;
    };
    for (event, groups) in events {
        let Some(groups) = groups.as_array() else {
            set.warnings.push(format!(
                "hooks.{event}: not a list of matcher groups; skipped"
            ));
            continue;
        };
        for (gi, group) in groups.iter().enumerate() {
            let at = format!("hooks.{event}[{gi}]");
            parse_group(event, group, &at, policy, &mut set);
        }
    }
    set
}

fn parse_group(
    event: &str,
    group: &Value,
    at: &str,
    policy: TimeoutPolicy,
    set: &mut ScriptHookSet,
) {
    let Some(obj) = group.as_object() else {
        set.warnings.push(format!("{at}: not an object; skipped"));
        return;
    };
    let matcher = match obj.get("matcher") {
        None | Some(Value::Null) => Matcher::All,
        Some(Value::String(s)) => match Matcher::parse(s) {
            Ok(m) => m,
            Err(e) => {
                set.warnings.push(format!("{at}: {e}; skipped"));
                return;
            }
        },
        Some(_) => {
            set.warnings
                .push(format!("{at}: matcher is not a string; skipped"));
            return;
        }
    };
    let handlers: Vec<&Value> = match obj.get("hooks") {
        Some(Value::Array(list)) => list.iter().collect(),
        Some(_) => {
            set.warnings
                .push(format!("{at}: \"hooks\" is not a list; skipped"));
            return;
        }
        // Copilot's flat shape: the group is itself the handler.
        None if obj.contains_key("command") => vec![group],
        None => {
            set.warnings
                .push(format!("{at}: no \"hooks\" list; skipped"));
            return;
        }
    };
    for (hi, handler) in handlers.into_iter().enumerate() {
        let at = format!("{at}.hooks[{hi}]");
        if let Some(hook) = parse_handler(event, &matcher, handler, &at, policy, set) {
            set.hooks.push(hook);
        }
    }
}

fn parse_handler(
    event: &str,
    matcher: &Matcher,
    handler: &Value,
    at: &str,
    policy: TimeoutPolicy,
    set: &mut ScriptHookSet,
) -> Option<ScriptHook> {
    let Some(h) = handler.as_object() else {
        set.warnings.push(format!("{at}: not an object; skipped"));
        return None;
    };
    let kind = h.get("type").and_then(Value::as_str).unwrap_or("command");
    if kind != "command" {
        set.warnings.push(format!(
            "{at}: handler type {kind:?} is not run by kirocrew (only \"command\"); skipped"
        ));
        return None;
    }
    if h.contains_key("args") {
        set.warnings.push(format!(
            "{at}: exec-form \"args\" is not supported (write one shell command line); skipped"
        ));
        return None;
    }
    let command = match h.get("command").and_then(Value::as_str).map(str::trim) {
        Some(c) if !c.is_empty() => c,
        _ => {
            set.warnings
                .push(format!("{at}: no command string; skipped"));
            return None;
        }
    };
    if command.chars().count() > MAX_COMMAND_CHARS || command.contains('\0') {
        set.warnings.push(format!(
            "{at}: command is longer than {MAX_COMMAND_CHARS} characters or holds NUL; skipped"
        ));
        return None;
    }
    let timeout = match h.get("timeout") {
        None | Some(Value::Null) => policy.default,
        Some(v) => match v.as_f64().filter(|s| s.is_finite() && *s > 0.0) {
            Some(secs) if Duration::from_secs_f64(secs) <= policy.max => {
                Duration::from_secs_f64(secs)
            }
            Some(secs) => {
                set.warnings.push(format!(
                    "{at}: timeout {secs} s is over the {} s limit (milliseconds meant?); cut to the limit",
                    policy.max.as_secs()
                ));
                policy.max
            }
            None => {
                set.warnings.push(format!(
                    "{at}: timeout is not a positive number of seconds; the default applies"
                ));
                policy.default
            }
        },
    };
    Some(ScriptHook {
        event: event.to_owned(),
        matcher: matcher.clone(),
        command: command.to_owned(),
        timeout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const POLICY: TimeoutPolicy = TimeoutPolicy {
        default: Duration::from_secs(30),
        max: Duration::from_secs(600),
    };

    #[test]
    fn matcher_shapes() {
        let all = Matcher::parse("").unwrap();
        assert!(all.matches(Some("Bash")) && all.matches(None));
        let exact = Matcher::parse("Edit, Write|Bash").unwrap();
        assert!(exact.matches(Some("Write")) && !exact.matches(Some("NotebookEdit")));
        assert!(!exact.matches(Some("bash")), "case-sensitive");
        let hyphen = Matcher::parse("code-reviewer").unwrap();
        assert!(matches!(hyphen, Matcher::Exact(_)));
        let re = Matcher::parse("Edit.*").unwrap();
        assert!(re.matches(Some("NotebookEdit")), "unanchored");
        let mcp = Matcher::parse("mcp__memory__.*").unwrap();
        assert!(mcp.matches(Some("mcp__memory__search")));
        assert!(!Matcher::parse("mcp__memory")
            .unwrap()
            .matches(Some("mcp__memory__search")));
        assert!(Matcher::parse("(unclosed").is_err());
    }

    #[test]
    fn tolerant_parsing_keeps_what_it_can() {
        let v = json!({
            "description": "plugin",
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [
                        {"type": "command", "command": "/bin/guard", "timeout": 5},
                        {"type": "prompt", "prompt": "is this ok?"},
                        {"type": "command", "command": "x", "args": ["a"]},
                        {"type": "command", "command": "/bin/slow", "timeout": 5000},
                    ]},
                    {"matcher": 3, "hooks": []},
                    {"matcher": "(", "hooks": []},
                    "nonsense",
                ],
                "Stop": [{"matcher": "*", "hooks": [{"type": "command", "command": "/bin/stop", "once": true}]}],
                "SessionStart": {"not": "a list"},
                "Notification": [{"command": "bin/run-hook.sh", "timeout": 15}],
            }
        });
        let set = parse_hooks_json(&v, POLICY);
        // Events come in map order (not guaranteed to be the file's).
        let by_command = |c: &str| set.hooks.iter().find(|h| h.command == c).unwrap();
        let mut commands: Vec<&str> = set.hooks.iter().map(|h| h.command.as_str()).collect();
        commands.sort_unstable();
        assert_eq!(
            commands,
            vec!["/bin/guard", "/bin/slow", "/bin/stop", "bin/run-hook.sh"]
        );
        assert_eq!(by_command("/bin/slow").timeout, Duration::from_secs(600));
        assert_eq!(
            by_command("bin/run-hook.sh").timeout,
            Duration::from_secs(15)
        );
        assert_eq!(by_command("/bin/stop").timeout, Duration::from_secs(30));
        assert_eq!(set.warnings.len(), 7, "{:#?}", set.warnings);
        assert!(by_command("/bin/stop").applies("Stop", None));
        let guard = by_command("/bin/guard");
        assert!(guard.applies("PreToolUse", Some("Bash")));
        assert!(!guard.applies("PreToolUse", Some("Read")));
        assert!(!guard.applies("PostToolUse", Some("Bash")));
    }
}
