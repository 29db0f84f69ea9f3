//! Validation of semantic writes (spec: "Semantic Memory").
//!
//! Pure functions: the actor calls them before it opens a transaction, so a
//! rejected write never touches the database.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::vector_store::error::VectorStoreError;

/// Prefixes every install accepts. `lesson.` is the lessons tier writing into
/// the same table; the other three are the fact prefixes.
pub const BUILTIN_PREFIXES: &[&str] = &["pref.", "project.", "user.", "lesson."];

/// Keys under this prefix are lessons: written only through the lesson
/// path, and rendered in their own `[Learned corrections]` block.
pub const LESSON_PREFIX: &str = "lesson.";

/// Between a lesson's rule and its negative in the stored text.
pub const NEGATIVE_SEPARATOR: &str = " — NOT: ";

/// Longest key accepted, in bytes (keys are ASCII by construction).
pub const MAX_KEY_LEN: usize = 100;

/// Largest value accepted, as compact serialized JSON.
pub const MAX_VALUE_BYTES: usize = 4096;

/// Confidence a write needs unless its source is [`USER_EXPLICIT`].
pub const DEFAULT_CONFIDENCE_THRESHOLD: f64 = 0.8;

/// The source that bypasses the confidence gate and wins every conflict.
pub const USER_EXPLICIT: &str = "user_explicit";

/// The source of what an agent writes through its own surfaces (MCP): it
/// ranks below the user in the conflict ladder like any automated source,
/// and it may not remove a row the user stated (issue 42).
pub const AGENT: &str = "agent";

static KEY_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-z][a-z0-9_.]*[a-z0-9]$").unwrap_or_else(|e| panic!("key regex: {e}"))
});

static SOURCE_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-z][a-z0-9_]{0,31}$").unwrap_or_else(|e| panic!("source regex: {e}"))
});

static PREFIX_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-z][a-z0-9_]*$").unwrap_or_else(|e| panic!("prefix regex: {e}"))
});

/// Normalizes a configured extra prefix (`team` or `team.`) to `team.`.
pub fn normalize_prefix(prefix: &str) -> Result<String, String> {
    let bare = prefix.strip_suffix('.').unwrap_or(prefix);
    if PREFIX_RE.is_match(bare) {
        Ok(format!("{bare}."))
    } else {
        Err(format!(
            "invalid key prefix {prefix:?}: use lowercase letters, digits and '_', starting with a letter"
        ))
    }
}

/// Refuses a `lesson.*` key at a public semantic entry point: a lesson
/// written as a plain semantic row would skip the lesson rules (1,000
/// characters, dedup, rule-derived key, text only) and still be injected
/// under "ALWAYS follow these". The lesson path itself writes its rows
/// through `write::write`, which does not call this.
pub(crate) fn refuse_lesson_key(key: &str) -> Result<(), VectorStoreError> {
    if key.starts_with(LESSON_PREFIX) {
        return Err(VectorStoreError::LessonKeyReserved {
            key: key.to_owned(),
        });
    }
    Ok(())
}

/// Checks a key's shape, length and prefix allowlist.
pub(crate) fn validate_key(key: &str, extra_prefixes: &[String]) -> Result<(), VectorStoreError> {
    if key.len() > MAX_KEY_LEN {
        return Err(VectorStoreError::InvalidKey(format!(
            "key is {} bytes; the limit is {MAX_KEY_LEN}",
            key.len()
        )));
    }
    if !KEY_RE.is_match(key) {
        return Err(VectorStoreError::InvalidKey(format!(
            "key {key:?} must match ^[a-z][a-z0-9_.]*[a-z0-9]$ (lowercase ASCII, digits, '_' and '.')"
        )));
    }
    let allowed = BUILTIN_PREFIXES
        .iter()
        .copied()
        .chain(extra_prefixes.iter().map(String::as_str));
    if allowed
        .clone()
        .any(|p| key.starts_with(p) && key.len() > p.len())
    {
        Ok(())
    } else {
        Err(VectorStoreError::KeyNotAllowed {
            key: key.to_owned(),
            allowed: allowed.map(str::to_owned).collect(),
        })
    }
}

