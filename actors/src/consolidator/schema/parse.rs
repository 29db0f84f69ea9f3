//! Reading a model's answer: parse and check it against the path's keys
//! (all or nothing), then drop the items over the caps (spec:
//! "Consolidation").

use serde_json::Value;

use super::answer::{
    AnswerError, ConsolidationAnswer, ConsolidationPath, Dropped, MAX_EPISODIC, MAX_LESSONS,
    MAX_SEMANTIC,
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
