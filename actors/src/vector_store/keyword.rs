//! Keyword relevance for semantic rows: the spec's fallback scorer ("word
//! overlap on keys and values, key matches weighted 3×, with snowballstemmer
//! expansion").
//!
//! Query and row text are split into lowercase alphanumeric words, English
//! stop words are dropped (they would make every row match "the"), and each
//! word is reduced with the Snowball English stemmer so "running" meets
//! "runs". Each distinct query stem scores 3 if it occurs in the key, 1 if in
//! the value, and the sum is divided by 4 × the number of query stems, so the
//! score lies in [0, 1] and can later be blended with a cosine
//! (0.6 × vector + 0.4 × keyword) when the embedder arrives.

use std::collections::HashSet;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Weight of a query word found in the key.
pub(super) const KEY_WEIGHT: f64 = 3.0;
/// Weight of a query word found in the value.
pub(super) const VALUE_WEIGHT: f64 = 1.0;

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Function words dropped from queries (never from stored text). A query
/// word such as "did" or "about" matches most rows and, in BM25 as in the
/// overlap score, only adds noise.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "an", "and", "are", "as", "at", "be", "been", "before", "being", "but",
    "by", "can", "could", "did", "do", "does", "down", "for", "from", "had", "has", "have", "he",
    "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "may", "me", "might",
    "my", "no", "not", "of", "on", "or", "our", "out", "over", "she", "should", "so", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "up",
    "us", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will",
    "with", "would", "yes", "you", "your",
];

/// The lowercase words of `text` (runs of letters and digits).
pub(crate) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Whether a lowercase word is one of the function words queries drop.
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// The Snowball English stem of one lowercase word.
pub(crate) fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// The distinct stems of `text`. Row text keeps its stop words: the query
/// side decides which words count.
pub(super) fn stems(text: &str) -> HashSet<String> {
    words(text).map(|w| STEMMER.stem(&w).into_owned()).collect()
}

/// The query's lowercase words without stop words, in order, each once; a
/// query of only stop words keeps them, so it still matches something.
pub(crate) fn query_words(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words(query).filter(|w| !STOP_WORDS.contains(&w.as_str())) {
        if !out.contains(&w) {
            out.push(w);
        }
    }
    if out.is_empty() {
        out = words(query).collect();
        out.dedup();
    }
    out
}

/// The stems of the query words of `text` (stop words dropped): the
/// keyword set the lesson topic-overlap rule compares.
pub(super) fn keyword_stems(text: &str) -> HashSet<String> {
    query_words(text)
        .iter()
        .map(|w| STEMMER.stem(w).into_owned())
        .collect()
}

/// A parsed query, built once per request and applied to every row.
#[derive(Debug, Clone)]
pub(super) struct KeywordQuery {
    stems: HashSet<String>,
}

impl KeywordQuery {
    /// Parses a query. A query of only stop words keeps them, so it still
    /// matches something rather than nothing.
    pub(super) fn new(query: &str) -> Self {
        Self {
            stems: keyword_stems(query),
        }
    }

    /// True when the query has no words at all (recency order applies).
    pub(super) fn is_empty(&self) -> bool {
        self.stems.is_empty()
    }

    /// Scores one row in [0, 1]. `value_text` is the value as a string
    /// (a JSON string's contents, otherwise its JSON text). The rankers
    /// precompute stems and call [`Self::score_stems`]; tests use this.
    #[cfg(test)]
    pub(super) fn score(&self, key: &str, value_text: &str) -> f64 {
        self.score_stems(&stems(key), &stems(value_text))
    }

    /// Scores a row whose stems were computed beforehand (see [`stems`]).
    pub(super) fn score_stems(
        &self,
        key_stems: &HashSet<String>,
        value_stems: &HashSet<String>,
    ) -> f64 {
        if self.stems.is_empty() {
            return 0.0;
        }
        let total: f64 = self
            .stems
            .iter()
            .map(|s| {
                let mut w = 0.0;
                if key_stems.contains(s) {
                    w += KEY_WEIGHT;
                }
                if value_stems.contains(s) {
                    w += VALUE_WEIGHT;
                }
                w
            })
            .sum();
        total / ((KEY_WEIGHT + VALUE_WEIGHT) * self.stems.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_matches_weigh_three_times_value_matches() {
        let q = KeywordQuery::new("editor");
        let in_key = q.score("pref.editor", "vim");
        let in_value = q.score("pref.tool", "editor is vim");
        assert!((in_key - 0.75).abs() < 1e-9);
        assert!((in_value - 0.25).abs() < 1e-9);
        assert!((q.score("pref.editor", "the editor") - 1.0).abs() < 1e-9);
        assert_eq!(q.score("pref.shell", "zsh"), 0.0);
    }

    #[test]
    fn stemming_joins_word_forms() {
        let q = KeywordQuery::new("running");
        assert!(q.score("pref.sport", "runs every morning") > 0.0);
        assert!(KeywordQuery::new("preferences").score("user.note", "preferred language") > 0.0);
    }

    #[test]
    fn stop_words_do_not_match_everything() {
        let q = KeywordQuery::new("what is the theme");
        assert_eq!(q.score("pref.shell", "the zsh shell is the default"), 0.0);
        assert!(q.score("pref.theme", "dark") > 0.0);
        // A stop-word-only query still matches literally.
        assert!(KeywordQuery::new("the").score("pref.x", "the") > 0.0);
    }

    #[test]
    fn empty_queries_are_empty() {
        assert!(KeywordQuery::new("").is_empty());
        assert!(KeywordQuery::new("  ,.;  ").is_empty());
    }

    #[test]
    fn unicode_words_are_kept() {
        let q = KeywordQuery::new("東京");
        assert!(q.score("user.city", "lives in 東京") > 0.0);
    }
}