/// Deepest nesting of arrays/objects a value may have (a scalar is depth 0,
/// `[1]` depth 1). An export wraps each value four levels deep (document →
/// `semantic` → entry → `value`), and JSON parsers stop at 128 levels
/// (serde_json's default), so a value this deep always round-trips through
/// export and import with a wide margin; nothing a person stores as a
/// preference or fact comes near it.
pub const MAX_VALUE_DEPTH: usize = 32;

/// The nesting depth of `value`, computed without recursion (a hostile
/// value cannot overflow the stack here).
pub(crate) fn value_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// Checks a value and returns its canonical serialization (compact JSON with
/// sorted object keys, so an unchanged value always compares equal).
pub(crate) fn validate_value(value: &Value) -> Result<String, VectorStoreError> {
    if value.is_null() {
        return Err(VectorStoreError::InvalidValue(
            "value must not be null; delete the key to remove it".to_owned(),
        ));
    }
    let depth = value_depth(value);
    if depth > MAX_VALUE_DEPTH {
        return Err(VectorStoreError::InvalidValue(format!(
            "value is nested {depth} levels deep; at most {MAX_VALUE_DEPTH} are allowed"
        )));
    }
    let text = serde_json::to_string(&canonical(value))
        .map_err(|e| VectorStoreError::InvalidValue(format!("value is not serializable: {e}")))?;
    if text.len() > MAX_VALUE_BYTES {
        return Err(VectorStoreError::ValueTooLarge {
            size: text.len(),
            max: MAX_VALUE_BYTES,
        });
    }
    Ok(text)
}

/// `value` with every object's keys in sorted order, so equal values store
/// (and compare, and dedup) as equal text. Done explicitly: whether
/// `serde_json::Map` is sorted depends on its `preserve_order` feature,
/// which any crate in the build may switch on (rmcp-actix-web does).
/// Recursion is bounded by the depth check before it.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Checks a source label.
pub(crate) fn validate_source(source: &str) -> Result<(), VectorStoreError> {
    if SOURCE_RE.is_match(source) {
        Ok(())
    } else {
        Err(VectorStoreError::InvalidSource(format!(
            "source {source:?} must match ^[a-z][a-z0-9_]{{0,31}}$"
        )))
    }
}

