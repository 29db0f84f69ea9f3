//! Text helpers every context block shares: how a stored value reads in a
//! prompt, and how lines are packed under a character cap.

use serde_json::Value;

/// The value as it appears in a prompt: a JSON string's contents, anything
/// else as compact JSON; newlines folded so each entry stays one line.
pub fn value_text(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text.replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiline_values_stay_on_one_line() {
        assert_eq!(value_text(&Value::String("a\nb\r\nc".into())), "a b  c");
    }
}
