//! What the adapter prints: the JSON shapes of Claude Code's hook reference.
//! `hookSpecificOutput` always names its `hookEventName`; a prompt is
//! refused with the top-level `decision: "block"` and a `reason`.

use serde_json::{json, Value};

/// Appended when context had to be cut to the budget.
const CUT_MARKER: &str = "\n[… kirocrew context cut to the claude_code.context_chars budget]";

/// Context for `SessionStart` / `UserPromptSubmit`, cut to `budget`
/// characters; `None` when there is nothing to add.
pub fn additional_context(event_name: &str, context: &str, budget: usize) -> Option<Value> {
    let context = context.trim();
    if context.is_empty() {
        return None;
    }
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": event_name,
            "additionalContext": fit(context, budget),
        }
    }))
}

/// Refuses a prompt (`UserPromptSubmit`): Claude Code erases it and shows
/// `reason` to the user.
pub fn block_prompt(reason: &str) -> Value {
    json!({ "decision": "block", "reason": reason })
}

/// A `PreToolUse` decision: `allow`, `deny`, `ask` or `defer`, with the
/// reason and, from a script hook, a replacement input.
pub fn permission(decision: &str, reason: &str, updated_input: Option<&Value>) -> Value {
    let mut out = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    });
    if let (Some(input), Some(fields)) = (updated_input, out.as_object_mut()) {
        fields.insert("updatedInput".into(), input.clone());
    }
    json!({ "hookSpecificOutput": out })
}

/// `text` within `budget` characters, cut on a line boundary where one is
/// near, marked when cut.
pub fn fit(text: &str, budget: usize) -> String {
    if text.chars().count() <= budget {
        return text.to_owned();
    }
    let keep = budget.saturating_sub(CUT_MARKER.chars().count());
    let head: String = text.chars().take(keep).collect();
    // Prefer a whole last line when the cut would lose less than a fifth.
    let head = match head.rfind('\n') {
        Some(at) if head[..at].chars().count() * 5 >= keep * 4 => head[..at].to_owned(),
        _ => head,
    };
    format!("{head}{CUT_MARKER}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_hook_reference() {
        assert_eq!(
            additional_context("SessionStart", " ctx ", 100).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx"}})
        );
        assert_eq!(additional_context("UserPromptSubmit", " \n", 100), None);
        assert_eq!(
            block_prompt("no"),
            json!({"decision": "block", "reason": "no"})
        );
        assert_eq!(
            permission("deny", "why", None),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "why"}})
        );
        let input = json!({"command": "ls -la"});
        assert_eq!(
            permission("allow", "ok", Some(&input))["hookSpecificOutput"]["updatedInput"],
            input
        );
    }

    #[test]
    fn context_is_cut_to_the_budget_with_a_marker() {
        let text = (0..400)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let out = fit(&text, 1000);
        assert!(out.chars().count() <= 1000, "{}", out.chars().count());
        assert!(out.ends_with(CUT_MARKER));
        assert!(out.starts_with("line 0\nline 1"));
        assert_eq!(fit("short", 1000), "short");
        let one_line = "é".repeat(2000);
        assert!(fit(&one_line, 500).chars().count() <= 500);
    }
}
