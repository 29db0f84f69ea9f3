//! Grounding: only what the conversation said becomes memory (issue 35).
//!
//! A small chat model asked to "extract facts" answers with something even
//! when the conversation holds nothing: SmolLM2-135M, given "I prefer tabs
//! over spaces in Go code, and my name is Dana", stored `pref.editor =
//! neovim` and "The deploy failed because of the build causing a segfault
//! in Go!", both lifted from the prompt's own example answer. So every
//! item a model proposes is checked against the text it was shown before
//! it reaches a writer, whatever the model:
//!
//! - **Evidence** is the run's turns (their text and sender) and, on the
//!   prefs path before migration, the current Markdown documents the model
//!   was asked to keep. The prompt's instructions and examples are not
//!   evidence: a word that only they contain supports nothing.
//! - A **claim** is an item's content words (stop words and the words every
//!   summary uses about a chat, "user", "discussed", … left out), stemmed
//!   with the same Snowball stemmer as keyword search, so "prefers" meets
//!   "prefer" and "editors" meets "editor".
//! - An item is **grounded** when at least [`MIN_SUPPORT`] of its claim's
//!   stems occur in one window of [`WINDOW_TURNS`] consecutive turns (or
//!   in one document).
//!
//! Why no embedding vote: both ways of adding one were measured with
//! MiniLM on the same LoCoMo data, with the opener's turns unnamed as a
//! Claude Code import has them (words alone: 93.4 % of the gold pass
//! their session, 7.5 % of other sessions' observations pass). Accepting a
//! near miss (a quarter of its words present) whose best window is above a
//! cosine threshold rescues less gold than it lets others through at every
//! threshold (0.65: +0.7 pt gold, +1.4 pt others; 0.70: +0.2 / +0.3);
//! requiring a window cosine on top of the words removes gold faster than
//! others (0.45: gold -6.3 pt, others -1.7 pt). Observations of other
//! sessions are about the same people, so their vectors sit as close as
//! the gold's. The next idea is an entailment check by the chat model
//! itself on the near misses, not a cosine.
//!
//! [`MIN_SUPPORT`] and [`WINDOW_TURNS`] were chosen on public data written
//! by others: LoCoMo's 1,210 gold observations (each written from one
//! session) must pass against their own session and fail against the other
//! sessions of the same conversation (same people, same life, other
//! facts). Whole-session evidence at 0.5 kept 99.9 % of the gold but let
//! 39 % of the other sessions' observations through; windows of three
//! turns at 0.6 keep 96.0 % and let 9.0 % through (`actors/tests/
//! grounding_locomo.rs` holds the floors).

use std::collections::HashSet;

use serde::Serialize;

use super::schema::ConsolidationAnswer;
use crate::transcripts::Turn;
use crate::vector_store::keyword::{is_stop_word, stem, words};

/// Share of a claim's stems the best window must hold (lexical rule).
pub const MIN_SUPPORT: f64 = 0.6;

/// Words about the conversation itself, not about its content: a summary
/// says "the user discussed …" of any chat, so they support nothing.
const META_WORDS: &[&str] = &[
    "user",
    "users",
    "assistant",
    "assistants",
    "conversation",
    "discussed",
    "discuss",
    "discussing",
    "mentioned",
    "mention",
    "mentions",
    "talked",
    "talk",
    "talking",
    "said",
    "says",
    "say",
    "asked",
    "ask",
    "asks",
    "told",
    "tell",
    "shared",
    "share",
    "shares",
    "expressed",
    "express",
    "expresses",
    "stated",
    "state",
    "states",
    "noted",
    "note",
    "also",
    "currently",
    "recently",
    "today",
    "session",
    "chat",
];

/// Values that only make sense with their key (stemmed): `pref.dark_mode
/// = true` claims dark mode, not "true".
const FLAG_VALUES: &[&str] = &[
    "true", "fals", "on", "off", "enabl", "disabl", "none", "null",
];

/// The stems a text brings as evidence: every word, stop words included
/// (the claim side decides which words count).
fn evidence_stems(text: &str) -> impl Iterator<Item = String> + '_ {
    words(text).map(|w| stem(&w))
}

