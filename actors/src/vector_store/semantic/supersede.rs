//! Which lower-layer text a semantic fact (or a lesson) supersedes in a
//! prompt (spec "Conflict resolution: which layer wins"; issue 13: "when a
//! lower layer contradicts a higher one on the same key/subject only the
//! higher one is included").
//!
//! A contradiction needs two things: the same subject, and a different
//! value. Both are judged on stemmed words, as the rest of the store does:
//!
//! - A **lesson** supersedes a semantic row when the lesson's rule (the
//!   part before "— NOT:") names every subject word of the row's key
//!   (`pref.package_manager` → `packag`, `manag`) and does not state the
//!   row's value: "Use pnpm as the package manager" beats
//!   `pref.package_manager: npm`, and leaves `…: pnpm` alone.
//! - A **semantic row** supersedes a Markdown line (preferences.md,
//!   projects.md) only when the line has the `label: value` shape and its
//!   label is about the key's subject (every subject word, at most two
//!   more: "Preferred editor") and the line does not state the row's
//!   value. Free-form lines ("- Prefers vim") are never judged: without a
//!   label a subject word may be incidental ("likes short variable
//!   names" is not about `user.name`), and a wrongly dropped preference is
//!   a silent loss, while a kept one is still outranked by the semantic
//!   block's framing.

use std::collections::HashSet;

use super::retire::subject_stems;
use crate::vector_store::keyword::stems;

/// Extra label words a Markdown line may have beside the key's subject.
const MAX_EXTRA_LABEL_WORDS: usize = 2;

/// A semantic row prepared for judging (its stems computed once: a build
/// judges every shown fact against every shown lesson and line).
#[derive(Debug, Clone)]
pub struct Fact {
    /// The key.
    pub key: String,
    subject: HashSet<String>,
    value: HashSet<String>,
}

impl Fact {
    /// The row `key: value` (the value as shown).
    pub fn new(key: &str, value: &str) -> Self {
        Self {
            key: key.to_owned(),
            subject: subject_stems(key).into_iter().collect(),
            value: stems(value),
        }
    }

    /// Whether text with these stems states this fact's value (an empty
    /// value never counts as stated).
    fn stated_in(&self, text: &HashSet<String>) -> bool {
        !self.value.is_empty() && self.value.is_subset(text)
    }

    /// Whether this fact supersedes the Markdown line `line`.
    pub fn supersedes_line(&self, line: &LabelledLine) -> bool {
        !self.subject.is_empty()
            && self.subject.is_subset(&line.label)
            && line.label.len() <= self.subject.len() + MAX_EXTRA_LABEL_WORDS
            && !self.stated_in(&line.rest)
    }
}

/// A Markdown line of the `label: value` shape, prepared for judging.
#[derive(Debug, Clone)]
pub struct LabelledLine {
    label: HashSet<String>,
    rest: HashSet<String>,
}

impl LabelledLine {
    /// The line's label and value stems, or `None` when it has no label
    /// (free lines are never judged: module docs).
    pub fn parse(line: &str) -> Option<Self> {
        let body = line
            .trim_start()
            .trim_start_matches(['-', '*', '+'])
            .trim_start();
        let (label, rest) = body.split_once(':')?;
        Some(Self {
            label: stems(label),
            rest: stems(rest),
        })
    }
}

/// A lesson prepared for judging: the stems of its rule (the part before
/// "— NOT:", which is what it forbids, not what it states).
#[derive(Debug, Clone)]
pub struct LessonRule {
    /// The lesson as shown.
    pub text: String,
    positive: HashSet<String>,
}

impl LessonRule {
    /// The lesson line's text.
    pub fn new(text: &str) -> Self {
        let positive = text.split("— NOT:").next().unwrap_or(text);
        Self {
            text: text.to_owned(),
            positive: stems(positive),
        }
    }

    /// Whether this lesson supersedes `fact`.
    pub fn supersedes(&self, fact: &Fact) -> bool {
        !fact.subject.is_empty()
            && fact.subject.is_subset(&self.positive)
            && !fact.stated_in(&self.positive)
    }
}

