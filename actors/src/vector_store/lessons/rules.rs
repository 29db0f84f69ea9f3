//! The pure rules of lessons: key, text, validation, the dedup ladder,
//! relevance, and the `[Learned corrections]` block. Unit-tested in
//! `tests.rs` without the store.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::context_block::{BlockItem, ContextBlock, DropReason};
use crate::control_chars::{check_text, ForbiddenCharacter};
use crate::vector_store::keyword::{keyword_stems, KeywordQuery};
use crate::vector_store::semantic::validate::LESSON_PREFIX;
pub use crate::vector_store::semantic::validate::NEGATIVE_SEPARATOR;
/// Longest rule (and longest negative), in characters.
pub const MAX_RULE_CHARS: usize = 1000;
/// Shared keywords (as a share of the smaller set) at which the newer
/// lesson replaces the older one.
pub(crate) const TOPIC_OVERLAP: f64 = 0.5;
/// Lessons without a vector embedded during one write (plus the rule
/// itself: at most 6 embeds per write).
pub(crate) const MAX_BACKFILLS_PER_WRITE: u32 = 5;
/// The block's first line.
pub const LESSONS_HEADER: &str = "[Learned corrections]";
/// The block's second line: what makes a lesson beat a preference.
pub const LESSONS_PREAMBLE: &str = "ALWAYS follow these. They override default behavior.";
/// Vector and keyword weights of the hybrid lesson ranking (the semantic
/// layer's weights).
const VECTOR_WEIGHT: f64 = 0.6;
const KEYWORD_WEIGHT: f64 = 0.4;

/// What a lesson is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LessonCategory {
    /// How to use a tool.
    Tool,
    /// How the user wants things done.
    Preference,
    /// A fact to keep in mind.
    #[default]
    Knowledge,
}

impl LessonCategory {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            LessonCategory::Tool => "tool",
            LessonCategory::Preference => "preference",
            LessonCategory::Knowledge => "knowledge",
        }
    }

    /// Parses a stored or user-supplied name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "tool" => Some(LessonCategory::Tool),
            "preference" => Some(LessonCategory::Preference),
            "knowledge" => Some(LessonCategory::Knowledge),
            _ => None,
        }
    }
}

/// A lesson to write.
#[derive(Debug, Clone)]
pub struct LessonWrite {
    /// What to do.
    pub rule: String,
    /// What not to do, if stated.
    pub negative: Option<String>,
    /// Category.
    pub category: LessonCategory,
    /// Writer (`user_explicit`, `migration`, `consolidation`, …).
    pub source: String,
    /// 1.0 for the user, 0.9 for migration.
    pub confidence: f64,
}

impl LessonWrite {
    /// A lesson the user taught: user_explicit, confidence 1.0.
    pub fn user(rule: impl Into<String>) -> Self {
        Self {
            rule: rule.into(),
            negative: None,
            category: LessonCategory::default(),
            source: "user_explicit".into(),
            confidence: 1.0,
        }
    }

    /// With what not to do instead.
    pub fn with_negative(mut self, negative: Option<String>) -> Self {
        self.negative = negative;
        self
    }

    /// With a category.
    pub fn with_category(mut self, category: LessonCategory) -> Self {
        self.category = category;
        self
    }

    /// A lesson an agent taught through its own surface (MCP `learn_add`):
    /// source [`crate::vector_store::AGENT`], confidence 0.8, so the ladder
    /// never lets it replace what the user taught, and the context shows it
    /// as the agent's suggestion, which never outranks a fact the user
    /// stated.
    pub fn agent(rule: impl Into<String>) -> Self {
        Self {
            source: crate::vector_store::AGENT.into(),
            confidence: 0.8,
            ..Self::user(rule)
        }
    }

    /// A lesson carried over from lessons.jsonl: migration, confidence 0.9
    /// (so it never overwrites a user_explicit lesson).
    pub fn migrated(rule: impl Into<String>) -> Self {
        Self {
            source: "migration".into(),
            confidence: 0.9,
            ..Self::user(rule)
        }
    }
}

/// A stored lesson.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lesson {
    /// `lesson.<blake3>`.
    pub key: String,
    /// What to do.
    pub rule: String,
    /// What not to do, if stated.
    pub negative: Option<String>,
    /// Category.
    pub category: LessonCategory,
    /// Who wrote it.
    pub source: String,
    /// When it was first written (RFC 3339, UTC).
    pub created_at: String,
}

