//! What a script hook's run means (Claude Code's contract, which the issue
//! adopts beyond the reference): exit code 2 blocks with stderr as the
//! reason; exit 0 with a JSON object on stdout can decide
//! (`hookSpecificOutput.permissionDecision`, the older top-level
//! `decision`, `continue: false`); plain stdout on exit 0 is context for
//! prompt events; any other exit is a non-blocking error, except that valid
//! JSON on stdout is honoured whatever the exit code. Several hooks combine
//! with precedence deny > defer > ask > allow.

use serde::Serialize;
use serde_json::Value;

/// Longest reason or context kept from a hook's output, in chars.
const MAX_REASON_CHARS: usize = 2_000;

/// A permission answer for a tool call, weakest first so `max` is the
/// precedence (deny > defer > ask > allow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    /// Run it without asking.
    Allow,
    /// Ask the user.
    Ask,
    /// Leave it to the caller's own flow (Claude Code `-p` mode).
    Defer,
    /// Do not run it.
    Deny,
}

impl Permission {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "allow" | "approve" => Some(Permission::Allow),
            "ask" => Some(Permission::Ask),
            "defer" => Some(Permission::Defer),
            "deny" | "block" => Some(Permission::Deny),
            _ => None,
        }
    }
}

/// How one script run ended, as the runner saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScriptOutcome {
    /// Exit status, when it exited (not killed by a signal).
    pub exit_code: Option<i32>,
    /// Signal that ended it, if any.
    pub signal: Option<i32>,
    /// Killed (with its process group) at the time limit.
    pub timed_out: bool,
    /// Captured stdout (lossy UTF-8), at most the capture bound.
    pub stdout: String,
    /// Captured stderr (lossy UTF-8), at most the capture bound.
    pub stderr: String,
    /// More output was produced than kept.
    pub output_truncated: bool,
    /// Wall time.
    pub duration_ms: u64,
    /// Could not be started at all (the reason).
    pub spawn_error: Option<String>,
    /// Which sandbox layers held (`None` only for outcomes not made by
    /// `run_script`).
    pub sandbox: Option<super::sandbox::SandboxReport>,
}

/// What one hook decided.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HookVerdict {
    /// A permission answer (tool events).
    pub permission: Option<Permission>,
    /// It blocks the event (exit 2, `decision: "block"`, `continue: false`).
    pub block: bool,
    /// Why, for the agent or the user.
    pub reason: Option<String>,
    /// Context to add with the event.
    pub context: Option<String>,
    /// A replacement for the tool input.
    pub updated_input: Option<Value>,
    /// A non-blocking failure (timeout, crash, exit 1, bad JSON).
    pub error: Option<String>,
}

/// Interprets one run for `event` (`PreToolUse`, `UserPromptSubmit`, …).
pub fn interpret(event: &str, run: &ScriptOutcome) -> HookVerdict {
    let mut v = HookVerdict::default();
    if let Some(e) = &run.spawn_error {
        v.error = Some(format!("could not start: {e}"));
        return v;
    }
    if run.timed_out {
        v.error = Some(format!(
            "timed out after {} ms and was killed",
            run.duration_ms
        ));
        return v;
    }
    let json = parse_json_object(&run.stdout);
    if let Some(obj) = &json {
        apply_json(obj, &mut v);
    }
    match run.exit_code {
        Some(0) => {
            if json.is_none() && prompt_event(event) {
                let text = run.stdout.trim();
                if !text.is_empty() {
                    v.context = Some(bounded(text));
                }
            }
        }
        Some(2) => {
            // Blocks even when the JSON said allow.
            v.block = blocking_event(event);
            if v.block && event_has_permission(event) {
                v.permission = Some(Permission::Deny);
            }
            if v.reason.is_none() {
                let stderr = run.stderr.trim();
                v.reason = (!stderr.is_empty()).then(|| bounded(stderr));
            }
        }
        other => {
            if json.is_none() {
                let first = run.stderr.lines().next().unwrap_or_default().trim();
                v.error = Some(match other {
                    Some(code) => format!("exit {code}: {}", bounded(first)),
                    None => format!("killed by signal {}", run.signal.unwrap_or_default()),
                });
            }
        }
    }
    v
}

fn apply_json(obj: &serde_json::Map<String, Value>, v: &mut HookVerdict) {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(bounded);
    if obj.get("continue") == Some(&Value::Bool(false)) {
        v.block = true;
        v.reason =
            text(obj.get("stopReason")).or_else(|| Some("the hook stopped the agent".into()));
    }
    if let Some(decision) = obj.get("decision").and_then(Value::as_str) {
        match Permission::parse(decision) {
            Some(Permission::Deny) => {
                v.block = true;
                v.permission = Some(Permission::Deny);
            }
            Some(p) => v.permission = Some(p),
            None => {}
        }
        if let Some(reason) = text(obj.get("reason")) {
            v.reason = Some(reason);
        }
    }
    if let Some(specific) = obj.get("hookSpecificOutput").and_then(Value::as_object) {
        if let Some(p) = specific
            .get("permissionDecision")
            .and_then(Value::as_str)
            .and_then(Permission::parse)
        {
            v.permission = Some(p);
            if p == Permission::Deny {
                v.block = true;
            }
            if let Some(reason) = text(specific.get("permissionDecisionReason")) {
                v.reason = Some(reason);
            }
        }
        if let Some(context) = text(specific.get("additionalContext")) {
            v.context = Some(context);
        }
        if let Some(input) = specific.get("updatedInput").filter(|i| i.is_object()) {
            v.updated_input = Some(input.clone());
        }
    }
}