/// A claim's content stems: no stop words, no meta words, each once.
pub fn claim_stems(claim: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in words(claim) {
        if is_stop_word(&word) || META_WORDS.contains(&word.as_str()) {
            continue;
        }
        let s = stem(&word);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// How much of a claim the evidence holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// Claim stems found in the evidence.
    pub found: usize,
    /// Claim stems.
    pub total: usize,
}

impl Support {
    /// Found over total; 0 for a claim with no content words.
    pub fn ratio(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.found as f64 / self.total as f64
        }
    }

    /// The lexical rule: enough of the claim's words are in the evidence.
    pub fn grounded(&self) -> bool {
        self.total > 0 && self.ratio() >= MIN_SUPPORT
    }
}

/// Consecutive turns that may support one claim together (a question and
/// its answer, a fact told over two messages).
pub const WINDOW_TURNS: usize = 3;

/// The text a run's items are checked against: windows of
/// [`WINDOW_TURNS`] consecutive turns, and each document on its own. A
/// claim is supported by its best window, not by the whole session: in a
/// long session almost any sentence finds half its words somewhere.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    windows: Vec<HashSet<String>>,
    /// Windows ending at a turn (the first ones; documents follow).
    turn_windows: usize,
}

impl Evidence {
    /// Evidence from turns (oldest first; each turn's text with its
    /// sender) and documents.
    pub fn new<'a>(
        turns: impl IntoIterator<Item = &'a str>,
        documents: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let turns: Vec<HashSet<String>> = turns
            .into_iter()
            .map(|t| evidence_stems(t).collect())
            .collect();
        let mut windows: Vec<HashSet<String>> = (0..turns.len())
            .map(|end| {
                let start = (end + 1).saturating_sub(WINDOW_TURNS);
                turns[start..=end].iter().flatten().cloned().collect()
            })
            .collect();
        let turn_windows = windows.len();
        windows.extend(documents.into_iter().map(|d| evidence_stems(d).collect()));
        Self {
            windows,
            turn_windows,
        }
    }

    /// The turn whose window holds most of `claim` (its last turn, the
    /// moment the claim was complete); `None` when a document supports it
    /// best or nothing does.
    pub fn best_turn(&self, claim: &str) -> Option<usize> {
        let claim = claim_stems(claim);
        let (index, found) = self
            .windows
            .iter()
            .map(|w| claim.iter().filter(|s| w.contains(*s)).count())
            .enumerate()
            .max_by_key(|&(i, found)| (found, std::cmp::Reverse(i)))?;
        (found > 0 && index < self.turn_windows).then_some(index)
    }

    /// Evidence from a run's turns (each with its sender, the name a
    /// summary calls the speaker by) and the documents it was shown.
    pub fn from_turns(turns: &[Turn], documents: &[&str]) -> Self {
        let texts: Vec<String> = turns
            .iter()
            .map(|t| match &t.sender {
                Some(sender) => format!("{sender}: {}", t.text),
                None => t.text.clone(),
            })
            .collect();
        Self::new(texts.iter().map(String::as_str), documents.iter().copied())
    }

    /// How much of `claim` the best window holds.
    pub fn support(&self, claim: &str) -> Support {
        let claim = claim_stems(claim);
        let found = self
            .windows
            .iter()
            .map(|w| claim.iter().filter(|s| w.contains(*s)).count())
            .max()
            .unwrap_or(0);
        Support {
            found,
            total: claim.len(),
        }
    }
}

/// The claim of a semantic entry: its value, and the key's last segment
/// when the value alone says nothing ("true", "yes", "on", "2").
pub fn semantic_claim(key: &str, value: &str) -> String {
    let stems = claim_stems(value);
    let says_nothing = stems
        .iter()
        .all(|s| FLAG_VALUES.contains(&s.as_str()) || s.chars().all(|c| c.is_ascii_digit()));
    if says_nothing {
        let tail = key
            .rsplit('.')
            .next()
            .unwrap_or(key)
            .replace(['_', '-'], " ");
        format!("{tail} {value}")
    } else {
        value.to_owned()
    }
}

/// The claim of a lesson: what to do and what not to.
pub fn lesson_claim(rule: &str, negative: Option<&str>) -> String {
    match negative {
        Some(n) => format!("{rule} {n}"),
        None => rule.to_owned(),
    }
}

