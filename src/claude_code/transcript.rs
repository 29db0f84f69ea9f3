//! Claude Code's session transcript (JSONL at `transcript_path`) → turns
//! for kirocrew's transcript. Each line is one record; the conversation is
//! in `type: "user" | "assistant"` records whose `message.content` is a
//! string or a list of blocks. Only what was *said* is kept: text blocks;
//! tool calls and tool results (file contents, command output) are left
//! out, as are meta lines (`isMeta`) and subagent side chains
//! (`isSidechain`). The record's `uuid` is the turn's source id, which
//! makes re-importing a grown transcript add only the new lines.

use serde_json::Value;

use kirocrew_actors::transcripts::{ImportedTurn, Role, MAX_TURN_CHARS};

/// Appended to a turn cut at [`MAX_TURN_CHARS`].
const CUT_MARKER: &str = "\n[… cut by kirocrew: longer than a stored turn may be]";

/// The conversation turns of a transcript, oldest first. Lines that are
/// not JSON or not conversation are skipped (a transcript being written may
/// end in a torn line).
pub fn conversation_turns(jsonl: &str) -> Vec<ImportedTurn> {
    jsonl
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|record| turn_of(&record))
        .collect()
}

fn turn_of(record: &Value) -> Option<ImportedTurn> {
    let role = match record.get("type")?.as_str()? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let flag = |name: &str| record.get(name).and_then(Value::as_bool) == Some(true);
    if flag("isMeta") || flag("isSidechain") {
        return None;
    }
    let source_id = record.get("uuid")?.as_str()?.trim().to_owned();
    if source_id.is_empty() {
        return None;
    }
    let text = said(record.get("message")?.get("content")?)?;
    Some(ImportedTurn {
        source_id,
        role,
        text: cut(text),
        ts: record
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// The text blocks of a message, joined; `None` when it has none (a tool
/// result, a tool call only).
fn said(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.trim().to_owned(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

fn cut(text: String) -> String {
    if text.chars().count() <= MAX_TURN_CHARS {
        return text;
    }
    let keep = MAX_TURN_CHARS - CUT_MARKER.chars().count();
    let mut out: String = text.chars().take(keep).collect();
    out.push_str(CUT_MARKER);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_was_said_is_kept() {
        let jsonl = [
            r#"{"type":"summary","summary":"s","leafUuid":"x"}"#,
            r#"{"type":"user","uuid":"u1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"Deploy with make ship"}}"#,
            r#"{"type":"assistant","uuid":"a1","message":{"role":"assistant","content":[{"type":"text","text":"On it."},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"make ship"}}]}}"#,
            r#"{"type":"user","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}}"#,
            r#"{"type":"user","uuid":"u3","isMeta":true,"message":{"role":"user","content":"<caveat>"}}"#,
            r#"{"type":"assistant","uuid":"a2","isSidechain":true,"message":{"role":"assistant","content":[{"type":"text","text":"sub"}]}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"no uuid"}]}}"#,
            r#"{"type":"assistant","uuid":"a3","message":{"role":"assistant","content":[{"type":"text","text":"Done."},{"type":"text","text":"Shipped."}]}}"#,
            r#"{"type":"user","uuid":"u4","message":{"role":"user","con"#,
        ]
        .join("\n");
        let turns = conversation_turns(&jsonl);
        let got: Vec<(&str, Role, &str)> = turns
            .iter()
            .map(|t| (t.source_id.as_str(), t.role, t.text.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("u1", Role::User, "Deploy with make ship"),
                ("a1", Role::Assistant, "On it."),
                ("a3", Role::Assistant, "Done.\n\nShipped."),
            ]
        );
        assert_eq!(turns[0].ts.as_deref(), Some("2026-01-01T00:00:00Z"));
    }

    #[test]
    fn an_over_long_turn_is_cut_with_a_marker() {
        let long = "x".repeat(MAX_TURN_CHARS + 10);
        let out = cut(long);
        assert_eq!(out.chars().count(), MAX_TURN_CHARS);
        assert!(out.ends_with(CUT_MARKER));
    }
}
