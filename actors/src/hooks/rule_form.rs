//! Claude Code's permission-rule form `Tool(argument)`: the subject a tool
//! pattern is matched against besides the bare tool name, so
//! `auto_deny_tools: ["*rm -rf*"]` or `["Bash(rm*"]` catches `rm -rf /` run
//! through `Bash`, and `["*.env)"]` a file tool on a `.env` file (Claude Code's
//! settings use the same shape, so rules can be copied across).

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
    Some(format!("{tool_name}({argument})"))
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
        assert_eq!(rule_form("Bash", &json!({"command": 3})), None);
        assert_eq!(rule_form("Bash", &json!({"command": "  "})), None);
        assert_eq!(
            rule_form("mcp__kirocrew__memory_search", &json!({"query": "x"})),
            None
        );
    }
}