/// Sentences of a summary (split after `.`, `!`, `?` followed by space).
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(pos, c)) in bytes.iter().enumerate() {
        let next_is_space = bytes.get(i + 1).is_none_or(|(_, n)| n.is_whitespace());
        if matches!(c, '.' | '!' | '?') && next_is_space {
            let end = pos + c.len_utf8();
            let s = text[start..end].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = end;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// An item grounding dropped, for the run report and the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ungrounded {
    /// `semantic`, `episodic`, `lesson`, `history` (a summary sentence),
    /// `preferences` or `projects` (a document line).
    pub kind: &'static str,
    /// The semantic key, or the start of the text.
    pub key: String,
    /// What the model proposed.
    pub text: String,
    /// Claim stems found in the evidence, of all.
    pub found: usize,
    /// Claim stems.
    pub total: usize,
}

/// Drops every item of `answer` the evidence does not support; answers
/// what was dropped. `documents` are the current preferences.md and
/// projects.md the model was asked to keep (prefs path before migration):
/// a line of a new document that the current one already has stays.
pub fn ground_answer(
    answer: &mut ConsolidationAnswer,
    evidence: &Evidence,
    documents: Option<(&str, &str)>,
) -> Vec<Ungrounded> {
    let mut out = Vec::new();
    let mut check = |kind: &'static str, key: &str, claim: &str, text: &str| -> bool {
        let support = evidence.support(claim);
        if support.grounded() {
            return true;
        }
        out.push(Ungrounded {
            kind,
            key: key.to_owned(),
            text: text.to_owned(),
            found: support.found,
            total: support.total,
        });
        false
    };
    answer.semantic.retain(|i| {
        check(
            "semantic",
            &i.key,
            &semantic_claim(&i.key, &i.value),
            &i.value,
        )
    });
    answer
        .episodic
        .retain(|i| check("episodic", &preview(&i.text), &i.text, &i.text));
    answer.lessons.retain(|i| {
        let claim = lesson_claim(&i.rule, i.negative.as_deref());
        check("lesson", &preview(&i.rule), &claim, &claim)
    });
    if let Some(history) = answer.history.take() {
        let kept: Vec<&str> = sentences(&history)
            .into_iter()
            .filter(|s| check("history", &preview(s), s, s))
            .collect();
        answer.history = (!kept.is_empty()).then(|| kept.join(" "));
    }
    let (current_prefs, current_projects) = documents.unwrap_or_default();
    for (kind, doc, current) in [
        ("preferences", &mut answer.preferences_update, current_prefs),
        ("projects", &mut answer.projects_update, current_projects),
    ] {
        let Some(text) = doc.take() else { continue };
        let known: HashSet<&str> = current.lines().map(str::trim).collect();
        let kept: Vec<&str> = text
            .lines()
            .filter(|line| {
                let t = line.trim();
                t.is_empty()
                    || t.starts_with('#')
                    || known.contains(t)
                    || check(kind, &preview(t), t, t)
            })
            .collect();
        // A document with no content line left would replace a file with
        // nothing: keep the file instead.
        let has_content = kept.iter().any(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        });
        *doc = has_content.then(|| kept.join("\n"));
    }
    out
}

