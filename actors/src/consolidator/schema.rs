//! The consolidation answer: its types, its one JSON Schema (from which the
//! local backend's GBNF grammar and the endpoint's JSON mode are both
//! derived), the per-consolidation caps, and parsing a model's answer.
//!
//! Spec: "Consolidation" (caps `_MAX_SEMANTIC_PER_CONSOLIDATION` = 20,
//! `_MAX_EPISODIC_PER_CONSOLIDATION` = 10, `_MAX_LESSONS_PER_CONSOLIDATION`
//! = 10; `preferences_update` / `projects_update` only while
//! `memory.migrated` is false).
//!
//! Each path asks for its own keys of the one answer type: the prefs path
//! for `semantic` (and the two Markdown documents before migration), the
//! history path for `history`, `episodic` and `lessons`. An answer is all
//! or nothing: not JSON, a missing or unexpected key, a wrong type or a
//! number outside [0, 1] makes it [`AnswerError`] and nothing of it is
//! written. Too many items is not an error: the caps drop the excess
//! (logged), the model having been told the numbers.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::vector_store::lessons::LessonCategory;

/// Most semantic entries one consolidation writes.
pub const MAX_SEMANTIC: usize = 20;
/// Most episodic fragments one consolidation writes.
pub const MAX_EPISODIC: usize = 10;
/// Most lessons one consolidation writes (each can cost six embeds).
pub const MAX_LESSONS: usize = 10;

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

/// Which consolidation path an answer is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsolidationPath {
    /// Every 30 messages: semantic entries (and preferences.md /
    /// projects.md before migration).
    Prefs,
    /// After the idle threshold: the day's history, episodic fragments,
    /// implicit lessons.
    History,
}

/// A semantic entry the model proposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemanticItem {
    /// `pref.*`, `project.*` or `user.*`.
    pub key: String,
    /// The value.
    pub value: String,
    /// In [0, 1]; the store's confidence gate applies.
    pub confidence: f64,
}

/// An episodic fragment the model proposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpisodicItem {
    /// What happened.
    pub text: String,
    /// In [0, 1].
    pub importance: f64,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// An implicit correction the model found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LessonItem {
    /// What to do.
    pub rule: String,
    /// What not to do, if the user said.
    #[serde(default)]
    pub negative: Option<String>,
    /// `tool`, `preference` or `knowledge`.
    pub category: LessonCategory,
}

/// The model's answer (the keys of one path).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsolidationAnswer {
    /// Semantic entries (prefs path).
    #[serde(default)]
    pub semantic: Vec<SemanticItem>,
    /// Episodic fragments (history path).
    #[serde(default)]
    pub episodic: Vec<EpisodicItem>,
    /// Implicit lessons (history path).
    #[serde(default)]
    pub lessons: Vec<LessonItem>,
    /// The summary for `history/{date}.md` (history path).
    #[serde(default)]
    pub history: Option<String>,
    /// preferences.md, whole (prefs path, before migration).
    #[serde(default)]
    pub preferences_update: Option<String>,
    /// projects.md, whole (prefs path, before migration).
    #[serde(default)]
    pub projects_update: Option<String>,
}

/// Why an answer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// Not JSON, or cut off.
    #[error("answer is not JSON: {0}")]
    NotJson(String),
    /// JSON, but not the schema.
    #[error("answer does not match the schema: {0}")]
    Schema(String),
}

/// How many items the caps dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// Semantic entries over [`MAX_SEMANTIC`].
    pub semantic: usize,
    /// Episodic fragments over [`MAX_EPISODIC`].
    pub episodic: usize,
    /// Lessons over [`MAX_LESSONS`].
    pub lessons: usize,
}

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

/// Takes the JSON out of a fenced block, if the model wrapped it in one.
fn unfence(text: &str) -> &str {
    let t = text.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

fn in_unit(field: &str, value: f64) -> Result<(), AnswerError> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(AnswerError::Schema(format!(
            "{field} must be in [0, 1], got {value}"
        )))
    }
}

/// Parses and checks a path's answer (see the module docs).
pub fn parse_answer(
    text: &str,
    path: ConsolidationPath,
    markdown_updates: bool,
) -> Result<ConsolidationAnswer, AnswerError> {
    let doc: Value =
        serde_json::from_str(unfence(text)).map_err(|e| AnswerError::NotJson(e.to_string()))?;
    let Value::Object(fields) = &doc else {
        return Err(AnswerError::Schema("the answer is not an object".into()));
    };
    let keys = answer_keys(path, markdown_updates);
    if let Some(extra) = fields.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(AnswerError::Schema(format!("unexpected key {extra:?}")));
    }
    if let Some(missing) = keys.iter().find(|k| !fields.contains_key(**k)) {
        return Err(AnswerError::Schema(format!("missing key {missing:?}")));
    }
    let answer: ConsolidationAnswer =
        serde_json::from_value(doc).map_err(|e| AnswerError::Schema(e.to_string()))?;
    for item in &answer.semantic {
        in_unit("confidence", item.confidence)?;
    }
    for item in &answer.episodic {
        in_unit("importance", item.importance)?;
    }
    Ok(answer)
}

