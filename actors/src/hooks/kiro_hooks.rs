//! `agent.kiro_hooks`: user-defined kiro-cli hooks merged after the bundled
//! ones (spec "User kiro-cli Hooks", `_merge_kiro_hooks`).
//!
//! Rules, in the spec's words made executable: bundled hooks are always
//! present and first; user hooks are appended per event type; duplicates by
//! (command, matcher) are dropped; malformed entries (missing command,
//! non-object, non-list) are skipped with a warning; a command must match
//! `[a-zA-Z0-9/_.-]+`, be an absolute path to an existing file, and not be
//! in a sensitive location once symlinks and `..` are resolved; a matcher
//! must be a string of `[a-zA-Z0-9_.*-]`, at most 200 characters; only
//! `command` and `matcher` are kept from a user entry.
//!
//! The sensitive-location check is passed in (`is_sensitive`), so this
//! stays a pure function of its inputs and the file system.

use std::path::Path;

use serde_json::{Map, Value};

/// Longest matcher accepted.
pub const MAX_KIRO_MATCHER_CHARS: usize = 200;

/// The merged hooks (`{event: [{command, matcher?}]}`) and the warnings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MergedKiroHooks {
    /// Event type → hooks, bundled first.
    pub hooks: Map<String, Value>,
    /// One line per skipped entry.
    pub warnings: Vec<String>,
}

/// Merges `user` (the raw `agent.kiro_hooks` value) after `bundled`.
pub fn merge_kiro_hooks(
    bundled: &Map<String, Value>,
    user: &Value,
    is_sensitive: &dyn Fn(&Path) -> bool,
) -> MergedKiroHooks {
    let mut out = MergedKiroHooks {
        hooks: bundled.clone(),
        warnings: Vec::new(),
    };
    let user = match user {
        Value::Null => return out,
        Value::Object(map) => map,
        _ => {
            out.warnings
                .push("agent.kiro_hooks is not an object; ignored".into());
            return out;
        }
    };
    for (event, entries) in user {
        let Some(entries) = entries.as_array() else {
            out.warnings
                .push(format!("agent.kiro_hooks.{event}: not a list; skipped"));
            continue;
        };
        let slot = out
            .hooks
            .entry(event.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = slot else {
            out.warnings.push(format!(
                "bundled hooks for {event} are not a list; user hooks skipped"
            ));
            continue;
        };
        for (i, entry) in entries.iter().enumerate() {
            let at = format!("agent.kiro_hooks.{event}[{i}]");
            match clean_entry(entry, is_sensitive) {
                Ok(clean) => {
                    let key = identity(&clean);
                    if list.iter().any(|h| identity(h) == key) {
                        out.warnings
                            .push(format!("{at}: duplicate of an earlier hook; skipped"));
                    } else {
                        list.push(clean);
                    }
                }
                Err(reason) => out.warnings.push(format!("{at}: {reason}; skipped")),
            }
        }
    }
    out
}

/// (command, matcher) — the dedup key.
fn identity(hook: &Value) -> (Option<&str>, Option<&str>) {
    (
        hook.get("command").and_then(Value::as_str),
        hook.get("matcher").and_then(Value::as_str),
    )
}

fn clean_entry(entry: &Value, is_sensitive: &dyn Fn(&Path) -> bool) -> Result<Value, String> {
    let obj = entry.as_object().ok_or("not an object")?;
    let command = obj
        .get("command")
        .ok_or("missing command")?
        .as_str()
        .ok_or("command is not a string")?;
    check_command(command, is_sensitive)?;
    let mut clean = Map::new();
    clean.insert("command".into(), Value::String(command.to_owned()));
    match obj.get("matcher") {
        None => {}
        Some(Value::String(m)) => {
            check_matcher(m)?;
            clean.insert("matcher".into(), Value::String(m.clone()));
        }
        Some(_) => return Err("matcher is not a string".into()),
    }
    Ok(Value::Object(clean))
}

fn check_command(command: &str, is_sensitive: &dyn Fn(&Path) -> bool) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '.' | '-');
    if command.is_empty() || !command.chars().all(allowed) {
        return Err(format!(
            "command {command:?} may only contain letters, digits, '/', '_', '.' and '-'"
        ));
    }
    let path = Path::new(command);
    if !path.is_absolute() {
        return Err(format!("command {command:?} is not an absolute path"));
    }
    // Resolve symlinks and `..` first, so a link into ~/.ssh is judged by
    // where it points.
    let resolved = std::fs::canonicalize(path)
        .map_err(|e| format!("command {command:?} cannot be resolved: {e}"))?;
    if !resolved.is_file() {
        return Err(format!("command {command:?} is not a file"));
    }
    if is_sensitive(path) || is_sensitive(&resolved) {
        return Err(format!("command {command:?} is in a sensitive location"));
    }
    Ok(())
}

