//! The episodic keyword index: BM25 over the mirror's active rows, kept in
//! memory and updated by the same change stream that feeds the mirror.
//!
//! ## Why not FTS5
//! A search used to run an FTS5 `MATCH` with one OR term per query word.
//! At 10,000 rows that query was the critical path of a session build
//! (issue 13: most of the episodic search's time), and it needs a pool
//! connection on every search. The mirror already holds every active row,
//! so the postings live beside it and a search is a few hash lookups.
//!
//! ## Same ranking as before
//! It reproduces what the FTS5 table (`tokenize = 'porter unicode61'`,
//! columns `text` and `tags`, `bm25()` with its defaults) ranked, so the
//! held-out retrieval figures carry over:
//! - tokens are maximal runs of letters and digits, case-folded with
//!   diacritics removed (unicode61), then stemmed (Snowball English, where
//!   FTS5 uses the original Porter: the two agree on nearly every word);
//! - a row's length is its token count over text and tags;
//! - score = Σ over query terms of idf × tf × (k1 + 1) /
//!   (tf + k1 × (1 − b + b × len / avglen)), k1 = 1.2, b = 0.75,
//!   idf = ln((N − n + 0.5) / (n + 0.5)) floored at 1e-6, as in
//!   `fts5_aux.c`.
//!
//! One difference is deliberate: N and n count active rows only (FTS5
//! also counted tombstoned ones, which no search can return).

use std::collections::HashMap;

use unicode_normalization::{char::is_combining_mark, UnicodeNormalization};

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;
/// FTS5's floor for a term in more than half the rows.
const MIN_IDF: f64 = 1e-6;

/// The index terms of `text`, in order (repeats kept: they are the term
/// frequencies).
pub(crate) fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(fold)
}

/// unicode61's folding (lowercase, no diacritics), then the stem.
fn fold(word: &str) -> String {
    crate::vector_store::keyword::stem(&plain(word))
}