/// Drops the items over the caps (logged); answers what was dropped.
pub fn apply_caps(answer: &mut ConsolidationAnswer) -> Dropped {
    let dropped = Dropped {
        semantic: answer.semantic.len().saturating_sub(MAX_SEMANTIC),
        episodic: answer.episodic.len().saturating_sub(MAX_EPISODIC),
        lessons: answer.lessons.len().saturating_sub(MAX_LESSONS),
    };
    answer.semantic.truncate(MAX_SEMANTIC);
    answer.episodic.truncate(MAX_EPISODIC);
    answer.lessons.truncate(MAX_LESSONS);
    if dropped != Dropped::default() {
        tracing::warn!(
            semantic = dropped.semantic,
            episodic = dropped.episodic,
            lessons = dropped.lessons,
            "consolidation answer over the caps; excess items dropped"
        );
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history_answer(episodes: usize, lessons: usize) -> String {
        let episodic: Vec<Value> = (0..episodes)
            .map(|i| json!({"text": format!("episode number {i} happened"), "importance": 0.5, "tags": []}))
            .collect();
        let lessons: Vec<Value> = (0..lessons)
            .map(|i| json!({"rule": format!("rule {i}"), "category": "tool"}))
            .collect();
        json!({"history": "a day", "episodic": episodic, "lessons": lessons}).to_string()
    }

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

    #[test]
    fn a_good_answer_parses() {
        let text = json!({
            "semantic": [{"key": "pref.editor", "value": "neovim", "confidence": 0.9}],
            "preferences_update": "# Preferences\n- neovim",
            "projects_update": "# Projects",
        })
        .to_string();
        let answer = parse_answer(&text, ConsolidationPath::Prefs, true).unwrap();
        assert_eq!(answer.semantic[0].key, "pref.editor");
        assert_eq!(
            answer.preferences_update.as_deref(),
            Some("# Preferences\n- neovim")
        );
        let fenced = format!("```json\n{}\n```", history_answer(1, 1));
        let answer = parse_answer(&fenced, ConsolidationPath::History, false).unwrap();
        assert_eq!(answer.lessons[0].category, LessonCategory::Tool);
        assert_eq!(answer.history.as_deref(), Some("a day"));
    }

    #[test]
    fn malformed_truncated_or_off_schema_answers_are_errors() {
        let full = history_answer(2, 1);
        let cut = &full[..full.len() - 5];
        let path = ConsolidationPath::History;
        assert!(matches!(
            parse_answer(cut, path, false),
            Err(AnswerError::NotJson(_))
        ));
        assert!(matches!(
            parse_answer("sure! here", path, false),
            Err(AnswerError::NotJson(_))
        ));
        assert!(matches!(
            parse_answer("[]", path, false),
            Err(AnswerError::Schema(_))
        ));
        // A key of the other path, a missing key, a wrong type, a range.
        let extra = json!({"history": "x", "episodic": [], "lessons": [], "semantic": []});
        assert!(parse_answer(&extra.to_string(), path, false).is_err());
        let missing = json!({"history": "x", "episodic": []});
        assert!(parse_answer(&missing.to_string(), path, false).is_err());
        let wrong = json!({"history": 3, "episodic": [], "lessons": []});
        assert!(parse_answer(&wrong.to_string(), path, false).is_err());
        let range = json!({"history": "x", "episodic": [{"text": "ten chars!!", "importance": 1.5, "tags": []}], "lessons": []});
        assert!(parse_answer(&range.to_string(), path, false).is_err());
        let category =
            json!({"history": "x", "episodic": [], "lessons": [{"rule": "r", "category": "mood"}]});
        assert!(parse_answer(&category.to_string(), path, false).is_err());
        // Markdown documents only before migration.
        let md = json!({"semantic": [], "preferences_update": "x", "projects_update": "y"});
        assert!(parse_answer(&md.to_string(), ConsolidationPath::Prefs, false).is_err());
    }

    #[test]
    fn the_caps_drop_the_excess() {
        let mut answer =
            parse_answer(&history_answer(13, 12), ConsolidationPath::History, false).unwrap();
        answer.semantic = (0..25)
            .map(|i| SemanticItem {
                key: format!("pref.k{i}"),
                value: "v".into(),
                confidence: 0.9,
            })
            .collect();
        let dropped = apply_caps(&mut answer);
        assert_eq!(
            dropped,
            Dropped {
                semantic: 5,
                episodic: 3,
                lessons: 2
            }
        );
        assert_eq!(answer.semantic.len(), MAX_SEMANTIC);
        assert_eq!(answer.episodic.len(), MAX_EPISODIC);
        assert_eq!(answer.lessons.len(), MAX_LESSONS);
        // The first items are the ones kept.
        assert_eq!(answer.episodic[9].text, "episode number 9 happened");
        assert_eq!(apply_caps(&mut answer), Dropped::default());
    }
}
