//! The JSON Schema of a path's answer (spec: "Consolidation"): every key
//! of the path required, nothing else allowed, every string and array
//! bounded. The local backend turns it into a GBNF grammar
//! (`llm/grammar.rs`), the endpoint gets it as its JSON mode.

use serde_json::{json, Value};

use super::answer::{ConsolidationPath, MAX_EPISODIC, MAX_LESSONS, MAX_SEMANTIC};

/// Longest strings the schema allows (the grammar bounds every string so a
/// small model cannot loop inside one until the token limit).
const KEY_CHARS: usize = 60;
const VALUE_CHARS: usize = 200;
const TEXT_CHARS: usize = 400;
const RULE_CHARS: usize = 200;
const TAG_CHARS: usize = 24;
const MAX_TAGS: usize = 4;
const HISTORY_CHARS: usize = 1200;
const DOCUMENT_CHARS: usize = 3000;

/// The answer's keys for a path, in the order the schema lists them.
pub fn answer_keys(path: ConsolidationPath, markdown_updates: bool) -> Vec<&'static str> {
    match path {
        ConsolidationPath::Prefs if markdown_updates => {
            vec!["semantic", "preferences_update", "projects_update"]
        }
        ConsolidationPath::Prefs => vec!["semantic"],
        ConsolidationPath::History => vec!["history", "episodic", "lessons"],
    }
}

/// A number in [0, 1] in steps of 0.1, as an enum: llama.cpp's grammar
/// converter ignores `minimum`/`maximum`, so a plain bounded number would
/// let a small model answer 2.9 (measured with `bench consolidate`);
/// literal alternatives keep the grammar and the schema in agreement.
fn unit_interval() -> Value {
    let steps: Vec<f64> = (0..=10).map(|i| f64::from(i) / 10.0).collect();
    json!({"type": "number", "enum": steps})
}

fn string(max: usize) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": max})
}

fn property(key: &str) -> Value {
    match key {
        "semantic" => json!({
            "type": "array",
            "maxItems": MAX_SEMANTIC,
            "items": {
                "type": "object",
                "properties": {
                    "key": {
                        "type": "string",
                        "pattern": "^(pref|project|user)\\.[a-z0-9]{1,20}(_[a-z0-9]{1,20}){0,3}$",
                        "maxLength": KEY_CHARS,
                    },
                    "value": string(VALUE_CHARS),
                    "confidence": unit_interval(),
                },
                "required": ["key", "value", "confidence"],
                "additionalProperties": false,
            },
        }),
        "episodic" => json!({
            "type": "array",
            "maxItems": MAX_EPISODIC,
            "items": {
                "type": "object",
                "properties": {
                    "text": string(TEXT_CHARS),
                    "importance": unit_interval(),
                    "tags": {"type": "array", "maxItems": MAX_TAGS, "items": string(TAG_CHARS)},
                },
                "required": ["text", "importance", "tags"],
                "additionalProperties": false,
            },
        }),
        "lessons" => json!({
            "type": "array",
            "maxItems": MAX_LESSONS,
            "items": {
                "type": "object",
                "properties": {
                    "rule": string(RULE_CHARS),
                    "negative": string(RULE_CHARS),
                    "category": {"enum": ["tool", "preference", "knowledge"]},
                },
                "required": ["rule", "category"],
                "additionalProperties": false,
            },
        }),
        "history" => string(HISTORY_CHARS),
        _ => string(DOCUMENT_CHARS),
    }
}

/// The JSON Schema of a path's answer: every key of the path required,
/// nothing else allowed.
pub fn answer_schema(path: ConsolidationPath, markdown_updates: bool) -> Value {
    let keys = answer_keys(path, markdown_updates);
    let properties: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| ((*k).to_owned(), property(k)))
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": keys,
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_lists_exactly_the_paths_keys_with_the_caps() {
        let prefs = answer_schema(ConsolidationPath::Prefs, true);
        assert_eq!(
            prefs["required"],
            json!(["semantic", "preferences_update", "projects_update"])
        );
        assert_eq!(prefs["properties"]["semantic"]["maxItems"], 20);
        let migrated = answer_schema(ConsolidationPath::Prefs, false);
        assert_eq!(migrated["required"], json!(["semantic"]));
        let history = answer_schema(ConsolidationPath::History, false);
        assert_eq!(
            history["required"],
            json!(["history", "episodic", "lessons"])
        );
        assert_eq!(history["properties"]["episodic"]["maxItems"], 10);
        assert_eq!(history["properties"]["lessons"]["maxItems"], 10);
        assert_eq!(history["additionalProperties"], false);
    }

    #[test]
    fn every_schema_has_a_grammar() {
        for (path, md) in [
            (ConsolidationPath::Prefs, true),
            (ConsolidationPath::Prefs, false),
            (ConsolidationPath::History, false),
        ] {
            let grammar = crate::llm::schema_grammar(&answer_schema(path, md)).unwrap();
            assert!(grammar.contains("root ::="), "{grammar}");
            // Numbers are bounded literals, not llama.cpp's open `number`.
            if path == ConsolidationPath::Prefs {
                assert!(grammar.contains("\"0.9\""), "{grammar}");
                assert!(!grammar.contains("\"2"), "{grammar}");
            }
            for key in answer_keys(path, md) {
                assert!(grammar.contains(key), "{key} missing from {grammar}");
            }
        }
    }
}