/// The shown lessons, indexed by stem: a build judges every shown fact
/// (hundreds) against every shown lesson (hundreds), and a fact can only
/// be superseded by a lesson naming its subject's words, so only those
/// are looked at.
#[derive(Debug, Default)]
pub struct LessonIndex {
    rules: Vec<LessonRule>,
    by_stem: std::collections::HashMap<String, Vec<usize>>,
}

impl LessonIndex {
    /// The index over these lesson texts.
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut index = Self::default();
        for text in texts {
            let rule = LessonRule::new(text);
            for stem in &rule.positive {
                index
                    .by_stem
                    .entry(stem.clone())
                    .or_default()
                    .push(index.rules.len());
            }
            index.rules.push(rule);
        }
        index
    }

    /// The first lesson (in shown order) that supersedes `fact`.
    pub fn superseding(&self, fact: &Fact) -> Option<&LessonRule> {
        let first = fact.subject.iter().next()?;
        self.by_stem
            .get(first)?
            .iter()
            .map(|&i| &self.rules[i])
            .find(|rule| rule.supersedes(fact))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lesson_supersedes(rule: &str, key: &str, value: &str) -> bool {
        LessonRule::new(rule).supersedes(&Fact::new(key, value))
    }

    fn fact_supersedes_line(key: &str, value: &str, line: &str) -> bool {
        LabelledLine::parse(line).is_some_and(|l| Fact::new(key, value).supersedes_line(&l))
    }

    #[test]
    fn a_lesson_beats_a_fact_on_its_subject_with_another_value() {
        assert!(lesson_supersedes(
            "Use pnpm as the package manager",
            "pref.package_manager",
            "npm"
        ));
        assert!(!lesson_supersedes(
            "Use pnpm as the package manager",
            "pref.package_manager",
            "pnpm"
        ));
        // The negative part is what the lesson forbids, not what it states.
        assert!(lesson_supersedes(
            "Use pnpm as the package manager — NOT: npm",
            "pref.package_manager",
            "npm"
        ));
        assert!(!lesson_supersedes(
            "Always answer in French",
            "pref.editor",
            "vim"
        ));
        assert!(!lesson_supersedes("anything", "pref.x", "y"));
    }

    #[test]
    fn the_index_finds_the_same_lesson_as_a_scan() {
        let index = LessonIndex::new([
            "Always answer in French",
            "Use pnpm as the package manager",
            "Use yarn as the package manager",
        ]);
        let npm = Fact::new("pref.package_manager", "npm");
        assert_eq!(
            index.superseding(&npm).map(|r| r.text.as_str()),
            Some("Use pnpm as the package manager")
        );
        assert!(index
            .superseding(&Fact::new("pref.package_manager", "pnpm"))
            .is_some_and(|r| r.text.starts_with("Use yarn")));
        assert!(index
            .superseding(&Fact::new("pref.editor", "vim"))
            .is_none());
        assert!(LessonIndex::default().superseding(&npm).is_none());
    }

    #[test]
    fn a_fact_beats_a_labelled_line_on_its_subject() {
        assert!(fact_supersedes_line(
            "pref.editor",
            "emacs",
            "- Editor: vim"
        ));
        assert!(fact_supersedes_line(
            "pref.editor",
            "emacs",
            "* Preferred editor: vim"
        ));
        assert!(!fact_supersedes_line(
            "pref.editor",
            "emacs",
            "- Editor: emacs"
        ));
        // Free-form lines are never judged.
        assert!(!fact_supersedes_line(
            "pref.editor",
            "emacs",
            "- Prefers vim as editor"
        ));
        assert!(!fact_supersedes_line(
            "user.name",
            "Ada",
            "- Likes short variable names"
        ));
        // A label about something larger is not the same subject.
        assert!(!fact_supersedes_line(
            "user.name",
            "Ada",
            "- Name of the staging database cluster in eu: kiro-db"
        ));
        assert!(!fact_supersedes_line("pref.theme", "dark", "Theme"));
    }
}
