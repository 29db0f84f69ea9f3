//! Security events for script hooks (issue 42): a script hook runs shell
//! commands as the daemon's user, so every change to the set in force and
//! every on-demand test run is recorded, naming each command by its hash
//! (the log never carries the command line, which may hold a secret, yet
//! a command can be matched against hooks.json by hashing it).

use serde_json::{json, Value};

use super::scripts::ScriptHook;
use super::types::ScriptReport;
use crate::security_log::SecurityEvent;

/// The first 16 hex digits of the command's BLAKE3 hash.
pub fn command_hash(command: &str) -> String {
    blake3::hash(command.as_bytes()).to_hex()[..16].to_owned()
}

/// `{event, command_hash}` of one hook.
fn named(hook: &ScriptHook) -> Value {
    json!({"event": hook.event, "command_hash": command_hash(&hook.command)})
}

/// The `hook_script_change` event for going from `before` to `after`, or
/// `None` when the same commands run on the same events (a new timeout or
/// matcher is not a new command).
pub(super) fn change_event(
    actor: &str,
    before: &[ScriptHook],
    after: &[ScriptHook],
) -> Option<SecurityEvent> {
    let key = |h: &ScriptHook| (h.event.clone(), h.command.clone());
    let mut old: Vec<_> = before.iter().map(key).collect();
    let mut added = Vec::new();
    for hook in after {
        match old.iter().position(|k| *k == key(hook)) {
            Some(i) => {
                old.swap_remove(i);
            }
            None => added.push(named(hook)),
        }
    }
    let removed: Vec<Value> = before
        .iter()
        .filter(|h| old.contains(&key(h)))
        .map(named)
        .collect();
    if added.is_empty() && removed.is_empty() {
        return None;
    }
    let detail = json!({"added": added, "removed": removed, "in_force": after.len()});
    Some(SecurityEvent::new(
        "hook_script_change",
        actor,
        "changed",
        detail,
    ))
}

/// The `hook_script_test` event of one test run.
pub(super) fn test_event(
    actor: &str,
    event: &str,
    index: usize,
    report: &ScriptReport,
) -> SecurityEvent {
    let o = &report.outcome;
    let detail = json!({
        "event": event,
        "index": index,
        "command_hash": command_hash(&report.command),
        "exit_code": o.exit_code,
        "timed_out": o.timed_out,
    });
    SecurityEvent::new("hook_script_test", actor, "ran", detail)
}

/// A `hook_sandbox_refused` event for each of `reports` that the sandbox
/// refused to run (`hooks.sandbox` is `required` and a layer is missing).
pub(super) fn refusal_events(
    actor: &str,
    event: &str,
    reports: &[ScriptReport],
) -> Vec<SecurityEvent> {
    reports
        .iter()
        .filter_map(|r| {
            let sandbox = r.outcome.sandbox.as_ref().filter(|s| s.refused)?;
            let detail = json!({
                "event": event,
                "command_hash": command_hash(&r.command),
                "missing": sandbox.missing,
                "reason": r.outcome.spawn_error,
            });
            Some(SecurityEvent::new(
                "hook_sandbox_refused",
                actor,
                "refused",
                detail,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::hooks::scripts::Matcher;

    fn hook(event: &str, command: &str) -> ScriptHook {
        ScriptHook {
            event: event.into(),
            matcher: Matcher::All,
            command: command.into(),
            timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn a_change_names_what_was_added_and_removed_by_hash() {
        let before = [
            hook("Stop", "notify-send done"),
            hook("PreToolUse", "guard.sh"),
        ];
        let after = [
            hook("PreToolUse", "guard.sh"),
            hook("Stop", "id; cat ~/.netrc"),
        ];
        let e = change_event("http", &before, &after).unwrap();
        assert_eq!(e.category, "hook_script_change");
        assert_eq!(
            e.detail["added"][0]["command_hash"],
            command_hash("id; cat ~/.netrc")
        );
        assert_eq!(
            e.detail["removed"][0]["command_hash"],
            command_hash("notify-send done")
        );
        assert!(
            !e.detail.to_string().contains("netrc"),
            "no command line in the log"
        );
        assert_eq!(change_event("http", &after, &after.clone()), None);
        // The same command on another event is a change.
        let moved = [
            hook("PreToolUse", "guard.sh"),
            hook("PostToolUse", "id; cat ~/.netrc"),
        ];
        assert!(change_event("file", &after, &moved).is_some());
    }
}
