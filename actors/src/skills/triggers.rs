//! Trigger matching (spec: "Trigger matching (get_triggered_skills)"): the
//! per-message word overlap of a message with each skill's `triggers`.
//!
//! A trigger is a word or a phrase; it matches when every one of its words
//! is in the message (words: lowercase runs of letters and digits, so
//! `tiny-url` is `tiny` + `url` on both sides). A skill's score is the
//! number of its positive triggers that match; one matching `!`-prefixed
//! trigger excludes the skill. `always` skills are skipped (they are in
//! every session already). The best `max` skills win (score, then name);
//! `max == 0` is the stock "off". Triggers are compiled once per catalog
//! refresh, so a message costs one tokenization plus set look-ups.

use std::collections::HashSet;

/// Longest description kept in a pointer line, in characters.
pub(crate) const HINT_DESCRIPTION_CHARS: usize = 160;
/// The pointer block's header.
pub(crate) const HINT_HEADER: &str = "[Relevant skills for this message]";

/// A skill's triggers, tokenized.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CompiledTriggers {
    positive: Vec<Vec<String>>,
    negative: Vec<Vec<String>>,
}

/// Lowercase words of `text` (runs of letters and digits).
pub(crate) fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn word_list(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl CompiledTriggers {
    /// Tokenizes `triggers` (`!x` excludes; empty ones are dropped).
    pub(crate) fn compile(triggers: &[String]) -> Self {
        let mut out = Self::default();
        for t in triggers {
            let t = t.trim();
            let (list, text) = match t.strip_prefix('!') {
                Some(rest) => (&mut out.negative, rest),
                None => (&mut out.positive, t),
            };
            let w = word_list(text);
            if !w.is_empty() {
                list.push(w);
            }
        }
        out
    }

    /// Whether there is anything to match.
    pub(crate) fn is_empty(&self) -> bool {
        self.positive.is_empty()
    }

    /// Positive triggers matched by `message_words`; 0 when a negative one
    /// matches.
    pub(crate) fn score(&self, message_words: &HashSet<String>) -> usize {
        let hit = |t: &Vec<String>| t.iter().all(|w| message_words.contains(w));
        if self.negative.iter().any(hit) {
            return 0;
        }
        self.positive.iter().filter(|t| hit(t)).count()
    }
}

/// One candidate for matching.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate<'a> {
    /// The skill's key.
    pub(crate) name: &'a str,
    /// `always: true` skills are skipped.
    pub(crate) always: bool,
    /// Its compiled triggers.
    pub(crate) triggers: &'a CompiledTriggers,
}

/// The names of the best-scoring skills for `message`, at most `max`.
pub(crate) fn match_triggers<'a>(
    candidates: impl IntoIterator<Item = Candidate<'a>>,
    message: &str,
    max: usize,
) -> Vec<(&'a str, usize)> {
    if max == 0 {
        return Vec::new();
    }
    let message_words = words(message);
    if message_words.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(&str, usize)> = candidates
        .into_iter()
        .filter(|c| !c.always && !c.triggers.is_empty())
        .filter_map(|c| {
            let s = c.triggers.score(&message_words);
            (s > 0).then_some((c.name, s))
        })
        .collect();
    scored.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    scored.truncate(max);
    scored
}

/// `text` cut to `max` characters with an ellipsis.
pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

/// The pointer line of a pointer-only (`inject_on_trigger: false`) match:
/// name, truncated description, SKILL.md path and its directory.
pub(crate) fn pointer_line(name: &str, description: Option<&str>, path: &str, dir: &str) -> String {
    let desc = truncate_chars(description.unwrap_or(""), HINT_DESCRIPTION_CHARS);
    let desc = if desc.is_empty() {
        String::new()
    } else {
        format!(": {desc}")
    };
    format!("- {name}{desc} (read {path}; dir {dir})")
}

/// The `[Relevant skills for this message]` block, or "" with no lines.
pub(crate) fn hint_block(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    format!("{HINT_HEADER}\n{}\n", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(t: &[&str]) -> CompiledTriggers {
        CompiledTriggers::compile(&t.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn overlap_phrases_and_negatives() {
        let deploy = compiled(&["deploy", "roll back", "!dry-run"]);
        let docs = compiled(&["docs", "readme"]);
        let pinned = compiled(&["deploy"]);
        let none = compiled(&[]);
        let cands = [
            Candidate {
                name: "deploy",
                always: false,
                triggers: &deploy,
            },
            Candidate {
                name: "docs",
                always: false,
                triggers: &docs,
            },
            Candidate {
                name: "pinned",
                always: true,
                triggers: &pinned,
            },
            Candidate {
                name: "none",
                always: false,
                triggers: &none,
            },
        ];
        assert_eq!(
            match_triggers(cands, "Please DEPLOY it", 5),
            [("deploy", 1)]
        );
        // A phrase needs all its words, in any order.
        assert_eq!(
            match_triggers(cands, "back to the roll", 5),
            [("deploy", 1)]
        );
        assert_eq!(
            match_triggers(cands, "deploy then roll back", 5),
            [("deploy", 2)]
        );
        assert!(match_triggers(cands, "deploy as a dry-run", 5).is_empty());
        assert!(match_triggers(cands, "rollback", 5).is_empty());
        assert!(match_triggers(cands, "deploy", 0).is_empty());
        let both = match_triggers(cands, "deploy the readme docs", 5);
        assert_eq!(both, [("docs", 2), ("deploy", 1)]);
        assert_eq!(
            match_triggers(cands, "deploy the readme docs", 1),
            [("docs", 2)]
        );
    }

    #[test]
    fn pointer_lines() {
        let line = pointer_line("a", Some("line one\nline two"), "/s/a/SKILL.md", "/s/a");
        assert_eq!(
            line,
            "- a: line one line two (read /s/a/SKILL.md; dir /s/a)"
        );
        let long = "x".repeat(500);
        let line = pointer_line("a", Some(&long), "p", "d");
        assert!(line.chars().count() < 200);
        assert_eq!(hint_block(&[]), "");
        assert!(hint_block(&[line]).starts_with(HINT_HEADER));
    }
}
