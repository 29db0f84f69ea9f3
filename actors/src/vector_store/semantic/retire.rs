//! Which episodic fragments state a superseded semantic fact (spec
//! `_retire_stale_episodic`, issue 10 item 2).
//!
//! When `pref.theme` changes from `dark`, a fragment that says "the user
//! prefers the dark theme" would resurface the old fact; one that says "it
//! was already dark when the deploy finished" is an unrelated memory and
//! must survive. Quoting the old value is therefore necessary but not
//! enough: the fragment must also be *about the key's subject*. Two
//! independent signals establish that, and either suffices:
//!
//! 1. **Meaning** (when both rows carry vectors of the same space): the
//!    cosine between the fragment's stored vector and the old semantic row's
//!    stored vector (`"<key> <value>"`) is at least the retirement
//!    threshold (0.70 on the reference scale, `Thresholds::retire`).
//! 2. **The key's own words next to the value** (no model needed): a word
//!    of the key's subject (`theme` for `pref.theme`, stemmed, namespace and
//!    modifiers dropped) within [`KEY_WORD_WINDOW`] words of the quoted
//!    value. Short or generic values (`true`, numbers, ≤ 3 chars) never
//!    retire by this text rule alone: they occur everywhere.
//!
//! ## Why 0.70
//! Measured with all-minilm-l6-v2 (the test model) on the examples in
//! `actors/tests/retirement.rs`, cosine of fragment vs. the old fact's
//! stored document. Fragments that only share the value scored 0.145–0.615
//! ("It was already dark when the deploy finished." was the highest at
//! 0.615); fragments stating the fact scored 0.414–0.839. No threshold
//! separates the two groups completely, so the meaning signal is set for
//! precision: 0.70 sits 0.085 above the highest unrelated fragment and keeps
//! the fragments that state the fact most plainly (0.702–0.839). A wrongly
//! retired memory is a loss (undoable with the restore endpoint, but
//! silent); a fragment left active only repeats a fact whose current value
//! the semantic row holds, so misses are the cheaper error. The key-word
//! rule catches most of what the threshold leaves.

use rust_stemmers::{Algorithm, Stemmer};

use super::validate::BUILTIN_PREFIXES;

/// How many words may separate the quoted value from a word of the key's
/// subject ("the dark **theme**", "**editor** of choice is Neovim").
pub(crate) const KEY_WORD_WINDOW: usize = 4;

/// Values shorter than this never retire anything, even with a model: they
/// match too many rows to be a quote at all.
const MIN_VALUE_CHARS: usize = 2;

/// Values of at most this many characters are "short": text alone never
/// retires on them.
const SHORT_VALUE_CHARS: usize = 3;

/// Values that appear in ordinary prose regardless of the fact.
const GENERIC_VALUES: &[&str] = &[
    "true", "false", "yes", "no", "on", "off", "none", "null", "nil", "enabled", "disabled",
    "default", "auto", "unknown", "n/a", "ok", "always", "never",
];

/// Key words that say where a fact is filed or how it is ranked, not what
/// it is about.
const NON_SUBJECT_WORDS: &[&str] = &[
    "pref",
    "prefs",
    "preference",
    "preferences",
    "user",
    "project",
    "default",
    "preferred",
    "favorite",
    "favourite",
    "current",
    "main",
    "primary",
    "my",
    "the",
    "of",
    "is",
];

/// Why a fragment was judged to state the superseded fact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Evidence {
    /// Its vector is this close to the old fact's.
    Meaning(f32),
    /// A word of the key's subject stands next to the quoted value.
    KeyWords,
}

impl Evidence {
    /// The audit reason, naming the key that caused the retirement.
    pub(crate) fn reason(self, key: &str) -> String {
        match self {
            Evidence::Meaning(cos) => {
                format!("stated the superseded value of {key} (cosine {cos:.2} to the old fact)")
            }
            Evidence::KeyWords => {
                format!("stated the superseded value of {key} (key words next to the value)")
            }
        }
    }
}

/// The superseded fact being checked against fragments.
#[derive(Debug)]
pub(crate) struct OldFact<'a> {
    /// The key whose value changed.
    pub key: &'a str,
    /// The old value as text.
    pub value: &'a str,
    /// The old row's stored vector and its space signature, if any.
    pub vector: Option<(&'a str, &'a [f32])>,
    /// Cosine (fragment vs. old fact document) at or above which a
    /// quoting fragment is about the fact: 0.70 on the reference scale
    /// (see the module docs for the measurement), on the model's scale.
    pub retire_cosine: f32,
}

