//! One hook event → one request to the daemon → the answer Claude Code
//! reads. Everything here is synchronous and short: the adapter is a
//! process Claude Code starts per event, inside the hook's timeout.

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::{json, Value};

use super::answer::{additional_context, block_prompt, permission};
use super::event::{HookEvent, HookInput};
use super::transcript::conversation_turns;
use crate::config::ClaudeCodeSettings;
use crate::daemon_client::{Daemon, DaemonClientError};
use kirocrew_actors::security_log::SecurityEvent;
use kirocrew_actors::sensitive_paths::{denied_event, read_file_guarded, SensitivePaths};
use kirocrew_actors::transcripts::ImportedTurn;

/// Largest transcript file read for an import.
const MAX_TRANSCRIPT_BYTES: u64 = 256 * 1024 * 1024;

/// What the adapter process does: print `stdout` (if any) and `warning`
/// (if any) on stderr, then exit 0. Claude Code treats exit 0 with
/// nothing on stdout as "no opinion".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookOutcome {
    /// The JSON answer.
    pub stdout: Option<Value>,
    /// One line for the user's debug log.
    pub warning: Option<String>,
    /// A file the event named that the sensitive-path policy refused: the
    /// `read_denied` event the caller records (this module runs no
    /// actors).
    pub denied: Option<SecurityEvent>,
}

impl HookOutcome {
    fn answer(stdout: Option<Value>) -> Self {
        Self {
            stdout,
            ..Self::default()
        }
    }

    fn warn(warning: String) -> Self {
        Self {
            warning: Some(warning),
            ..Self::default()
        }
    }
}

/// Handles one event. `daemon` is the discovered daemon, or why there is
/// none: context and imports fail open; a tool decision fails closed when
/// `settings.fail_closed`. `policy` decides which files the event may make
/// the adapter read (its `transcript_path`).
pub fn handle_event(
    input: &HookInput,
    daemon: Result<&Daemon, &DaemonClientError>,
    settings: &ClaudeCodeSettings,
    policy: &SensitivePaths,
) -> HookOutcome {
    let key = utf8_percent_encode(&input.session_key(), NON_ALPHANUMERIC).to_string();
    let daemon = match daemon {
        Ok(d) => d,
        Err(e) => return unanswered(input, &e.to_string(), settings),
    };
    let result = match &input.event {
        HookEvent::SessionStart { source } => daemon
            .post_json(
                &format!("/api/sessions/{key}/start"),
                &json!({"resumed": source == "resume", "runtime_source": "claude-code"}),
            )
            .map(|body| context_answer("SessionStart", &body, settings)),
        HookEvent::UserPromptSubmit { prompt } => daemon
            .post_json(
                &format!("/api/sessions/{key}/messages"),
                &json!({
                    "role": "user",
                    "text": prompt,
                    "interactive": true,
                    "runtime_source": "claude-code",
                    // The transcript import records it (Stop), once.
                    "record": false,
                }),
            )
            .map(|body| prompt_answer(prompt, &body, settings)),
        HookEvent::PreToolUse {
            tool_name,
            tool_input,
            ..
        } => daemon
            .post_json(
                "/api/hooks/tool-call",
                &json!({
                    "tool_name": tool_name,
                    "input": tool_input,
                    "session_key": input.session_key(),
                }),
            )
            .map(|body| tool_answer(&body)),
        HookEvent::PostToolUse {
            tool_name,
            tool_input,
            tool_use_id,
        } => match tool_use_id {
            // Crediting deduplicates by call id; without one there is
            // nothing safe to record.
            None => Ok(HookOutcome::default()),
            Some(id) => daemon
                .post_json(
                    "/api/skills/-/tool-events",
                    &json!({
                        "tool_call_id": id,
                        "tool_name": tool_name,
                        "raw_input": tool_input,
                        "status": "completed",
                    }),
                )
                .map(|_| HookOutcome::default()),
        },
        HookEvent::Stop | HookEvent::SessionEnd | HookEvent::PreCompact => {
            return import_transcript(input, daemon, &key, policy)
        }
        HookEvent::Other(_) => Ok(HookOutcome::default()),
    };
    result.unwrap_or_else(|e| unanswered(input, &e.to_string(), settings))
}

