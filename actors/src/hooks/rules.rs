//! Config-driven hooks (spec "Hooks (hooks.py)"): the `hooks` section of
//! config.json and the pure evaluation of it.
//!
//! - `auto_approve_tools` / `auto_deny_tools`: tool-name patterns; deny
//!   overrides approve.
//! - `auto_replies`: message pattern → a direct reply (the agent is skipped).
//! - `transforms`: message pattern → a prefix prepended to the message.
//! - `context_rules`: trigger keywords → context injected with the message.
//!
//! Message evaluation order is auto-reply → transform → context rules: an
//! auto-reply ends it (the message never reaches the agent, so there is
//! nothing to transform or enrich).
//!
//! Patterns are the spec's four shapes: `exact`, `prefix*`, `*suffix`,
//! `*contains*` (and `*` alone for everything). Tool names compare
//! case-sensitively, as agents name tools exactly (`Bash` ≠ `bash`);
//! message patterns compare case-insensitively on the trimmed message,
//! since people do not type in a fixed case.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::rule_form::rule_forms;

/// Longest pattern, reply, prefix or context accepted, in chars.
pub const MAX_RULE_TEXT_CHARS: usize = 4_000;

/// Most entries in one rule list.
pub const MAX_RULES: usize = 500;

/// Default time limit of a script hook, in seconds.
pub const DEFAULT_SCRIPT_TIMEOUT_SECS: u64 = 30;

/// The longest time limit any script hook gets, in seconds (Claude Code's
/// own default for command hooks).
pub const MAX_SCRIPT_TIMEOUT_SECS: u64 = 600;

/// Default bytes kept from each of a script's stdout and stderr.
pub const DEFAULT_SCRIPT_OUTPUT_BYTES: usize = 64 * 1024;

/// The `hooks` section of config.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HookRules {
    /// Tool patterns answered `allow` without asking.
    pub auto_approve_tools: Vec<String>,
    /// Tool patterns answered `deny`; beats any approve pattern.
    pub auto_deny_tools: Vec<String>,
    /// Messages answered directly.
    pub auto_replies: Vec<AutoReply>,
    /// Prefixes prepended to matching messages.
    pub transforms: Vec<Transform>,
    /// Context injected when a message mentions a trigger keyword.
    pub context_rules: Vec<ContextRule>,
    /// Time limit of a script hook that names none, in seconds.
    pub script_timeout_secs: u64,
    /// Bytes kept from each of a script's stdout and stderr.
    pub script_max_output_bytes: usize,
    /// Whether script hooks may be installed or changed over the REST API
    /// (`PUT /api/hooks` with `hooks_json`). Off by default: a script hook
    /// runs shell commands as the daemon's user, so installing one is for
    /// the person at the machine (hooks.json, `kirocrew config set`), not
    /// for anyone holding the API token. REST cannot change this key.
    pub remote_scripts: bool,
    /// How strictly script hooks are confined (`required`, `best_effort`,
    /// `off`; see `sandbox.rs`).
    pub sandbox: super::sandbox::SandboxMode,
}

impl Default for HookRules {
    fn default() -> Self {
        Self {
            auto_approve_tools: Vec::new(),
            auto_deny_tools: Vec::new(),
            auto_replies: Vec::new(),
            transforms: Vec::new(),
            context_rules: Vec::new(),
            script_timeout_secs: DEFAULT_SCRIPT_TIMEOUT_SECS,
            script_max_output_bytes: DEFAULT_SCRIPT_OUTPUT_BYTES,
            remote_scripts: false,
            sandbox: super::sandbox::SandboxMode::default(),
        }
    }
}

/// `{pattern, reply}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoReply {
    /// Message pattern.
    pub pattern: String,
    /// The reply sent instead of running the agent.
    pub reply: String,
}

/// `{pattern, prefix}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transform {
    /// Message pattern.
    pub pattern: String,
    /// Text prepended to the message (a newline separates them).
    pub prefix: String,
}

/// `{keywords, context}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextRule {
    /// Words or phrases; any one of them (whole words, any case) fires it.
    pub keywords: Vec<String>,
    /// Text injected with the message.
    pub context: String,
}

