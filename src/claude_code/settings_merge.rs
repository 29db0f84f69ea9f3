//! What `kirocrew install claude-code` does to Claude Code's files, as pure
//! functions on JSON documents (the command does the reading, backups and
//! writing): hook handlers are appended to `hooks.<Event>` of a
//! settings.json, the MCP server is added under `mcpServers.kirocrew` of
//! `.mcp.json` (project) or `~/.claude.json` (user). Every existing entry
//! stays as it was; installing twice adds nothing; [`remove_hooks`] and
//! [`remove_mcp_server`] take out exactly what was added.

use serde_json::{json, Map, Value};

/// The events the adapter answers, with whether the event takes a
/// `matcher` (Claude Code ignores one where it does not).
pub const EVENTS: [(&str, bool); 7] = [
    ("SessionStart", false),
    ("UserPromptSubmit", false),
    ("PreToolUse", true),
    ("PostToolUse", true),
    ("Stop", false),
    ("SessionEnd", false),
    ("PreCompact", false),
];

/// Seconds Claude Code gives the adapter (its round trip is milliseconds;
/// a first context may wait for the embedding model).
pub const HOOK_TIMEOUT_SECS: u64 = 30;

/// The name the MCP server is registered under.
pub const MCP_SERVER_NAME: &str = "kirocrew";

/// Why a document cannot be merged into.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MergeError {
    /// A value where an object or list must be.
    #[error("{path} is not {expected}; fix or remove it and install again")]
    Shape {
        /// Where.
        path: String,
        /// What it must be.
        expected: &'static str,
    },
    /// `mcpServers.kirocrew` exists and is not ours.
    #[error("mcpServers.{MCP_SERVER_NAME} already exists with another command; remove it first")]
    NameTaken,
}

/// The handler for one event.
pub fn handler(command: &str) -> Value {
    json!({"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS})
}

/// One matcher group holding our handler.
fn group(command: &str, with_matcher: bool) -> Value {
    if with_matcher {
        json!({"matcher": "*", "hooks": [handler(command)]})
    } else {
        json!({"hooks": [handler(command)]})
    }
}

fn object<'a>(value: &'a mut Value, path: &str) -> Result<&'a mut Map<String, Value>, MergeError> {
    value.as_object_mut().ok_or_else(|| MergeError::Shape {
        path: path.to_owned(),
        expected: "an object",
    })
}

fn has_handler(groups: &[Value], command: &str) -> bool {
    groups.iter().any(|g| {
        g.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
            hs.iter()
                .any(|h| h.get("command").and_then(Value::as_str) == Some(command))
        })
    })
}

/// Adds a matcher group with our handler to every event that lacks one;
/// answers the events it added to.
pub fn add_hooks(settings: &mut Value, command: &str) -> Result<Vec<String>, MergeError> {
    let root = object(settings, "the settings file")?;
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let hooks = object(hooks, "hooks")?;
    let mut added = Vec::new();
    for (event, with_matcher) in EVENTS {
        let path = format!("hooks.{event}");
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        let groups = groups.as_array_mut().ok_or(MergeError::Shape {
            path,
            expected: "a list",
        })?;
        if !has_handler(groups, command) {
            groups.push(group(command, with_matcher));
            added.push(event.to_owned());
        }
    }
    Ok(added)
}

/// Removes every matcher group install added (ours: exactly one handler,
/// running `command`), then lists and the `hooks` object left empty.
/// Answers how many groups were removed. A group someone else added a
/// handler to keeps theirs; only ours is taken out of it.
pub fn remove_hooks(settings: &mut Value, command: &str) -> usize {
    let Some(root) = settings.as_object_mut() else {
        return 0;
    };
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return 0;
    };
    let mut removed = 0;
    for (event, _) in EVENTS {
        let Some(groups) = hooks.get_mut(event).and_then(Value::as_array_mut) else {
            continue;
        };
        for g in groups.iter_mut() {
            if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = hs.len();
                hs.retain(|h| h.get("command").and_then(Value::as_str) != Some(command));
                removed += before - hs.len();
            }
        }
        groups.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|hs| !hs.is_empty())
        });
        if groups.is_empty() {
            hooks.remove(event);
        }
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    removed
}