/// The answer when the daemon could not be asked (or refused).
fn unanswered(input: &HookInput, why: &str, settings: &ClaudeCodeSettings) -> HookOutcome {
    let warning = format!("kirocrew: {why}");
    match &input.event {
        HookEvent::PreToolUse { tool_name, .. } if settings.fail_closed => HookOutcome {
            stdout: Some(permission(
                "deny",
                &format!(
                    "kirocrew could not decide {tool_name} ({why}) and claude_code.fail_closed is on"
                ),
                None,
            )),
            warning: Some(warning),
            denied: None,
        },
        _ => HookOutcome::warn(warning),
    }
}

fn context_answer(event: &str, body: &Value, settings: &ClaudeCodeSettings) -> HookOutcome {
    let context = body.get("context").and_then(Value::as_str).unwrap_or("");
    HookOutcome::answer(additional_context(event, context, settings.context_chars))
}

fn prompt_answer(prompt: &str, body: &Value, settings: &ClaudeCodeSettings) -> HookOutcome {
    let text = |field: &str| body.get(field).and_then(Value::as_str);
    if body.get("blocked").and_then(Value::as_bool) == Some(true) {
        let reason = text("reason").unwrap_or("a kirocrew hook blocked this prompt");
        return HookOutcome::answer(Some(block_prompt(reason)));
    }
    if let Some(reply) = text("auto_reply") {
        // Claude Code has no way to answer for the agent; refusing the
        // prompt with the reply as the reason shows it to the user.
        return HookOutcome::answer(Some(block_prompt(reply)));
    }
    let mut context = text("context").unwrap_or("").to_owned();
    // A transform prefixed the message; Claude Code cannot rewrite the
    // prompt, so the prefix travels as context.
    if let Some(prefix) = text("message")
        .and_then(|m| m.strip_suffix(prompt))
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        context = format!("{prefix}\n\n{context}");
    }
    HookOutcome::answer(additional_context(
        "UserPromptSubmit",
        &context,
        settings.context_chars,
    ))
}

fn tool_answer(body: &Value) -> HookOutcome {
    let decision = body
        .get("decision")
        .and_then(Value::as_str)
        .unwrap_or("ask");
    let reason = body.get("reason").and_then(Value::as_str).unwrap_or("");
    let decided = body
        .get("matched")
        .and_then(Value::as_array)
        .is_some_and(|m| !m.is_empty());
    if decision == "ask" && !decided {
        // Nothing in kirocrew spoke: Claude Code's own permission rules
        // decide, as if kirocrew were not installed.
        return HookOutcome::default();
    }
    HookOutcome::answer(Some(permission(
        decision,
        reason,
        body.get("updated_input").filter(|v| !v.is_null()),
    )))
}

fn import_transcript(
    input: &HookInput,
    daemon: &Daemon,
    key: &str,
    policy: &SensitivePaths,
) -> HookOutcome {
    let Some(path) = &input.transcript_path else {
        return HookOutcome::warn("kirocrew: the event names no transcript_path".into());
    };
    // The event names the file: the sensitive-path policy decides whether
    // it is read (as written and as resolved; a link into ~/.ssh, a FIFO
    // or a file holding a private key is refused), not the caller.
    let text = match read_file_guarded(policy, path, MAX_TRANSCRIPT_BYTES) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            let mut outcome = HookOutcome::warn(format!("kirocrew: transcript not imported: {e}"));
            if e.is_refusal() {
                outcome.denied = Some(denied_event("hook:claude-code", path, &e));
            }
            return outcome;
        }
    };
    let turns = conversation_turns(&text);
    if turns.is_empty() {
        return HookOutcome::default();
    }
    // In batches: a long session (30,000 records) is more than one import
    // takes, and every batch is idempotent (turns are keyed by their
    // record id), so a batch that fails is simply sent again next time.
    for batch in import_batches(&turns) {
        if let Err(e) = daemon.post_json(
            &format!("/api/sessions/{key}/import"),
            &json!({ "turns": batch }),
        ) {
            return HookOutcome::warn(format!("kirocrew: transcript not imported: {e}"));
        }
    }
    HookOutcome::default()
}