/// Whether the old value can be quoted at all (long enough to search for).
pub(crate) fn is_quotable(value: &str) -> bool {
    value.trim().chars().count() >= MIN_VALUE_CHARS
}

/// Whether `fragment` states `fact`: it quotes the value and is about the
/// key's subject by meaning or by the key's own words.
pub(crate) fn judge(
    fact: &OldFact<'_>,
    fragment: &str,
    fragment_vector: Option<(&str, &[f32])>,
) -> Option<Evidence> {
    if !is_quotable(fact.value) || !quotes(fragment, fact.value) {
        return None;
    }
    if let (Some((old_space, old)), Some((space, vector))) = (fact.vector, fragment_vector) {
        if old_space == space && old.len() == vector.len() {
            let cos = crate::embedder::vector::cosine(old, vector);
            if cos >= fact.retire_cosine {
                return Some(Evidence::Meaning(cos));
            }
        }
    }
    (!is_generic_value(fact.value) && key_words_near_value(fragment, fact.key, fact.value))
        .then_some(Evidence::KeyWords)
}

/// Whether `text` quotes `phrase` (case-insensitive, on word boundaries,
/// so "vim" is quoted by "uses vim daily" but not by "vimeo").
pub(crate) fn quotes(text: &str, phrase: &str) -> bool {
    let phrase = phrase.trim().to_lowercase();
    if phrase.is_empty() {
        return false;
    }
    let text = text.to_lowercase();
    text.match_indices(&phrase).any(|(at, m)| {
        let before = text[..at].chars().next_back();
        let after = text[at + m.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Short (≤ 3 chars), numeric, or one of the words that turn up in prose
/// whatever the fact (`true`, `none`, `default`, …).
pub(crate) fn is_generic_value(value: &str) -> bool {
    let v = value.trim().to_lowercase();
    v.chars().count() <= SHORT_VALUE_CHARS
        || v.parse::<f64>().is_ok()
        || GENERIC_VALUES.contains(&v.as_str())
}

/// The stemmed words naming the key's subject: `pref.default_editor` →
/// `["editor"]`, `user.homeCity` → `["home", "citi"]`.
pub(crate) fn subject_stems(key: &str) -> Vec<String> {
    let rest = BUILTIN_PREFIXES
        .iter()
        .find_map(|p| key.strip_prefix(p))
        .unwrap_or(key);
    let stemmer = Stemmer::create(Algorithm::English);
    words(&split_camel(rest))
        .into_iter()
        .filter(|w| w.chars().count() >= 2 && !NON_SUBJECT_WORDS.contains(&w.as_str()))
        .map(|w| stemmer.stem(&w).into_owned())
        .collect()
}

/// Whether a subject word of `key` stands within [`KEY_WORD_WINDOW`] words
/// of an occurrence of `value` in `text`.
pub(crate) fn key_words_near_value(text: &str, key: &str, value: &str) -> bool {
    let subject = subject_stems(key);
    let value_words = words(value);
    if subject.is_empty() || value_words.is_empty() {
        return false;
    }
    let stemmer = Stemmer::create(Algorithm::English);
    let tokens = words(text);
    let stems: Vec<String> = tokens
        .iter()
        .map(|t| stemmer.stem(t).into_owned())
        .collect();
    let n = value_words.len();
    (0..tokens.len().saturating_sub(n - 1))
        .filter(|&i| tokens[i..i + n] == value_words[..])
        .any(|i| {
            let from = i.saturating_sub(KEY_WORD_WINDOW);
            let to = (i + n + KEY_WORD_WINDOW).min(tokens.len());
            (from..to)
                .filter(|j| !(i..i + n).contains(j))
                .any(|j| subject.contains(&stems[j]))
        })
}

/// Lowercase alphanumeric words.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `homeCity` → `home City`, so camel-case keys split into words.
fn split_camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    let mut prev_lower = false;
    for c in key.chars() {
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact<'a>(key: &'a str, value: &'a str) -> OldFact<'a> {
        OldFact {
            key,
            value,
            vector: None,
            retire_cosine: crate::embedder::calibration::Thresholds::REFERENCE.retire,
        }
    }

    #[test]
    fn quoting_needs_word_boundaries() {
        assert!(quotes("The user edits everything in Vim daily.", "vim"));
        assert!(quotes("vim", " VIM "));
        assert!(!quotes("Watched a vimeo clip", "vim"));
        assert!(quotes(
            "moved to Lisbon, Portugal in May",
            "Lisbon, Portugal"
        ));
    }

    #[test]
    fn subjects_drop_namespaces_and_modifiers() {
        assert_eq!(subject_stems("pref.theme"), vec!["theme"]);
        assert_eq!(subject_stems("pref.default_editor"), vec!["editor"]);
        assert_eq!(subject_stems("user.homeCity"), vec!["home", "citi"]);
        assert_eq!(subject_stems("project.db"), vec!["db"]);
        assert!(subject_stems("pref.default").is_empty());
    }

    #[test]
    fn generic_values_are_short_numeric_or_everyday_words() {
        for v in ["true", "No", "3", "2.5", "vim", "zsh", "none", " auto "] {
            assert!(is_generic_value(v), "{v}");
        }
        for v in ["dark", "neovim", "Paris", "postgres 15"] {
            assert!(!is_generic_value(v), "{v}");
        }
    }

    /// The written-down examples without a model: the key's words next to
    /// the value retire; sharing only the value never does.
    #[test]
    fn text_rule_needs_the_key_words_next_to_the_value() {
        let cases = [
            (
                "pref.theme",
                "dark",
                "The user prefers the dark theme in every editor.",
                true,
            ),
            (
                "pref.theme",
                "dark",
                "Themes were discussed; later the user bought dark chocolate.",
                false,
            ),
            (
                "pref.theme",
                "dark",
                "It was already dark when the deploy finished.",
                false,
            ),
            (
                "pref.theme",
                "dark",
                "The dark ending of the film surprised everyone.",
                false,
            ),
            (
                "pref.editor",
                "neovim",
                "The user's editor of choice is Neovim.",
                true,
            ),
            (
                "pref.editor",
                "neovim",
                "Neovim 0.10 was released with a new LSP client.",
                false,
            ),
            (
                "user.team",
                "billing",
                "The user works on the billing team.",
                true,
            ),
            (
                "user.team",
                "billing",
                "The billing page shows a wrong total for March.",
                false,
            ),
            (
                "user.city",
                "Paris",
                "The user lives in Paris and works remotely.",
                false,
            ),
            (
                "pref.theme",
                "dark mode",
                "Set the theme to dark mode everywhere.",
                true,
            ),
            ("pref.theme", "dark mode", "Dark and modern theme.", false),
            // Generic and short values never retire by text alone.
            (
                "pref.notifications",
                "true",
                "Notifications: true for email.",
                false,
            ),
            ("pref.shell", "zsh", "User's login shell is zsh.", false),
            ("pref.port", "8080", "The port is 8080 on staging.", false),
        ];
        for (key, value, text, expected) in cases {
            let got = judge(&fact(key, value), text, None);
            assert_eq!(got.is_some(), expected, "{key}={value}: {text}");
        }
    }

    #[test]
    fn meaning_needs_the_same_space_and_the_threshold() {
        let old = [1.0f32, 0.0];
        let close = [0.8f32, 0.6]; // cosine 0.8
        let far = [0.6f32, 0.8]; // cosine 0.6
        let with = |v: &'static str| OldFact {
            key: "pref.notifications",
            value: v,
            vector: Some(("m/2", &old)),
            retire_cosine: crate::embedder::calibration::Thresholds::REFERENCE.retire,
        };
        let text = "Notifications are on: true for email.";
        assert!(matches!(
            judge(&with("true"), text, Some(("m/2", &close))),
            Some(Evidence::Meaning(c)) if (c - 0.8).abs() < 1e-5
        ));
        assert_eq!(judge(&with("true"), text, Some(("m/2", &far))), None);
        assert_eq!(judge(&with("true"), text, Some(("other/2", &close))), None);
        // Meaning never stands in for the quote.
        assert_eq!(judge(&with("false"), text, Some(("m/2", &close))), None);
        // A one-character value is not a quote at all.
        assert_eq!(judge(&with("a"), "a b c", Some(("m/2", &close))), None);
    }
}