/// The MCP server entry: `kirocrew mcp` over stdio.
pub fn mcp_server(command: &str, args: &[String]) -> Value {
    json!({"type": "stdio", "command": command, "args": args})
}

/// Registers the MCP server; `false` when the same entry is already there.
pub fn add_mcp_server(doc: &mut Value, entry: &Value) -> Result<bool, MergeError> {
    let root = object(doc, "the MCP file")?;
    let servers = root.entry("mcpServers").or_insert_with(|| json!({}));
    let servers = object(servers, "mcpServers")?;
    match servers.get(MCP_SERVER_NAME) {
        Some(existing) if existing == entry => Ok(false),
        Some(_) => Err(MergeError::NameTaken),
        None => {
            servers.insert(MCP_SERVER_NAME.to_owned(), entry.clone());
            Ok(true)
        }
    }
}

/// Removes the MCP server if it is still the entry install wrote (an entry
/// the user changed since is theirs now and stays).
pub fn remove_mcp_server(doc: &mut Value, entry: &Value) -> bool {
    let Some(root) = doc.as_object_mut() else {
        return false;
    };
    let Some(servers) = root.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return false;
    };
    if servers.get(MCP_SERVER_NAME) != Some(entry) {
        return false;
    }
    servers.remove(MCP_SERVER_NAME);
    if servers.is_empty() {
        root.remove("mcpServers");
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/usr/bin/kirocrew --home /h hook claude-code";

    #[test]
    fn install_keeps_everything_and_is_idempotent() {
        let original = json!({
            "permissions": {"allow": ["Bash(ls*)"]},
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
                "Notification": [{"hooks": [{"type": "command", "command": "notify"}]}]
            },
            "model": "opus"
        });
        let mut doc = original.clone();
        let added = add_hooks(&mut doc, CMD).unwrap();
        assert_eq!(added.len(), EVENTS.len());
        assert_eq!(
            doc["hooks"]["PreToolUse"][0],
            original["hooks"]["PreToolUse"][0]
        );
        assert_eq!(doc["hooks"]["PreToolUse"][1]["matcher"], "*");
        assert!(doc["hooks"]["Stop"][0].get("matcher").is_none());
        let once = doc.clone();
        assert!(add_hooks(&mut doc, CMD).unwrap().is_empty());
        assert_eq!(doc, once);
        assert_eq!(remove_hooks(&mut doc, CMD), EVENTS.len());
        assert_eq!(doc, original);
    }

    #[test]
    fn empty_settings_round_trip_to_empty() {
        let mut doc = json!({});
        add_hooks(&mut doc, CMD).unwrap();
        remove_hooks(&mut doc, CMD);
        assert_eq!(doc, json!({}));
    }

    #[test]
    fn wrong_shapes_are_refused_untouched() {
        let mut doc = json!({"hooks": []});
        assert_eq!(
            add_hooks(&mut doc, CMD),
            Err(MergeError::Shape {
                path: "hooks".into(),
                expected: "an object"
            })
        );
        let mut doc = json!({"hooks": {"Stop": {}}});
        assert!(matches!(
            add_hooks(&mut doc, CMD),
            Err(MergeError::Shape { .. })
        ));
        assert!(add_hooks(&mut json!([1]), CMD).is_err());
    }

    #[test]
    fn the_mcp_entry_is_added_once_and_removed_only_if_unchanged() {
        let entry = mcp_server("/usr/bin/kirocrew", &["mcp".into()]);
        let mut doc = json!({"mcpServers": {"other": {"command": "x"}}, "numStartups": 3});
        let original = doc.clone();
        assert!(add_mcp_server(&mut doc, &entry).unwrap());
        assert!(!add_mcp_server(&mut doc, &entry).unwrap());
        assert!(remove_mcp_server(&mut doc, &entry));
        assert_eq!(doc, original);
        let mut taken = json!({"mcpServers": {"kirocrew": {"command": "mine"}}});
        assert_eq!(
            add_mcp_server(&mut taken, &entry),
            Err(MergeError::NameTaken)
        );
        assert!(!remove_mcp_server(&mut taken, &entry));
    }
}
