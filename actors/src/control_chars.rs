//! Characters no stored text may carry: NUL and the Unicode bidirectional
//! embedding, override and isolate controls (U+202A–U+202E,
//! U+2066–U+2069).
//!
//! Everything a memory writer stores can be injected into a later prompt.
//! A bidi override makes the text a human reviews on the dashboard read
//! differently from what the model is fed ("Trojan Source"), and a NUL
//! truncates the text in C-string consumers (llama.cpp's tokenizer, logs)
//! while the rest still reaches the model. Neither has a legitimate use in
//! a fact, a fragment, a lesson or a Markdown note.
//!
//! **Reject, don't strip.** Every writer refuses such text with
//! [`ForbiddenCharacter`] (HTTP 422 `control_characters`) instead of
//! silently removing the characters: stripping would store something other
//! than what the caller sent (and an override's removal can change what the
//! text says), a rejection names the offending code point so the caller can
//! fix its input, and nothing half-cleaned ever becomes a memory. The one
//! exception is episodic tags, which were always normalized (only
//! letters, digits and `-_:.` survive), so these characters were already
//! dropped there; they are refused there too for a consistent answer.

use serde_json::Value;

/// A stored text contained a forbidden character; nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{field} contains the control character {code_point} (NUL and bidirectional \
     override characters are refused: stored text reaches prompts)"
)]
pub struct ForbiddenCharacter {
    /// Which part of the write (`value`, `text`, `rule`, …).
    pub field: &'static str,
    /// The first offending character as `U+XXXX`.
    pub code_point: String,
}

/// Whether `c` may never be stored.
pub fn is_forbidden(c: char) -> bool {
    c == '\0' || ('\u{202A}'..='\u{202E}').contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// The first forbidden character of `text`, if any.
pub fn find_forbidden(text: &str) -> Option<char> {
    text.chars().find(|c| is_forbidden(*c))
}

/// Refuses `text` if it holds a forbidden character, naming `field`.
pub fn check_text(field: &'static str, text: &str) -> Result<(), ForbiddenCharacter> {
    match find_forbidden(text) {
        None => Ok(()),
        Some(c) => Err(ForbiddenCharacter {
            field,
            code_point: format!("U+{:04X}", u32::from(c)),
        }),
    }
}

/// Refuses a JSON value if any string leaf or object key (at any depth)
/// holds a forbidden character: a nested string reaches the prompt too.
pub fn check_json(field: &'static str, value: &Value) -> Result<(), ForbiddenCharacter> {
    match value {
        Value::String(s) => check_text(field, s),
        Value::Array(items) => items.iter().try_for_each(|v| check_json(field, v)),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            check_text(field, k)?;
            check_json(field, v)
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nul_and_every_bidi_control_are_forbidden() {
        for c in [
            '\0', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}',
        ] {
            assert!(is_forbidden(c), "{c:?}");
        }
        for c in ['\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}'] {
            assert!(is_forbidden(c), "{c:?}");
        }
    }

    #[test]
    fn ordinary_text_and_neighbours_pass() {
        for c in [
            '\t', '\n', '\r', 'é', '東', '\u{2029}', '\u{202F}', '\u{2065}', '\u{206A}',
        ] {
            assert!(!is_forbidden(c), "{c:?}");
        }
        assert_eq!(check_text("text", "use rg, not grep — 東京"), Ok(()));
    }

    #[test]
    fn the_error_names_field_and_code_point() {
        let err = check_text("rule", "abc\u{202E}def").unwrap_err();
        assert_eq!(err.field, "rule");
        assert_eq!(err.code_point, "U+202E");
        assert!(err.to_string().contains("U+202E"));
        assert_eq!(check_text("text", "a\0b").unwrap_err().code_point, "U+0000");
    }

    #[test]
    fn nested_strings_and_keys_are_checked() {
        assert!(check_json("value", &json!({"a": [1, {"b": "x\u{2066}y"}]})).is_err());
        assert!(check_json("value", &json!({"k\0": 1})).is_err());
        assert!(check_json("value", &json!({"a": [1, true, null, "fine"]})).is_ok());
    }
}