/// What a lesson write did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum LessonOutcome {
    /// A new lesson.
    Created {
        /// Its key.
        key: String,
    },
    /// The same rule again: the row was re-affirmed (negative/category
    /// updated).
    Updated {
        /// Its key.
        key: String,
    },
    /// The new lesson replaced an older one on the same topic.
    Replaced {
        /// The new key.
        key: String,
        /// The tombstoned lesson.
        replaced: String,
    },
}

impl LessonOutcome {
    /// The key of the lesson now in force.
    pub fn key(&self) -> &str {
        match self {
            LessonOutcome::Created { key }
            | LessonOutcome::Updated { key }
            | LessonOutcome::Replaced { key, .. } => key,
        }
    }
}

/// Trims and folds whitespace runs, so re-sent copies hash alike.
pub(crate) fn normalize_rule(rule: &str) -> String {
    rule.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `lesson.<blake3 of the normalized rule>`.
pub fn lesson_key(rule: &str) -> String {
    let hash = blake3::hash(normalize_rule(rule).as_bytes()).to_hex();
    format!("{LESSON_PREFIX}{hash}")
}

/// The stored text: "rule" or "rule — NOT: negative".
pub fn lesson_text(rule: &str, negative: Option<&str>) -> String {
    match negative {
        Some(n) if !n.trim().is_empty() => format!("{rule}{NEGATIVE_SEPARATOR}{n}"),
        _ => rule.to_owned(),
    }
}

/// Splits a stored text back into rule and negative.
pub fn parse_lesson_text(text: &str) -> (String, Option<String>) {
    match text.split_once(NEGATIVE_SEPARATOR) {
        Some((rule, negative)) => (rule.to_owned(), Some(negative.to_owned())),
        None => (text.to_owned(), None),
    }
}

/// Checks and normalizes a write's rule and negative: non-empty rule, each
/// at most [`MAX_RULE_CHARS`], no separator inside the rule (it would not
/// read back). Returns the normalized (rule, negative).
pub fn validate_lesson(write: &LessonWrite) -> Result<(String, Option<String>), String> {
    let rule = normalize_rule(&write.rule);
    if rule.is_empty() {
        return Err("rule is empty".into());
    }
    if rule.chars().count() > MAX_RULE_CHARS {
        return Err(format!("rule is longer than {MAX_RULE_CHARS} characters"));
    }
    if rule.contains(NEGATIVE_SEPARATOR.trim()) {
        return Err(format!(
            "rule may not contain {:?}; pass the negative separately",
            NEGATIVE_SEPARATOR.trim()
        ));
    }
    let negative = write
        .negative
        .as_deref()
        .map(normalize_rule)
        .filter(|n| !n.is_empty());
    if negative
        .as_ref()
        .is_some_and(|n| n.chars().count() > MAX_RULE_CHARS)
    {
        return Err(format!(
            "negative is longer than {MAX_RULE_CHARS} characters"
        ));
    }
    Ok((rule, negative))
}

/// Refuses NUL and bidirectional controls in the rule or the negative
/// (see [`crate::control_chars`]); every lesson writer, the store's and
/// lessons.jsonl's, runs it before anything else.
pub fn check_lesson_chars(write: &LessonWrite) -> Result<(), ForbiddenCharacter> {
    check_text("rule", &write.rule)?;
    match write.negative.as_deref() {
        Some(negative) => check_text("negative", negative),
        None => Ok(()),
    }
}

/// An active lesson as the dedup ladder sees it.
#[derive(Debug, Clone)]
pub(crate) struct ExistingLesson {
    /// Key.
    pub key: String,
    /// Its rule.
    pub rule: String,
    /// Cosine between its stored vector and the new rule's, when both exist
    /// in the current space.
    pub cosine: Option<f32>,
}

/// The dedup ladder's verdict for a new rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Dedup {
    /// Nothing similar: store it.
    New,
    /// An existing lesson already says this (or more); keep it.
    Duplicate(String),
    /// The new lesson supersedes this one.
    Replace(String),
}

/// |a ∩ b| / min(|a|, |b|); 0 when either is empty.
fn overlap(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let smaller = a.len().min(b.len());
    if smaller == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / smaller as f64
    }
}

