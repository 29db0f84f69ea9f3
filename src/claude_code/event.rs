//! The hook input Claude Code writes on stdin: common fields
//! (`session_id`, `transcript_path`, `cwd`, `hook_event_name`) and each
//! event's own. Unknown fields are ignored (Claude Code adds fields over
//! versions); an unknown event is kept by name and answered with nothing.

use std::path::PathBuf;

use serde_json::Value;

/// Largest hook input read (a `PostToolUse` carries the tool's whole
/// response; anything past this is not an event we can use).
pub const MAX_INPUT_BYTES: usize = 16 * 1024 * 1024;

/// One parsed hook event.
#[derive(Debug, Clone, PartialEq)]
pub struct HookInput {
    /// Claude Code's session id.
    pub session_id: String,
    /// The session's JSONL transcript, if given.
    pub transcript_path: Option<PathBuf>,
    /// The working directory of the session, if given.
    pub cwd: Option<String>,
    /// What happened.
    pub event: HookEvent,
}

impl HookInput {
    /// kirocrew's session key for this Claude Code session.
    pub fn session_key(&self) -> String {
        format!("claude-code:{}", self.session_id)
    }
}

/// The events the adapter acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum HookEvent {
    /// A session started (`source`: startup, resume, clear, compact).
    SessionStart {
        /// Why it started.
        source: String,
    },
    /// The user sent a prompt.
    UserPromptSubmit {
        /// The prompt.
        prompt: String,
    },
    /// A tool is about to run.
    PreToolUse {
        /// The tool.
        tool_name: String,
        /// Its input.
        tool_input: Value,
        /// The call's id, if given.
        tool_use_id: Option<String>,
    },
    /// A tool ran.
    PostToolUse {
        /// The tool.
        tool_name: String,
        /// Its input.
        tool_input: Value,
        /// The call's id, if given.
        tool_use_id: Option<String>,
    },
    /// Claude finished answering.
    Stop,
    /// The session ended.
    SessionEnd,
    /// The conversation is about to be compacted.
    PreCompact,
    /// An event the adapter has nothing to do for.
    Other(String),
}

/// Why stdin was not a usable hook event.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EventError {
    /// Not JSON, or not an object.
    #[error("hook input is not a JSON object: {0}")]
    NotJson(String),
    /// A required field is missing or has the wrong type.
    #[error("hook input field {field}: {reason}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
}

fn text(doc: &Value, field: &'static str) -> Result<String, EventError> {
    match doc.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(EventError::Field {
            field,
            reason: "must be a string",
        }),
        None => Err(EventError::Field {
            field,
            reason: "is missing",
        }),
    }
}

fn optional_text(doc: &Value, field: &'static str) -> Option<String> {
    doc.get(field)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|s| !s.is_empty())
}

/// Parses one hook input document.
pub fn parse_event(input: &str) -> Result<HookInput, EventError> {
    let doc: Value = serde_json::from_str(input).map_err(|e| EventError::NotJson(e.to_string()))?;
    if !doc.is_object() {
        return Err(EventError::NotJson("not an object".into()));
    }
    let session_id = text(&doc, "session_id")?;
    if session_id.trim().is_empty() {
        return Err(EventError::Field {
            field: "session_id",
            reason: "is empty",
        });
    }
    let name = text(&doc, "hook_event_name")?;
    let tool = |doc: &Value| -> Result<(String, Value, Option<String>), EventError> {
        Ok((
            text(doc, "tool_name")?,
            doc.get("tool_input").cloned().unwrap_or(Value::Null),
            optional_text(doc, "tool_use_id"),
        ))
    };
    let event = match name.as_str() {
        "SessionStart" => HookEvent::SessionStart {
            source: optional_text(&doc, "source").unwrap_or_else(|| "startup".into()),
        },
        "UserPromptSubmit" => HookEvent::UserPromptSubmit {
            prompt: text(&doc, "prompt")?,
        },
        "PreToolUse" => {
            let (tool_name, tool_input, tool_use_id) = tool(&doc)?;
            HookEvent::PreToolUse {
                tool_name,
                tool_input,
                tool_use_id,
            }
        }
        "PostToolUse" => {
            let (tool_name, tool_input, tool_use_id) = tool(&doc)?;
            HookEvent::PostToolUse {
                tool_name,
                tool_input,
                tool_use_id,
            }
        }
        "Stop" => HookEvent::Stop,
        "SessionEnd" => HookEvent::SessionEnd,
        "PreCompact" => HookEvent::PreCompact,
        _ => HookEvent::Other(name),
    };
    Ok(HookInput {
        session_id,
        transcript_path: optional_text(&doc, "transcript_path").map(PathBuf::from),
        cwd: optional_text(&doc, "cwd"),
        event,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMON: &str = r#""session_id":"abc","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default","future_field":{"x":1}"#;

    #[test]
    fn every_event_parses_and_extra_fields_are_ignored() {
        let parse = |rest: &str| parse_event(&format!("{{{COMMON},{rest}}}")).unwrap();
        let start = parse(r#""hook_event_name":"SessionStart","source":"resume","model":"m""#);
        assert_eq!(
            start.event,
            HookEvent::SessionStart {
                source: "resume".into()
            }
        );
        assert_eq!(start.session_key(), "claude-code:abc");
        assert_eq!(start.transcript_path, Some(PathBuf::from("/t.jsonl")));
        let prompt = parse(r#""hook_event_name":"UserPromptSubmit","prompt":"hi""#);
        assert_eq!(
            prompt.event,
            HookEvent::UserPromptSubmit {
                prompt: "hi".into()
            }
        );
        let pre = parse(
            r#""hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1""#,
        );
        assert!(
            matches!(pre.event, HookEvent::PreToolUse { ref tool_name, .. } if tool_name == "Bash")
        );
        let post = parse(
            r#""hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{},"tool_response":{"x":1}"#,
        );
        assert!(matches!(
            post.event,
            HookEvent::PostToolUse {
                tool_use_id: None,
                ..
            }
        ));
        assert_eq!(
            parse(r#""hook_event_name":"Stop","stop_hook_active":false"#).event,
            HookEvent::Stop
        );
        assert_eq!(
            parse(r#""hook_event_name":"SessionEnd","reason":"exit""#).event,
            HookEvent::SessionEnd
        );
        assert_eq!(
            parse(r#""hook_event_name":"PreCompact","trigger":"auto""#).event,
            HookEvent::PreCompact
        );
        assert_eq!(
            parse(r#""hook_event_name":"Notification","message":"m""#).event,
            HookEvent::Other("Notification".into())
        );
    }

    #[test]
    fn bad_input_names_the_field() {
        assert!(matches!(
            parse_event("not json"),
            Err(EventError::NotJson(_))
        ));
        assert!(matches!(parse_event("[1]"), Err(EventError::NotJson(_))));
        assert_eq!(
            parse_event(r#"{"hook_event_name":"Stop"}"#),
            Err(EventError::Field {
                field: "session_id",
                reason: "is missing"
            })
        );
        assert_eq!(
            parse_event(r#"{"session_id":"a","hook_event_name":"UserPromptSubmit","prompt":3}"#),
            Err(EventError::Field {
                field: "prompt",
                reason: "must be a string"
            })
        );
        assert_eq!(
            parse_event(r#"{"session_id":" ","hook_event_name":"Stop"}"#),
            Err(EventError::Field {
                field: "session_id",
                reason: "is empty"
            })
        );
    }
}