/// Checks the confidence range and the gate for automated sources.
pub(crate) fn validate_confidence(
    confidence: f64,
    source: &str,
    threshold: f64,
) -> Result<(), VectorStoreError> {
    if !confidence.is_finite() || !(0.0..=1.0).contains(&confidence) {
        return Err(VectorStoreError::InvalidConfidence(format!(
            "confidence must be a finite number in [0, 1], got {confidence}"
        )));
    }
    if source != USER_EXPLICIT && confidence < threshold {
        return Err(VectorStoreError::BelowConfidenceThreshold {
            confidence,
            threshold,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lesson_keys_are_reserved_at_the_semantic_entry_points() {
        for key in ["lesson.x", "lesson.abc123"] {
            assert!(matches!(
                refuse_lesson_key(key),
                Err(VectorStoreError::LessonKeyReserved { .. })
            ));
        }
        for key in ["pref.lesson", "lessons.x", "user.lesson.x"] {
            assert!(refuse_lesson_key(key).is_ok(), "{key}");
        }
    }

    fn nested(depth: usize) -> Value {
        let mut v = Value::from(1);
        for _ in 0..depth {
            v = Value::Array(vec![v]);
        }
        v
    }

    #[test]
    fn nesting_is_bounded_at_a_depth_that_round_trips() {
        assert_eq!(value_depth(&Value::from("x")), 0);
        assert_eq!(value_depth(&serde_json::json!({"a": [1, {"b": 2}]})), 3);
        assert!(validate_value(&nested(MAX_VALUE_DEPTH)).is_ok());
        let deep = validate_value(&nested(MAX_VALUE_DEPTH + 1));
        assert!(matches!(deep, Err(VectorStoreError::InvalidValue(m)) if m.contains("nested")));
        // The deepest accepted value survives serialization inside an
        // export document (four levels of wrapping) and parsing back.
        let doc = serde_json::json!({"semantic": [{"value": nested(MAX_VALUE_DEPTH)}]});
        let text = serde_json::to_string(&doc).unwrap();
        assert!(serde_json::from_str::<Value>(&text).is_ok());
        // A hostile depth is measured without recursion.
        assert_eq!(value_depth(&nested(2_000)), 2_000);
    }

    fn no_extra() -> Vec<String> {
        Vec::new()
    }

    #[test]
    fn keys_follow_shape_and_allowlist() {
        for ok in [
            "pref.theme",
            "project.kiro_crew.lang",
            "user.name",
            "lesson.abc123",
            "pref.a1",
        ] {
            assert!(validate_key(ok, &no_extra()).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "pref.",
            "Pref.theme",
            "pref.theme.",
            "pref.thème",
            "pref.the me",
            "pref-theme",
            "1pref.x",
            "pref.x_",
            "pref.X",
        ] {
            assert!(
                matches!(
                    validate_key(bad, &no_extra()),
                    Err(VectorStoreError::InvalidKey(_))
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            validate_key("team.lead", &no_extra()),
            Err(VectorStoreError::KeyNotAllowed { .. })
        ));
        assert!(validate_key("team.lead", &["team.".to_owned()]).is_ok());
        // A bare prefix is never a key.
        assert!(validate_key("prefx", &no_extra()).is_err());
    }

    #[test]
    fn key_length_boundary() {
        let at_limit = format!("pref.{}", "a".repeat(MAX_KEY_LEN - 5));
        assert_eq!(at_limit.len(), 100);
        assert!(validate_key(&at_limit, &no_extra()).is_ok());
        let over = format!("{at_limit}a");
        assert!(matches!(
            validate_key(&over, &no_extra()),
            Err(VectorStoreError::InvalidKey(_))
        ));
    }

    #[test]
    fn value_size_boundary() {
        // A JSON string serializes with two quote bytes.
        let at_limit = Value::String("x".repeat(MAX_VALUE_BYTES - 2));
        assert_eq!(validate_value(&at_limit).unwrap().len(), MAX_VALUE_BYTES);
        let over = Value::String("x".repeat(MAX_VALUE_BYTES - 1));
        assert!(matches!(
            validate_value(&over),
            Err(VectorStoreError::ValueTooLarge { size: 4097, .. })
        ));
        assert!(validate_value(&Value::Null).is_err());
    }

    #[test]
    fn canonical_values_sort_object_keys() {
        let a = serde_json::json!({"b": 1, "a": {"d": [{"z": 0, "y": 1}], "c": 2}});
        let b = serde_json::json!({"a": {"c": 2, "d": [{"y": 1, "z": 0}]}, "b": 1});
        assert_eq!(validate_value(&a).unwrap(), validate_value(&b).unwrap());
        assert_eq!(
            validate_value(&a).unwrap(),
            r#"{"a":{"c":2,"d":[{"y":1,"z":0}]},"b":1}"#
        );
    }

    #[test]
    fn confidence_range_and_gate() {
        let t = DEFAULT_CONFIDENCE_THRESHOLD;
        assert!(validate_confidence(0.8, "consolidation", t).is_ok());
        assert!(matches!(
            validate_confidence(0.79, "consolidation", t),
            Err(VectorStoreError::BelowConfidenceThreshold { .. })
        ));
        assert!(validate_confidence(0.1, USER_EXPLICIT, t).is_ok());
        for bad in [f64::NAN, f64::INFINITY, -0.1, 1.01] {
            assert!(matches!(
                validate_confidence(bad, USER_EXPLICIT, t),
                Err(VectorStoreError::InvalidConfidence(_))
            ));
        }
    }

    #[test]
    fn sources_and_prefixes() {
        assert!(validate_source("user_explicit").is_ok());
        assert!(validate_source("User").is_err());
        assert!(validate_source("").is_err());
        assert_eq!(normalize_prefix("team").unwrap(), "team.");
        assert_eq!(normalize_prefix("team.").unwrap(), "team.");
        assert!(normalize_prefix("Team").is_err());
        assert!(normalize_prefix("a.b").is_err());
    }
}