/// Turns per import request, at most (the daemon takes up to 20,000).
const IMPORT_BATCH_TURNS: usize = 1_000;

/// Text per import request, at most, in bytes (well under the daemon's
/// default 64 MiB import body limit).
const IMPORT_BATCH_BYTES: usize = 8 * 1024 * 1024;

/// `turns` cut into requests of at most [`IMPORT_BATCH_TURNS`] turns and
/// about [`IMPORT_BATCH_BYTES`] of text (a single larger turn goes alone).
fn import_batches(turns: &[ImportedTurn]) -> Vec<&[ImportedTurn]> {
    let mut batches = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, turn) in turns.iter().enumerate() {
        let size = turn.text.len() + turn.source_id.len();
        if i > start && (i - start == IMPORT_BATCH_TURNS || bytes + size > IMPORT_BATCH_BYTES) {
            batches.push(&turns[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < turns.len() {
        batches.push(&turns[start..]);
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_transcripts_go_in_batches_that_cover_every_turn_once() {
        let turn = |i: usize, len: usize| ImportedTurn {
            source_id: format!("r{i}"),
            role: kirocrew_actors::transcripts::Role::User,
            text: "x".repeat(len),
            ts: None,
        };
        let many: Vec<_> = (0..30_000).map(|i| turn(i, 10)).collect();
        let batches = import_batches(&many);
        assert_eq!(batches.len(), 30);
        assert!(batches.iter().all(|b| b.len() == IMPORT_BATCH_TURNS));
        let big: Vec<_> = (0..5).map(|i| turn(i, 5 * 1024 * 1024)).collect();
        let batches = import_batches(&big);
        assert_eq!(
            batches.len(),
            5,
            "each over half the byte budget goes alone"
        );
        assert_eq!(batches.iter().map(|b| b.len()).sum::<usize>(), 5);
        assert!(import_batches(&[]).is_empty());
    }

    #[test]
    fn tool_answers_keep_claude_codes_rules_when_kirocrew_is_silent() {
        assert_eq!(
            tool_answer(&json!({"decision": "ask", "reason": "no rule", "matched": []})),
            HookOutcome::default()
        );
        let denied = tool_answer(
            &json!({"decision": "deny", "reason": "r", "matched": ["auto_deny_tools:*rm*"]}),
        );
        assert_eq!(
            denied.stdout.unwrap()["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        let asked =
            tool_answer(&json!({"decision": "ask", "reason": "script", "matched": ["script"]}));
        assert_eq!(
            asked.stdout.unwrap()["hookSpecificOutput"]["permissionDecision"],
            "ask"
        );
    }

    #[test]
    fn prompt_answers() {
        let settings = ClaudeCodeSettings {
            context_chars: 1000,
            fail_closed: false,
            timeout_secs: 5,
        };
        let blocked = prompt_answer("p", &json!({"blocked": true, "reason": "nope"}), &settings);
        assert_eq!(blocked.stdout.unwrap(), block_prompt("nope"));
        let reply = prompt_answer(
            "p",
            &json!({"blocked": false, "auto_reply": "hi!"}),
            &settings,
        );
        assert_eq!(reply.stdout.unwrap(), block_prompt("hi!"));
        let transformed = prompt_answer(
            "deploy",
            &json!({"blocked": false, "message": "[ops]\ndeploy", "context": "ctx"}),
            &settings,
        );
        assert_eq!(
            transformed.stdout.unwrap()["hookSpecificOutput"]["additionalContext"],
            "[ops]\n\nctx"
        );
        let nothing = prompt_answer(
            "p",
            &json!({"blocked": false, "message": "p", "context": ""}),
            &settings,
        );
        assert_eq!(nothing, HookOutcome::default());
    }
}