/// What the config rules say about one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolVerdict {
    /// An `auto_deny_tools` pattern matched.
    Deny(String),
    /// An `auto_approve_tools` pattern matched (and no deny pattern).
    Allow(String),
    /// No pattern matched.
    NoMatch,
}

/// What the config rules do to one message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageOutcome {
    /// The direct reply, if an auto-reply pattern matched (then nothing
    /// else applies).
    pub auto_reply: Option<String>,
    /// The message as the agent should see it (transformed or not).
    pub text: String,
    /// Context blocks from the rules that fired, in config order.
    pub context: Vec<String>,
    /// The patterns / keywords that fired, for the security log.
    pub matched: Vec<String>,
}

impl HookRules {
    /// Checks sizes and emptiness; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let lists = [
            ("auto_approve_tools", self.auto_approve_tools.len()),
            ("auto_deny_tools", self.auto_deny_tools.len()),
            ("auto_replies", self.auto_replies.len()),
            ("transforms", self.transforms.len()),
            ("context_rules", self.context_rules.len()),
        ];
        if !(1..=MAX_SCRIPT_TIMEOUT_SECS).contains(&self.script_timeout_secs) {
            return Err(format!(
                "hooks.script_timeout_secs: must be between 1 and {MAX_SCRIPT_TIMEOUT_SECS}"
            ));
        }
        if !(1024..=16 * 1024 * 1024).contains(&self.script_max_output_bytes) {
            return Err("hooks.script_max_output_bytes: must be between 1024 and 16777216".into());
        }
        for (name, len) in lists {
            if len > MAX_RULES {
                return Err(format!("hooks.{name}: at most {MAX_RULES} entries"));
            }
        }
        let check = |field: &str, text: &str, may_be_empty: bool| {
            if !may_be_empty && text.trim().is_empty() {
                return Err(format!("hooks.{field}: must not be empty"));
            }
            if text.chars().count() > MAX_RULE_TEXT_CHARS {
                return Err(format!(
                    "hooks.{field}: longer than {MAX_RULE_TEXT_CHARS} characters"
                ));
            }
            if text.contains('\0') {
                return Err(format!("hooks.{field}: contains a NUL character"));
            }
            Ok(())
        };
        for p in &self.auto_approve_tools {
            check("auto_approve_tools", p, false)?;
        }
        for p in &self.auto_deny_tools {
            check("auto_deny_tools", p, false)?;
        }
        for r in &self.auto_replies {
            check("auto_replies.pattern", &r.pattern, false)?;
            check("auto_replies.reply", &r.reply, false)?;
        }
        for t in &self.transforms {
            check("transforms.pattern", &t.pattern, false)?;
            check("transforms.prefix", &t.prefix, false)?;
        }
        for c in &self.context_rules {
            if c.keywords.is_empty() {
                return Err("hooks.context_rules.keywords: needs at least one keyword".into());
            }
            for k in &c.keywords {
                check("context_rules.keywords", k, false)?;
            }
            check("context_rules.context", &c.context, false)?;
        }
        Ok(())
    }

    /// The config verdict for a tool call: deny patterns first, so deny
    /// overrides approve. A pattern matches the tool name or the call's
    /// `Tool(argument)` rule form (see [`rule_forms`]).
    pub fn evaluate_tool(&self, tool_name: &str, input: &Value) -> ToolVerdict {
        let forms = rule_forms(tool_name, input);
        let hits = |p: &String| {
            pattern_matches(p, tool_name, false)
                || forms.iter().any(|f| pattern_matches(p, f, false))
        };
        if let Some(p) = self.auto_deny_tools.iter().find(|p| hits(p)) {
            return ToolVerdict::Deny(p.clone());
        }
        if let Some(p) = self.auto_approve_tools.iter().find(|p| hits(p)) {
            return ToolVerdict::Allow(p.clone());
        }
        ToolVerdict::NoMatch
    }

    /// Applies auto-reply → transform → context rules to a message.
    pub fn evaluate_message(&self, text: &str) -> MessageOutcome {
        let mut out = MessageOutcome {
            text: text.to_owned(),
            ..MessageOutcome::default()
        };
        if let Some(r) = self
            .auto_replies
            .iter()
            .find(|r| pattern_matches(&r.pattern, text, true))
        {
            out.auto_reply = Some(r.reply.clone());
            out.matched.push(format!("auto_reply:{}", r.pattern));
            return out;
        }
        if let Some(t) = self
            .transforms
            .iter()
            .find(|t| pattern_matches(&t.pattern, text, true))
        {
            out.text = format!("{}\n{}", t.prefix, text);
            out.matched.push(format!("transform:{}", t.pattern));
        }
        for rule in &self.context_rules {
            if let Some(k) = rule.keywords.iter().find(|k| mentions(text, k)) {
                if !out.context.contains(&rule.context) {
                    out.context.push(rule.context.clone());
                }
                out.matched.push(format!("context_rule:{k}"));
            }
        }
        out
    }
}

