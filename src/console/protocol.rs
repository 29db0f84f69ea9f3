//! The console's wire format, version [`PROTOCOL_VERSION`] (README:
//! "Operator console"). Pure: parsing request frames and building the
//! frames the daemon sends, so the session loop only moves text.
//!
//! Client → daemon, one JSON object per text frame:
//! `{"id": 1, "cmd": "memory search", "args": {"query": "deploy"}}`.
//! Daemon → client: `hello` once authenticated, then a `response` per
//! request (`{"type": "response", "id", "ok": true, "result"}` or
//! `{"type": "response", "id", "ok": false, "error": {"code", "message"}}`),
//! and for subscriptions `event` and `lagged` frames.

use serde::Deserialize;
use serde_json::{json, Map, Value};

/// The protocol version announced in `hello`; bumped on any change a
/// client could notice.
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest request frame accepted, in bytes (a command line, not a
/// document; imports go through the REST API).
pub const MAX_FRAME_BYTES: usize = 64 * 1024;

/// Largest frame the websocket transport reads at all. Above
/// [`MAX_FRAME_BYTES`] and up to this, a request is read and answered
/// `frame_too_large` with the session kept open; past this, the transport
/// cannot skip the frame, and the session closes with 1009 (too big).
pub const MAX_TRANSPORT_FRAME_BYTES: usize = 16 * MAX_FRAME_BYTES;

/// One request frame.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Echoed in the response (number or string; null when absent).
    #[serde(default)]
    pub id: Value,
    /// The command: CLI words (`memory search`) or a console verb
    /// (`auth`, `subscribe`, `unsubscribe`, `ping`).
    pub cmd: String,
    /// The CLI's options by name.
    #[serde(default)]
    pub args: Map<String, Value>,
}

/// A frame that could not be read as a request.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameError {
    /// The request's id, when it could be found.
    pub id: Value,
    /// Stable code.
    pub code: &'static str,
    /// What was wrong.
    pub message: String,
}

/// Why a request was not carried out: a stable code and words for the
/// operator (the `error` of a response frame).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ConsoleError {
    /// Stable code.
    pub code: &'static str,
    /// What went wrong, in words.
    pub message: String,
}

impl ConsoleError {
    /// An error with `code` and `message`.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// Parses one text frame.
pub fn parse_request(text: &str) -> Result<Request, FrameError> {
    if text.len() > MAX_FRAME_BYTES {
        return Err(FrameError {
            id: Value::Null,
            code: "frame_too_large",
            message: format!("request frames are limited to {MAX_FRAME_BYTES} bytes"),
        });
    }
    let value: Value = serde_json::from_str(text).map_err(|e| FrameError {
        id: Value::Null,
        code: "invalid_json",
        message: format!("the frame is not JSON: {e}"),
    })?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    if !(id.is_null() || id.is_number() || id.is_string()) {
        return Err(FrameError {
            id: Value::Null,
            code: "invalid_request",
            message: "\"id\" must be a number or a string".into(),
        });
    }
    serde_json::from_value::<Request>(value).map_err(|e| FrameError {
        id,
        code: "invalid_request",
        message: format!("a request is {{\"id\", \"cmd\", \"args\"}}: {e}"),
    })
}

/// The first frame after authentication.
pub fn hello_frame(version: &str, commands: &[&str], streams: &[&str]) -> String {
    json!({
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "version": version,
        "commands": commands,
        "streams": streams,
    })
    .to_string()
}

/// A successful answer.
pub fn ok_frame(id: &Value, result: Value) -> String {
    json!({"type": "response", "id": id, "ok": true, "result": result}).to_string()
}

/// A failed answer.
pub fn error_frame(id: &Value, code: &str, message: &str) -> String {
    json!({
        "type": "response",
        "id": id,
        "ok": false,
        "error": {"code": code, "message": message},
    })
    .to_string()
}

/// One live event of `stream`.
pub fn event_frame(stream: &str, data: &impl serde::Serialize) -> String {
    json!({"type": "event", "stream": stream, "data": data}).to_string()
}

/// `missed` events of `stream` were dropped because the client read too
/// slowly (`total` since it subscribed).
pub fn lagged_frame(stream: &str, missed: u64, total: u64) -> String {
    json!({"type": "lagged", "stream": stream, "missed": missed, "total_missed": total}).to_string()
}

/// The text of a string argument, if present.
pub fn str_arg<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_with_or_without_args() {
        let r = parse_request(r#"{"id": 7, "cmd": "memory stats"}"#).unwrap();
        assert_eq!(r.id, json!(7));
        assert_eq!(r.cmd, "memory stats");
        assert!(r.args.is_empty());
        let r = parse_request(r#"{"id":"a","cmd":"memory search","args":{"query":"x"}}"#).unwrap();
        assert_eq!(str_arg(&r.args, "query"), Some("x"));
    }

    #[test]
    fn bad_frames_say_what_is_wrong_and_keep_the_id() {
        assert_eq!(parse_request("nope").unwrap_err().code, "invalid_json");
        let e = parse_request(r#"{"id": 3, "args": {}}"#).unwrap_err();
        assert_eq!((e.code, e.id), ("invalid_request", json!(3)));
        let e = parse_request(r#"{"id": 3, "cmd": "x", "extra": 1}"#).unwrap_err();
        assert_eq!(e.code, "invalid_request");
        let e = parse_request(r#"{"id": [1], "cmd": "x"}"#).unwrap_err();
        assert_eq!((e.code, e.id), ("invalid_request", Value::Null));
        let big = format!(r#"{{"cmd": "{}"}}"#, "x".repeat(MAX_FRAME_BYTES));
        assert_eq!(parse_request(&big).unwrap_err().code, "frame_too_large");
    }

    #[test]
    fn frames_carry_type_and_id() {
        let ok: Value = serde_json::from_str(&ok_frame(&json!(1), json!({"a": 1}))).unwrap();
        assert_eq!(ok["ok"], true);
        assert_eq!(ok["type"], "response");
        let err: Value = serde_json::from_str(&error_frame(&json!(2), "c", "m")).unwrap();
        assert_eq!(err["error"]["code"], "c");
        let hello: Value =
            serde_json::from_str(&hello_frame("1", &["doctor"], &["audit"])).unwrap();
        assert_eq!(hello["protocol"], PROTOCOL_VERSION);
        let lag: Value = serde_json::from_str(&lagged_frame("audit", 3, 5)).unwrap();
        assert_eq!(
            (lag["missed"].as_u64(), lag["total_missed"].as_u64()),
            (Some(3), Some(5))
        );
    }
}