fn check_matcher(matcher: &str) -> Result<(), String> {
    if matcher.chars().count() > MAX_KIRO_MATCHER_CHARS {
        return Err(format!(
            "matcher longer than {MAX_KIRO_MATCHER_CHARS} characters"
        ));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '*' | '-');
    if !matcher.chars().all(allowed) {
        return Err(format!(
            "matcher {matcher:?} may only contain letters, digits, '_', '.', '*' and '-'"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::symlink;

    #[test]
    fn validation_table() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let secret_dir = root.join("home/.ssh");
        std::fs::create_dir_all(&secret_dir).unwrap();
        let secret = secret_dir.join("hook.sh");
        std::fs::write(&secret, "#!/bin/sh\n").unwrap();
        let good = root.join("bin/guard.sh");
        std::fs::create_dir_all(good.parent().unwrap()).unwrap();
        std::fs::write(&good, "#!/bin/sh\n").unwrap();
        let link = root.join("bin/innocent.sh");
        symlink(&secret, &link).unwrap();
        let traversal = format!("{}/bin/../home/.ssh/hook.sh", root.display());
        let is_sensitive = |p: &Path| p.components().any(|c| c.as_os_str() == ".ssh");

        let bundled =
            json!({"preToolUse": [{"command": "/opt/kirocrew/bundled.sh", "matcher": "*"}]});
        let g = good.display().to_string();
        let user = json!({
            "preToolUse": [
                {"command": g, "matcher": "fs_*", "extra": "dropped"},
                {"command": g, "matcher": "fs_*"},
                {"command": g},
                {"command": link.display().to_string()},
                {"command": traversal},
                {"command": "relative/hook.sh"},
                {"command": format!("{g}; rm -rf /")},
                {"command": root.join("missing.sh").display().to_string()},
                {"command": g, "matcher": 7},
                {"command": g, "matcher": "a b"},
                {"command": g, "matcher": "x".repeat(201)},
                {"matcher": "*"},
                "not an object",
            ],
            "stop": "not a list",
            "agentSpawn": [{"command": g}],
        });
        let merged = merge_kiro_hooks(bundled.as_object().unwrap(), &user, &is_sensitive);
        let pre = merged.hooks["preToolUse"].as_array().unwrap();
        assert_eq!(
            pre,
            &vec![
                json!({"command": "/opt/kirocrew/bundled.sh", "matcher": "*"}),
                json!({"command": g, "matcher": "fs_*"}),
                json!({"command": g}),
            ]
        );
        assert_eq!(merged.hooks["agentSpawn"], json!([{"command": g}]));
        assert!(merged.hooks.get("stop").is_none());
        // 11 skipped entries in preToolUse + the event that is not a list.
        assert_eq!(merged.warnings.len(), 12, "{:#?}", merged.warnings);
        assert!(merged.warnings.iter().any(|w| w.contains("sensitive")));
        let no_user = merge_kiro_hooks(bundled.as_object().unwrap(), &Value::Null, &is_sensitive);
        assert_eq!(no_user.hooks, *bundled.as_object().unwrap());
    }
}