/// The spec's ladder, in order, over lessons other than the rule's own key:
/// 1. substring: the new rule inside an old one is a duplicate; an old one
///    inside the new rule is replaced by it ("use dark mode" vs "always use
///    dark mode" keep one lesson, the more specific);
/// 2. topic overlap ≥ 50% of the smaller keyword set: the newer replaces;
/// 3. embedding cosine > `duplicate_cosine` (0.85 on the reference scale,
///    moved onto the model's by its calibration): the longer text wins.
pub(crate) fn dedup(rule: &str, existing: &[ExistingLesson], duplicate_cosine: f32) -> Dedup {
    let own_key = lesson_key(rule);
    let others: Vec<&ExistingLesson> = existing.iter().filter(|e| e.key != own_key).collect();
    let lower = rule.to_lowercase();
    for e in &others {
        let old = e.rule.to_lowercase();
        if old.contains(&lower) {
            return Dedup::Duplicate(e.key.clone());
        }
        if lower.contains(&old) {
            return Dedup::Replace(e.key.clone());
        }
    }
    let words = keyword_stems(rule);
    for e in &others {
        if overlap(&words, &keyword_stems(&e.rule)) >= TOPIC_OVERLAP {
            return Dedup::Replace(e.key.clone());
        }
    }
    for e in &others {
        if e.cosine.is_some_and(|c| c > duplicate_cosine) {
            return if rule.chars().count() > e.rule.chars().count() {
                Dedup::Replace(e.key.clone())
            } else {
                Dedup::Duplicate(e.key.clone())
            };
        }
    }
    Dedup::New
}

/// Hybrid relevance of a lesson to a request: 0.6 × cosine + 0.4 × keyword
/// overlap when the request embedded, keyword overlap alone otherwise.
pub(crate) fn lesson_relevance(
    query: &KeywordQuery,
    text_stems: &HashSet<String>,
    cosine: Option<Option<f32>>,
) -> f64 {
    let keyword = query.score_stems(&HashSet::new(), text_stems);
    match cosine {
        Some(c) => VECTOR_WEIGHT * f64::from(c.unwrap_or(0.0).max(0.0)) + KEYWORD_WEIGHT * keyword,
        None => keyword,
    }
}

/// One lesson as a block line.
pub(crate) fn lesson_line(lesson: &Lesson) -> String {
    let text = lesson_text(&lesson.rule, lesson.negative.as_deref());
    let by = if lesson.source == crate::vector_store::AGENT {
        AGENT_LESSON_MARK
    } else {
        ""
    };
    format!("- {}{by}", text.replace(['\r', '\n'], " "))
}

/// What ends the line of a lesson the agent taught itself: the model reads
/// it as a suggestion, not the user's word, and cross-layer supersession
/// does not let it outrank a stated fact.
pub const AGENT_LESSON_MARK: &str = " (the agent's own note)";

/// The `[Learned corrections]` block: header, preamble, as many of the
/// ranked lessons as fit in `budget` characters (in order; one that does
/// not fit is skipped and the scan goes on), and a closing line saying how
/// many are shown and how many omitted. Empty when there are no lessons or
/// none fits.
pub fn render_lessons_block(ranked: &[Lesson], budget: usize) -> String {
    render_lessons_items(ranked, budget).text
}

/// [`render_lessons_block`] with every lesson's fate (rank position as the
/// score: lessons are ordered, not scored on one scale).
pub(crate) fn render_lessons_items(ranked: &[Lesson], budget: usize) -> ContextBlock {
    let total = ranked.len();
    let head = format!("{LESSONS_HEADER}\n{LESSONS_PREAMBLE}");
    // Reserve room for the longest possible footer.
    let footer_room = footer(total, total).chars().count() + 1;
    let mut used = head.chars().count() + footer_room;
    let mut lines = Vec::new();
    let mut items = Vec::with_capacity(total);
    for (rank, lesson) in ranked.iter().enumerate() {
        let line = lesson_line(lesson);
        let len = line.chars().count() + 1;
        let mut item = BlockItem::new(
            lesson.key.clone(),
            "lesson",
            Some(serde_json::json!({"rank": rank + 1})),
        );
        if used + len <= budget {
            used += len;
            lines.push(line);
            item.included = true;
        } else {
            item = item.dropped(DropReason::Cap);
        }
        items.push(item);
    }
    if lines.is_empty() {
        for item in &mut items {
            *item = item.clone().dropped(DropReason::Cap);
        }
        return ContextBlock {
            text: String::new(),
            items,
        };
    }
    let shown = lines.len();
    ContextBlock {
        text: format!("{head}\n{}\n{}", lines.join("\n"), footer(shown, total)),
        items,
    }
}

fn footer(shown: usize, total: usize) -> String {
    format!(
        "({shown} of {total} lessons shown, {} omitted.)",
        total - shown
    )
}