/// unicode61's folding without the stem: lowercase, diacritics removed
/// ("Zoë" → "zoe"). Names are compared this way (`speakers.rs`).
pub(crate) fn plain(word: &str) -> String {
    word.nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// What the index remembers of one row, to take it out again.
#[derive(Debug, Clone)]
struct Doc {
    /// Distinct terms with their frequency.
    terms: Vec<(String, u32)>,
    /// Token count over text and tags.
    len: u32,
}

/// BM25 postings over the active rows.
#[derive(Debug, Default)]
pub(crate) struct KeywordIndex {
    /// term → row id → frequency in that row.
    postings: HashMap<String, HashMap<i64, u32>>,
    docs: HashMap<i64, Doc>,
    /// Σ of the rows' lengths.
    total_len: u64,
}

impl KeywordIndex {
    /// Indexes row `id` (replacing what it held before).
    pub(crate) fn upsert(&mut self, id: i64, text: &str, tags: &[String]) {
        self.remove(id);
        let mut counts: HashMap<String, u32> = HashMap::new();
        let mut len = 0u32;
        for term in terms(text).chain(tags.iter().flat_map(|t| terms(t))) {
            len = len.saturating_add(1);
            *counts.entry(term).or_default() += 1;
        }
        for (term, tf) in &counts {
            self.postings
                .entry(term.clone())
                .or_default()
                .insert(id, *tf);
        }
        self.total_len += u64::from(len);
        self.docs.insert(
            id,
            Doc {
                terms: counts.into_iter().collect(),
                len,
            },
        );
    }

    /// Takes row `id` out (a tombstone, or before its new version).
    pub(crate) fn remove(&mut self, id: i64) {
        let Some(doc) = self.docs.remove(&id) else {
            return;
        };
        self.total_len -= u64::from(doc.len);
        for (term, _) in doc.terms {
            if let Some(rows) = self.postings.get_mut(&term) {
                rows.remove(&id);
                if rows.is_empty() {
                    self.postings.remove(&term);
                }
            }
        }
    }

    /// Rows matching any of `words` (the query's words, stop words already
    /// dropped), best BM25 first, at most `limit`; ties go to the newer row.
    pub(crate) fn search(&self, words: &[String], limit: usize) -> Vec<(i64, f64)> {
        let n = self.docs.len() as f64;
        if n == 0.0 || limit == 0 {
            return Vec::new();
        }
        let avg_len = (self.total_len as f64 / n).max(1.0);
        let mut query: Vec<String> = words.iter().flat_map(|w| terms(w)).collect();
        query.sort();
        // FTS5 scores each OR'd phrase once, however often it is repeated.
        query.dedup();
        let mut scores: HashMap<i64, f64> = HashMap::new();
        for term in &query {
            let Some(rows) = self.postings.get(term) else {
                continue;
            };
            let hits = rows.len() as f64;
            let idf = ((n - hits + 0.5) / (hits + 0.5)).ln().max(MIN_IDF);
            for (&id, &tf) in rows {
                let len = self.docs.get(&id).map_or(avg_len, |d| f64::from(d.len));
                let tf = f64::from(tf);
                let part = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg_len));
                *scores.entry(id).or_default() += part;
            }
        }
        let mut ranked: Vec<(i64, f64)> = scores.into_iter().collect();
        let by_score = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0));
        if ranked.len() > limit {
            ranked.select_nth_unstable_by(limit - 1, by_score);
            ranked.truncate(limit);
        }
        ranked.sort_by(by_score);
        ranked
    }

    /// For each distinct term of `words`, its BM25 idf and the rows that
    /// hold it: a session's keyword coverage is built from these
    /// (`sessions.rs`).
    pub(crate) fn term_rows(&self, words: &[String]) -> Vec<(f64, Vec<i64>)> {
        let n = self.docs.len() as f64;
        let mut query: Vec<String> = words.iter().flat_map(|w| terms(w)).collect();
        query.sort();
        query.dedup();
        query
            .iter()
            .filter_map(|term| {
                let rows = self.postings.get(term)?;
                let hits = rows.len() as f64;
                let idf = ((n - hits + 0.5) / (hits + 0.5)).ln().max(MIN_IDF);
                Some((idf, rows.keys().copied().collect()))
            })
            .collect()
    }

    /// Rows indexed.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(q: &str) -> Vec<String> {
        crate::vector_store::keyword::query_words(q)
    }

    fn index(rows: &[(i64, &str)]) -> KeywordIndex {
        let mut ix = KeywordIndex::default();
        for (id, text) in rows {
            ix.upsert(*id, text, &[]);
        }
        ix
    }

    #[test]
    fn tokens_fold_case_diacritics_and_stems() {
        let t: Vec<String> = terms("Café RUNNING, naïve-runs 42").collect();
        assert_eq!(t, ["cafe", "run", "naiv", "run", "42"]);
        // A CJK run is one token, as unicode61 makes it.
        assert_eq!(terms("東京に行った").count(), 1);
    }

    #[test]
    fn rarer_terms_and_shorter_rows_rank_higher() {
        let ix = index(&[
            (1, "we went hiking in the mountains"),
            (2, "hiking"),
            (3, "the weather was fine"),
            (
                4,
                "the mountains and the weather and the hiking trip were long and tiring",
            ),
        ]);
        let hits = ix.search(&words("hiking mountains"), 10);
        let ids: Vec<i64> = hits.iter().map(|h| h.0).collect();
        assert_eq!(ids.len(), 3, "{hits:?}");
        assert_eq!(ids[0], 1, "both terms beat one: {hits:?}");
        assert!(ids.iter().position(|&i| i == 2) < ids.iter().position(|&i| i == 4));
        assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1));
    }

    #[test]
    fn the_score_is_fts5_bm25() {
        // Two rows, one term in one row: N = 2, n = 1, idf = ln(1.5/1.5)
        // floored; with three rows, idf = ln(2.5/1.5).
        let ix = index(&[(1, "alpha beta"), (2, "gamma delta"), (3, "epsilon zeta")]);
        let hits = ix.search(&words("alpha"), 10);
        let idf = (2.5f64 / 1.5).ln();
        // len = avglen = 2, tf = 1: the fraction is (k1+1)/(1+k1) = 1.
        assert_eq!(hits.len(), 1);
        assert!((hits[0].1 - idf).abs() < 1e-12, "{hits:?}");
    }

    #[test]
    fn tags_count_and_updates_replace_and_deletes_remove() {
        let mut ix = KeywordIndex::default();
        ix.upsert(1, "plain text", &["travel".into()]);
        assert_eq!(ix.search(&words("travel"), 5).len(), 1);
        ix.upsert(1, "now about cooking", &[]);
        assert!(ix.search(&words("travel"), 5).is_empty());
        assert_eq!(ix.search(&words("cooking"), 5)[0].0, 1);
        ix.remove(1);
        assert!(ix.search(&words("cooking"), 5).is_empty());
        assert_eq!(ix.len(), 0);
        assert_eq!(ix.total_len, 0);
        assert!(ix.postings.is_empty());
    }

    #[test]
    fn limit_keeps_the_best_and_ties_prefer_newer_rows() {
        let rows: Vec<(i64, String)> = (1..=50).map(|i| (i, format!("same words {i}"))).collect();
        let mut ix = KeywordIndex::default();
        for (id, t) in &rows {
            ix.upsert(*id, t, &[]);
        }
        let hits = ix.search(&words("same"), 5);
        assert_eq!(
            hits.iter().map(|h| h.0).collect::<Vec<_>>(),
            [50, 49, 48, 47, 46]
        );
        assert!(ix.search(&words("absent"), 5).is_empty());
        assert!(ix.search(&[], 5).is_empty());
    }
}