fn parse_json_object(stdout: &str) -> Option<serde_json::Map<String, Value>> {
    let trimmed = stdout.trim_start();
    if !trimmed.starts_with('{') {
        return None;
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

fn prompt_event(event: &str) -> bool {
    matches!(
        event,
        "UserPromptSubmit" | "UserPromptExpansion" | "SessionStart"
    )
}

fn event_has_permission(event: &str) -> bool {
    matches!(event, "PreToolUse" | "PermissionRequest")
}

/// Events exit 2 can block (tool already ran on PostToolUse; a session
/// start or notification cannot be undone).
fn blocking_event(event: &str) -> bool {
    !matches!(
        event,
        "PostToolUse"
            | "PostToolUseFailure"
            | "SessionStart"
            | "SessionEnd"
            | "Notification"
            | "PermissionRequest"
            | "Setup"
    )
}

fn bounded(text: &str) -> String {
    if text.chars().count() <= MAX_REASON_CHARS {
        return text.to_owned();
    }
    let mut kept: String = text.chars().take(MAX_REASON_CHARS).collect();
    kept.push('…');
    kept
}

/// The combined answer of several hooks for a tool call: the strongest
/// permission by precedence, with the reason of the hook that gave it.
pub(crate) fn strongest<'a>(
    verdicts: impl IntoIterator<Item = &'a HookVerdict>,
) -> Option<(Permission, Option<String>)> {
    verdicts
        .into_iter()
        .filter_map(|v| v.permission.map(|p| (p, v.reason.clone())))
        .max_by_key(|(p, _)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: i32, stdout: &str, stderr: &str) -> ScriptOutcome {
        ScriptOutcome {
            exit_code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            ..ScriptOutcome::default()
        }
    }

    #[test]
    fn exit_two_blocks_with_stderr_even_over_json_allow() {
        let v = interpret("PreToolUse", &run(2, "", "force push is not allowed\n"));
        assert!(v.block);
        assert_eq!(v.permission, Some(Permission::Deny));
        assert_eq!(v.reason.as_deref(), Some("force push is not allowed"));
        let allow =
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#;
        let v = interpret("PreToolUse", &run(2, allow, "no"));
        assert_eq!(v.permission, Some(Permission::Deny));
        // After the tool ran, exit 2 cannot block.
        assert!(!interpret("PostToolUse", &run(2, "", "late")).block);
    }

    #[test]
    fn other_exits_are_non_blocking_unless_json_decides() {
        let v = interpret("PreToolUse", &run(1, "oops", "first line\nsecond"));
        assert!(!v.block && v.permission.is_none());
        assert_eq!(v.error.as_deref(), Some("exit 1: first line"));
        let deny = r#"{"decision":"block","reason":"nope"}"#;
        let v = interpret("PreToolUse", &run(1, deny, ""));
        assert_eq!(v.permission, Some(Permission::Deny));
        let approve = r#"{"decision":"approve"}"#;
        assert_eq!(
            interpret("PreToolUse", &run(0, approve, "")).permission,
            Some(Permission::Allow)
        );
        let stop = r#"{"continue":false,"stopReason":"maintenance"}"#;
        let v = interpret("UserPromptSubmit", &run(0, stop, ""));
        assert!(v.block);
        assert_eq!(v.reason.as_deref(), Some("maintenance"));
        let timed_out = ScriptOutcome {
            timed_out: true,
            duration_ms: 1000,
            ..ScriptOutcome::default()
        };
        assert!(interpret("PreToolUse", &timed_out)
            .error
            .unwrap()
            .contains("timed out"));
    }

    #[test]
    fn plain_stdout_is_context_for_prompts_only() {
        let v = interpret("UserPromptSubmit", &run(0, "Today is a freeze day.\n", ""));
        assert_eq!(v.context.as_deref(), Some("Today is a freeze day."));
        assert_eq!(
            interpret("PreToolUse", &run(0, "debug text", "")).context,
            None
        );
    }

    #[test]
    fn precedence_is_deny_defer_ask_allow() {
        let v = |p: Permission, r: &str| HookVerdict {
            permission: Some(p),
            reason: Some(r.into()),
            ..HookVerdict::default()
        };
        let all = [
            v(Permission::Allow, "a"),
            v(Permission::Deny, "d"),
            v(Permission::Ask, "q"),
        ];
        assert_eq!(strongest(&all), Some((Permission::Deny, Some("d".into()))));
        let some = [v(Permission::Allow, "a"), v(Permission::Ask, "q")];
        assert_eq!(strongest(&some).unwrap().0, Permission::Ask);
        assert_eq!(strongest(&[HookVerdict::default()]), None);
    }
}
