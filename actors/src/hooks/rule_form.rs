//! Claude Code's permission-rule form `Tool(argument)`: the subject a tool
//! pattern is matched against besides the bare tool name, so
//! `auto_deny_tools: ["*rm -rf*"]` or `["Bash(rm*"]` catches `rm -rf /` run
//! through `Bash`, and `["*.env)"]` a file tool on a `.env` file (Claude Code's
//! settings use the same shape, so rules can be copied across).
//!
//! A `Bash` command is matched with its whitespace folded (tabs, newlines
//! and runs of spaces are one space, so `rm\t-rf` is `rm -rf`) and also
//! with its program's directory dropped (`/bin/rm -fr` is also matched as
//! `rm -fr`). Patterns are globs over that text: they do not know a
//! program's flags, so `*rm -rf*` does not match `rm -fr` or `rm -r -f`;
//! deny `Bash(rm *` (or `*rm -*`) to cover every spelling.

use serde_json::Value;

/// The `Tool(argument)` subject of a call, if the tool has an argument the
/// rule form names: the command for `Bash`, the path for file tools, the
/// URL for `WebFetch`. Tools without one are matched by name only.
pub(crate) fn rule_form(tool_name: &str, input: &Value) -> Option<String> {
    let field = match tool_name {
        "Bash" => "command",
        "Read" | "Write" | "Edit" | "MultiEdit" => "file_path",
        "NotebookEdit" | "NotebookRead" => "notebook_path",
        "WebFetch" => "url",
        "Glob" | "Grep" => "path",
        _ => return None,
    };
    let argument = input.get(field)?.as_str()?.trim();
    if argument.is_empty() {
        return None;
    }
    if tool_name == "Bash" {
        let folded = argument.split_whitespace().collect::<Vec<_>>().join(" ");
        return Some(format!("Bash({folded})"));
    }
    Some(format!("{tool_name}({argument})"))
}

/// Every subject a tool pattern is matched against besides the tool name:
/// the rule form, and for a `Bash` command whose program is named by a
/// path, the same command with the program's directory dropped.
pub(crate) fn rule_forms(tool_name: &str, input: &Value) -> Vec<String> {
    let Some(form) = rule_form(tool_name, input) else {
        return Vec::new();
    };
    let program_dropped = form.strip_prefix("Bash(").and_then(|command| {
        let (program, rest) = command.split_once(' ').unwrap_or((command, ""));
        let base = program.rsplit('/').next().filter(|b| !b.is_empty())?;
        (base != program).then(|| {
            format!(
                "Bash({base}{}{rest}",
                if rest.is_empty() { "" } else { " " }
            )
        })
    });
    let mut forms = vec![form];
    forms.extend(program_dropped);
    forms
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_tool_names_its_argument() {
        assert_eq!(
            rule_form("Bash", &json!({"command": "rm -rf /", "description": "x"})).as_deref(),
            Some("Bash(rm -rf /)")
        );
        assert_eq!(
            rule_form("Edit", &json!({"file_path": "/p/.env", "old_string": "a"})).as_deref(),
            Some("Edit(/p/.env)")
        );
        assert_eq!(
            rule_form("WebFetch", &json!({"url": "https://x.test/"})).as_deref(),
            Some("WebFetch(https://x.test/)")
        );
        assert_eq!(rule_form("Bash", &json!({})), None);
        assert_eq!(
            rule_form("Bash", &json!({"command": "rm\t-rf \n /"})).as_deref(),
            Some("Bash(rm -rf /)")
        );
        assert_eq!(
            rule_forms("Bash", &json!({"command": "/bin/rm  -fr /"})),
            vec![
                "Bash(/bin/rm -fr /)".to_owned(),
                "Bash(rm -fr /)".to_owned()
            ]
        );
        assert_eq!(
            rule_forms("Bash", &json!({"command": "/usr/bin/true"})),
            vec!["Bash(/usr/bin/true)".to_owned(), "Bash(true)".to_owned()]
        );
        assert_eq!(rule_form("Bash", &json!({"command": 3})), None);
        assert_eq!(rule_form("Bash", &json!({"command": "  "})), None);
        assert_eq!(
            rule_form("mcp__kirocrew__memory_search", &json!({"query": "x"})),
            None
        );
    }
}
