//! Reading a model's answer: parse and check it against the path's keys
//! (stray keys ignored, malformed items dropped one by one), then drop the
//! items over the caps (spec: "Consolidation").

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::answer::{
    AnswerError, ConsolidationAnswer, ConsolidationPath, Dropped, EpisodicItem, LessonItem,
    SemanticItem, MAX_EPISODIC, MAX_LESSONS, MAX_SEMANTIC,
};
use super::json::answer_keys;

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
///
/// Lenient where a model's slip costs nothing, strict where it would write
/// something wrong:
/// - keys of the other path, or of no path, are ignored and named in
///   [`ConsolidationAnswer::ignored_keys`] (an endpoint in `json_object`
///   mode that adds `"semantic": []` to a history answer loses nothing);
/// - an item that does not fit its schema (a wrong type, a missing field, a
///   number outside [0, 1], an unknown lesson category) is dropped alone and
///   counted in [`ConsolidationAnswer::malformed`];
/// - a missing list is an empty list; but an answer with none of the path's
///   keys, or a path key of the wrong type, is refused whole.
pub fn parse_answer(
    text: &str,
    path: ConsolidationPath,
    markdown_updates: bool,
) -> Result<ConsolidationAnswer, AnswerError> {
    let doc: Value =
        serde_json::from_str(unfence(text)).map_err(|e| AnswerError::NotJson(e.to_string()))?;
    let Value::Object(fields) = doc else {
        return Err(AnswerError::Schema("the answer is not an object".into()));
    };
    let keys = answer_keys(path, markdown_updates);
    if !keys.iter().any(|k| fields.contains_key(*k)) {
        return Err(AnswerError::Schema(format!(
            "the answer has none of the keys {keys:?}"
        )));
    }
    let mut answer = ConsolidationAnswer::default();
    for (key, value) in fields {
        if !keys.contains(&key.as_str()) {
            answer.ignored_keys.push(key);
            continue;
        }
        let malformed = &mut answer.malformed;
        match key.as_str() {
            "semantic" => {
                answer.semantic = items(&key, value, malformed, |i: &SemanticItem| {
                    in_unit("confidence", i.confidence)
                })?;
            }
            "episodic" => {
                answer.episodic = items(&key, value, malformed, |i: &EpisodicItem| {
                    in_unit("importance", i.importance)
                })?;
            }
            "lessons" => answer.lessons = items(&key, value, malformed, |_: &LessonItem| Ok(()))?,
            "history" => answer.history = text_field(&key, value)?,
            "preferences_update" => answer.preferences_update = text_field(&key, value)?,
            "projects_update" => answer.projects_update = text_field(&key, value)?,
            other => answer.ignored_keys.push(other.to_owned()),
        }
    }
    answer.ignored_keys.sort();
    if !answer.ignored_keys.is_empty() || answer.malformed > 0 {
        tracing::info!(
            ?path,
            ignored_keys = ?answer.ignored_keys,
            malformed = answer.malformed,
            "consolidation answer: keys of no use ignored, malformed items dropped"
        );
    }
    Ok(answer)
}

/// The items of a list key, each checked on its own: one that does not
/// deserialize or fails `check` is counted in `malformed` and left out.
fn items<T: DeserializeOwned>(
    key: &str,
    value: Value,
    malformed: &mut usize,
    check: impl Fn(&T) -> Result<(), AnswerError>,
) -> Result<Vec<T>, AnswerError> {
    let list = match value {
        Value::Array(list) => list,
        Value::Null => return Ok(Vec::new()),
        _ => return Err(AnswerError::Schema(format!("{key} must be a list"))),
    };
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        match serde_json::from_value::<T>(item) {
            Ok(item) if check(&item).is_ok() => out.push(item),
            _ => *malformed += 1,
        }
    }
    Ok(out)
}

/// A text key: a string, or null for none.
fn text_field(key: &str, value: Value) -> Result<Option<String>, AnswerError> {
    match value {
        Value::String(s) => Ok(Some(s)),
        Value::Null => Ok(None),
        _ => Err(AnswerError::Schema(format!("{key} must be a string"))),
    }
}

/// Drops the items over the caps (logged); answers what was dropped.
pub fn apply_caps(answer: &mut ConsolidationAnswer) -> Dropped {
    let dropped = Dropped {
        semantic: answer.semantic.len().saturating_sub(MAX_SEMANTIC),
        episodic: answer.episodic.len().saturating_sub(MAX_EPISODIC),
        lessons: answer.lessons.len().saturating_sub(MAX_LESSONS),
        malformed: answer.malformed,
        ungrounded: 0,
    };
    answer.semantic.truncate(MAX_SEMANTIC);
    answer.episodic.truncate(MAX_EPISODIC);
    answer.lessons.truncate(MAX_LESSONS);
    if dropped.semantic + dropped.episodic + dropped.lessons > 0 {
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
    use super::super::answer::SemanticItem;
    use super::*;
    use crate::vector_store::lessons::LessonCategory;
    use serde_json::json;

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
        // None of the path's keys, or a path key of the wrong type.
        let other = json!({"semantic": [{"key": "pref.a", "value": "b", "confidence": 0.9}]});
        assert!(parse_answer(&other.to_string(), path, false).is_err());
        let wrong = json!({"history": 3, "episodic": [], "lessons": []});
        assert!(parse_answer(&wrong.to_string(), path, false).is_err());
        let wrong = json!({"history": "x", "episodic": "none", "lessons": []});
        assert!(parse_answer(&wrong.to_string(), path, false).is_err());
    }

    #[test]
    fn stray_keys_are_ignored_and_malformed_items_dropped_alone() {
        let path = ConsolidationPath::History;
        // Issue 35: a key of the other path (an endpoint in json_object
        // mode) lost the whole run.
        let extra =
            json!({"history": "x", "episodic": [], "lessons": [], "semantic": [], "notes": "n"});
        let answer = parse_answer(&extra.to_string(), path, false).unwrap();
        assert_eq!(answer.history.as_deref(), Some("x"));
        assert_eq!(answer.ignored_keys, vec!["notes", "semantic"]);
        assert_eq!(answer.malformed, 0);
        // A missing list is empty.
        let missing = json!({"history": "x", "episodic": []});
        let answer = parse_answer(&missing.to_string(), path, false).unwrap();
        assert!(answer.lessons.is_empty());
        // Out of range, unknown category, missing field: only those go.
        let mixed = json!({
            "history": "x",
            "episodic": [
                {"text": "ten chars!!", "importance": 1.5, "tags": []},
                {"text": "the deploy moved to Thursday", "importance": 0.6},
                {"importance": 0.5},
            ],
            "lessons": [
                {"rule": "r", "category": "mood"},
                {"rule": "run the tests first", "category": "tool", "why": "extra fields are fine"},
            ],
        });
        let answer = parse_answer(&mixed.to_string(), path, false).unwrap();
        assert_eq!(answer.malformed, 3);
        assert_eq!(answer.episodic.len(), 1);
        assert_eq!(answer.episodic[0].text, "the deploy moved to Thursday");
        assert_eq!(answer.lessons.len(), 1);
        // Markdown documents only before migration: ignored after it.
        let md = json!({"semantic": [], "preferences_update": "x", "projects_update": "y"});
        let answer = parse_answer(&md.to_string(), ConsolidationPath::Prefs, false).unwrap();
        assert_eq!(answer.preferences_update, None);
        assert_eq!(
            answer.ignored_keys,
            vec!["preferences_update", "projects_update"]
        );
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
                lessons: 2,
                ..Dropped::default()
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