/// The spec's pattern shapes: `*` (anything), `*contains*`, `prefix*`,
/// `*suffix`, or an exact string. Written here rather than with a glob
/// crate because a glob would also give `?`, `[...]` and inner `*` a
/// meaning the reference's patterns do not have.
pub fn pattern_matches(pattern: &str, subject: &str, ignore_case: bool) -> bool {
    let (pattern, subject) = if ignore_case {
        (pattern.trim().to_lowercase(), subject.trim().to_lowercase())
    } else {
        (pattern.trim().to_owned(), subject.to_owned())
    };
    let starts = pattern.starts_with('*');
    let ends = pattern.ends_with('*') && pattern.len() > 1;
    match (starts, ends) {
        _ if pattern == "*" => true,
        (true, true) => subject.contains(&pattern[1..pattern.len() - 1]),
        (true, false) => subject.ends_with(&pattern[1..]),
        (false, true) => subject.starts_with(&pattern[..pattern.len() - 1]),
        (false, false) => subject == pattern,
    }
}

/// Whether `text` mentions `keyword` as whole words, ignoring case.
fn mentions(text: &str, keyword: &str) -> bool {
    let keyword = keyword.trim().to_lowercase();
    if keyword.is_empty() {
        return false;
    }
    let text = text.to_lowercase();
    text.match_indices(&keyword).any(|(at, m)| {
        let before = text[..at].chars().next_back();
        let after = text[at + m.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_table() {
        let cases = [
            ("Bash", "Bash", true),
            ("Bash", "bash", false),
            ("Bash", "BashOutput", false),
            ("mcp__*", "mcp__memory__search", true),
            ("mcp__*", "xmcp__", false),
            ("*_file", "read_file", true),
            ("*_file", "read_files", false),
            ("*secret*", "get_secret_value", true),
            ("*secret*", "secre", false),
            ("*", "anything", true),
            ("**", "anything", true),
        ];
        for (pattern, subject, expected) in cases {
            assert_eq!(
                pattern_matches(pattern, subject, false),
                expected,
                "{pattern} vs {subject}"
            );
        }
        assert!(pattern_matches("HELLO*", "  hello there", true));
    }

    fn rules() -> HookRules {
        HookRules {
            auto_approve_tools: vec!["read_*".into(), "delete_cache".into()],
            auto_deny_tools: vec!["delete_*".into(), "*credentials*".into()],
            auto_replies: vec![AutoReply {
                pattern: "ping".into(),
                reply: "pong".into(),
            }],
            transforms: vec![
                Transform {
                    pattern: "urgent:*".into(),
                    prefix: "[PRIORITY]".into(),
                },
                Transform {
                    pattern: "*".into(),
                    prefix: "[never, the first match wins]".into(),
                },
            ],
            context_rules: vec![
                ContextRule {
                    keywords: vec!["deploy".into(), "release train".into()],
                    context: "Deploys go through CI only.".into(),
                },
                ContextRule {
                    keywords: vec!["ci".into()],
                    context: "Deploys go through CI only.".into(),
                },
            ],
            ..HookRules::default()
        }
    }

    #[test]
    fn deny_overrides_approve() {
        let r = rules();
        assert_eq!(
            r.evaluate_tool("read_file", &Value::Null),
            ToolVerdict::Allow("read_*".into())
        );
        assert_eq!(
            r.evaluate_tool("delete_cache", &Value::Null),
            ToolVerdict::Deny("delete_*".into())
        );
        assert_eq!(
            r.evaluate_tool("read_credentials", &Value::Null),
            ToolVerdict::Deny("*credentials*".into())
        );
        assert_eq!(
            r.evaluate_tool("write_file", &Value::Null),
            ToolVerdict::NoMatch
        );
    }

    #[test]
    fn patterns_also_match_the_claude_code_rule_form() {
        let r = HookRules {
            auto_deny_tools: vec!["*rm -rf*".into(), "*.env)".into()],
            auto_approve_tools: vec!["Bash(git status*".into(), "Bash".into()],
            ..HookRules::default()
        };
        let bash = |c: &str| serde_json::json!({ "command": c });
        assert_eq!(
            r.evaluate_tool("Bash", &bash("rm -rf /")),
            ToolVerdict::Deny("*rm -rf*".into())
        );
        assert_eq!(
            r.evaluate_tool("Bash", &bash("git status")),
            ToolVerdict::Allow("Bash(git status*".into())
        );
        assert_eq!(
            r.evaluate_tool("Edit", &serde_json::json!({"file_path": "/repo/.env"})),
            ToolVerdict::Deny("*.env)".into())
        );
        assert_eq!(
            r.evaluate_tool("Edit", &serde_json::json!({"file_path": "/repo/main.rs"})),
            ToolVerdict::NoMatch
        );
        // Tabs and a program named by its path are the same command.
        assert_eq!(
            r.evaluate_tool("Bash", &bash("rm\t-rf /")),
            ToolVerdict::Deny("*rm -rf*".into())
        );
        let only_prefix = HookRules {
            auto_deny_tools: vec!["Bash(rm*".into()],
            ..HookRules::default()
        };
        assert_eq!(
            only_prefix.evaluate_tool("Bash", &bash("/bin/rm -fr /")),
            ToolVerdict::Deny("Bash(rm*".into())
        );
        assert_eq!(
            only_prefix.evaluate_tool("Bash", &bash("rm -rf /")),
            ToolVerdict::Deny("Bash(rm*".into())
        );
        assert_eq!(
            only_prefix.evaluate_tool("Bash", &bash("ls; rm -rf /")),
            ToolVerdict::NoMatch
        );
    }

    #[test]
    fn auto_reply_ends_evaluation() {
        let out = rules().evaluate_message("  PING ");
        assert_eq!(out.auto_reply.as_deref(), Some("pong"));
        assert!(out.context.is_empty());
        assert_eq!(out.text, "  PING ");
    }

    #[test]
    fn transform_then_context_rules_in_order_without_duplicates() {
        let out = rules().evaluate_message("urgent: deploy via CI now");
        assert_eq!(out.auto_reply, None);
        assert_eq!(out.text, "[PRIORITY]\nurgent: deploy via CI now");
        assert_eq!(out.context, vec!["Deploys go through CI only.".to_owned()]);
        assert_eq!(out.matched.len(), 3, "{:?}", out.matched);
        // Whole words only: "deployment" and "circle" do not fire.
        let quiet = rules().evaluate_message("the deployment circle");
        assert!(quiet.context.is_empty());
        assert_eq!(
            quiet.text,
            "[never, the first match wins]\nthe deployment circle"
        );
    }

    #[test]
    fn validation_names_the_field() {
        let mut r = rules();
        assert!(r.validate().is_ok());
        r.context_rules[0].keywords.clear();
        assert!(r.validate().unwrap_err().contains("context_rules"));
        let mut r = rules();
        r.auto_deny_tools.push("  ".into());
        assert!(r.validate().unwrap_err().contains("auto_deny_tools"));
        let parsed: Result<HookRules, _> =
            serde_json::from_value(serde_json::json!({"auto_replys": []}));
        assert!(parsed.is_err());
    }
}