/// The first words of a text, as an audit key.
fn preview(text: &str) -> String {
    const KEY_CHARS: usize = 60;
    let mut out: String = text.chars().take(KEY_CHARS).collect();
    if text.chars().count() > KEY_CHARS {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dana() -> Evidence {
        Evidence::new(
            ["I prefer tabs over spaces in Go code, and my name is Dana"],
            [],
        )
    }

    /// Issue 35's table: supported, paraphrased, example-only, invented.
    #[test]
    fn supported_and_paraphrased_pass_example_only_and_invented_do_not() {
        let e = dana();
        // Supported, word for word.
        assert!(e
            .support(&semantic_claim("pref.indentation", "tabs"))
            .grounded());
        assert!(e.support(&semantic_claim("user.name", "Dana")).grounded());
        // Paraphrased (another form of the same words).
        assert!(e
            .support("The user prefers tabs to spaces when writing Go.")
            .grounded());
        // Only in the prompt's example answer.
        assert!(!e
            .support(&semantic_claim("pref.editor", "neovim"))
            .grounded());
        assert!(!e
            .support("Run the build from the repository root")
            .grounded());
        // Invented around one real word.
        let invented =
            e.support("The deploy failed because of the build causing a segfault in Go!");
        assert!(!invented.grounded(), "{invented:?}");
        assert!(invented.ratio() < 0.25, "{invented:?}");
        // A claim of only stop and meta words claims nothing.
        assert!(!e.support("The user said it.").grounded());
    }

    #[test]
    fn the_best_turn_is_where_the_claim_was_said() {
        let e = Evidence::new(
            [
                "Morning, how are you?",
                "We adopted a beagle named Max yesterday.",
                "The weather is grey.",
                "It rained all week.",
                "More rain.",
            ],
            ["A document about beagles named Max and Rex."],
        );
        assert_eq!(e.best_turn("They adopted Max, a beagle."), Some(1));
        assert_eq!(e.best_turn("Quantum chromodynamics"), None);
        // A document that holds more of it is no turn.
        assert_eq!(e.best_turn("documents about Rex and Max"), None);
    }

    #[test]
    fn a_claim_is_supported_by_one_window_not_the_whole_session() {
        let turns = [
            "We adopted a puppy last week.",
            "What breed?",
            "A beagle named Max.",
            "Unrelated chatter about the weather.",
            "More weather, rain all week.",
            "I finally finished the marathon in Berlin.",
        ];
        let e = Evidence::new(turns, []);
        assert!(e
            .support("They adopted a beagle puppy named Max.")
            .grounded());
        // Words from both ends of the session, never in one window.
        let scattered = e.support("Max the beagle loves the Berlin marathon.");
        assert_eq!(scattered.total, 5);
        assert!(!scattered.grounded(), "{scattered:?}");
        assert!(Evidence::new(["x"], ["- editor: helix"])
            .support("editor helix")
            .grounded());
    }

    #[test]
    fn values_that_say_nothing_borrow_the_key() {
        assert_eq!(semantic_claim("pref.dark_mode", "true"), "dark mode true");
        assert_eq!(semantic_claim("project.port", "8080"), "port 8080");
        assert_eq!(semantic_claim("pref.editor", "helix"), "helix");
        let e = Evidence::new(["Please always use dark mode, I mean it."], []);
        assert!(e
            .support(&semantic_claim("pref.dark_mode", "true"))
            .grounded());
    }

    #[test]
    fn an_answer_keeps_only_its_grounded_items() {
        use crate::consolidator::schema::{EpisodicItem, SemanticItem};
        let mut answer = ConsolidationAnswer {
            semantic: vec![
                SemanticItem {
                    key: "pref.editor".into(),
                    value: "neovim".into(),
                    confidence: 0.9,
                },
                SemanticItem {
                    key: "user.name".into(),
                    value: "Dana".into(),
                    confidence: 0.9,
                },
            ],
            episodic: vec![EpisodicItem {
                text: "The deploy failed because of the build causing a segfault in Go!".into(),
                importance: 0.6,
                tags: vec![],
            }],
            history: Some(
                "Dana prefers tabs over spaces in Go. The deploy script was fixed.".into(),
            ),
            preferences_update: Some(
                "# Preferences\n- Uses neovim\n- Tabs over spaces in Go\n- kept line".into(),
            ),
            ..ConsolidationAnswer::default()
        };
        let dropped = ground_answer(&mut answer, &dana(), Some(("- kept line", "")));
        assert_eq!(dropped.len(), 4, "{dropped:?}");
        let kinds: Vec<&str> = dropped.iter().map(|u| u.kind).collect();
        assert_eq!(kinds, ["semantic", "episodic", "history", "preferences"]);
        assert_eq!(dropped[0].key, "pref.editor");
        assert_eq!(answer.semantic.len(), 1);
        assert_eq!(answer.semantic[0].value, "Dana");
        assert!(answer.episodic.is_empty());
        assert_eq!(
            answer.history.as_deref(),
            Some("Dana prefers tabs over spaces in Go.")
        );
        assert_eq!(
            answer.preferences_update.as_deref(),
            Some("# Preferences\n- Tabs over spaces in Go\n- kept line")
        );
    }

    #[test]
    fn summaries_split_into_sentences() {
        assert_eq!(
            sentences("Fixed the deploy. Then lunch! Version 1.2 shipped?  Done"),
            vec![
                "Fixed the deploy.",
                "Then lunch!",
                "Version 1.2 shipped?",
                "Done"
            ]
        );
        assert!(sentences("  ").is_empty());
    }
}
