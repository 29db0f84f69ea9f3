//! The ranking mirror: an in-memory copy of the active semantic rows with
//! their stems precomputed, kept by the `VectorStore` actor.
//!
//! Why: ranking reads every row on every context build. Loading and stemming
//! 10,000 rows from SQLite cost ~100 ms per call; with the mirror, a call
//! fetches only the rows changed since the last one (by the `seq` change
//! counter that triggers maintain, so writes by another process, such as the
//! one-shot CLI, are seen too) and scores precomputed stem sets.
//!
//! The mirror lives in the actor struct and is touched only from the
//! actor's own context (the delta is fetched off-actor, then applied and
//! ranked in the actor), so it needs no lock.

use std::collections::{HashMap, HashSet};

use super::types::{ScoredEntry, SemanticEntry};
use crate::embedder::vector::cosine;
use crate::vector_store::keyword::{stems, KeywordQuery};
use crate::vector_store::semantic::validate::LESSON_PREFIX;
use crate::vector_store::space::types::EmbeddedQuery;
use crate::vector_store::text::value_text;

/// One changed row as read from memory.db.
#[derive(Debug, Clone)]
pub(crate) struct ChangedRow {
    /// The row as stored.
    pub entry: SemanticEntry,
    /// Its change sequence number.
    pub seq: i64,
    /// Whether it is now a tombstone.
    pub is_deleted: bool,
    /// Its stored vector with the signature of the space it was made in.
    pub vector: Option<(String, Vec<f32>)>,
}

#[derive(Debug)]
struct MirrorRow {
    entry: SemanticEntry,
    seq: i64,
    key_stems: HashSet<String>,
    value_stems: HashSet<String>,
    vector: Option<(String, Vec<f32>)>,
}

/// Weight of the cosine term when the query embedded (spec:
/// `_SEMANTIC_VECTOR_WEIGHT`).
pub(crate) const VECTOR_WEIGHT: f64 = 0.6;
/// Weight of the keyword term alongside a cosine (`_SEMANTIC_KEYWORD_WEIGHT`).
pub(crate) const KEYWORD_WEIGHT: f64 = 0.4;

/// A query vector and the space signature it belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueryVector<'a> {
    /// The embedded query.
    pub vector: &'a [f32],
    /// `<model_id>/<dim>` of the space it was made in.
    pub signature: &'a str,
}

impl<'a> QueryVector<'a> {
    /// The query's vector with its signature in the store's space, when
    /// there is both (see [`EmbeddedQuery::signature_in`]).
    pub(crate) fn of(
        embedded: Option<&'a EmbeddedQuery>,
        signature: Option<&'a str>,
    ) -> Option<Self> {
        embedded.zip(signature).map(|(e, signature)| QueryVector {
            vector: &e.vector,
            signature,
        })
    }
}

/// A `lesson.*` row of the mirror, borrowed for ranking.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MirroredLesson<'a> {
    /// The row as stored (its value is the lesson text).
    pub entry: &'a SemanticEntry,
    /// Stems of the lesson text.
    pub stems: &'a HashSet<String>,
    /// Its vector with the signature of its space.
    pub vector: Option<&'a (String, Vec<f32>)>,
}

/// Active semantic rows with precomputed stems.
#[derive(Debug, Default)]
pub(crate) struct SemanticMirror {
    seq: i64,
    rows: HashMap<String, MirrorRow>,
}

impl SemanticMirror {
    /// The highest change sequence applied so far (0 when empty).
    pub(crate) fn seq(&self) -> i64 {
        self.seq
    }

    /// Forgets everything (after a restart the next delta reloads it all).
    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }

    /// Applies rows changed since [`Self::seq`]. Applying the same or an
    /// older delta twice is harmless: a row only replaces an older version.
    pub(crate) fn apply(&mut self, changed: Vec<ChangedRow>) {
        for row in changed {
            self.seq = self.seq.max(row.seq);
            if self
                .rows
                .get(&row.entry.key)
                .is_some_and(|r| r.seq >= row.seq)
            {
                continue;
            }
            if row.is_deleted {
                self.rows.remove(&row.entry.key);
                continue;
            }
            let key_stems = stems(&row.entry.key);
            let value_stems = stems(&value_text(&row.entry.value));
            self.rows.insert(
                row.entry.key.clone(),
                MirrorRow {
                    entry: row.entry,
                    seq: row.seq,
                    key_stems,
                    value_stems,
                    vector: row.vector,
                },
            );
        }
    }

    /// Number of active rows held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.rows.len()
    }

    /// The lesson rows (lessons are semantic rows under `lesson.`), in no
    /// particular order.
    pub(crate) fn lessons(&self) -> impl Iterator<Item = MirroredLesson<'_>> {
        self.rows
            .values()
            .filter(|r| r.entry.key.starts_with(LESSON_PREFIX))
            .map(|r| MirroredLesson {
                entry: &r.entry,
                stems: &r.value_stems,
                vector: r.vector.as_ref(),
            })
    }

    /// Every row ranked for `query`: best score first, then newest. With a
    /// query vector every row scores 0.6 × cosine + 0.4 × keyword (a row
    /// without a vector of the query's space gets 0 on the cosine term, so
    /// un-embedded rows cannot outrank embedded ones on keywords alone);
    /// without one, keyword only. `keep` filters rows before they are
    /// cloned out.
    pub(crate) fn rank(
        &self,
        query: &KeywordQuery,
        vector: Option<QueryVector<'_>>,
        keep: impl Fn(f64) -> bool,
    ) -> Vec<ScoredEntry> {
        let score = |row: &MirrorRow| {
            let keyword = query.score_stems(&row.key_stems, &row.value_stems);
            match vector {
                None => keyword,
                Some(q) => {
                    let cos = match &row.vector {
                        Some((sig, v)) if sig == q.signature => f64::from(cosine(q.vector, v)),
                        _ => 0.0,
                    };
                    VECTOR_WEIGHT * cos + KEYWORD_WEIGHT * keyword
                }
            }
        };
        let mut scored: Vec<(&MirrorRow, f64)> = self
            .rows
            .values()
            .map(|row| (row, score(row)))
            .filter(|(_, score)| keep(*score))
            .collect();
        scored.sort_by(|(a, sa), (b, sb)| {
            sb.total_cmp(sa)
                .then_with(|| b.entry.updated_at.cmp(&a.entry.updated_at))
                .then_with(|| b.seq.cmp(&a.seq))
        });
        scored
            .into_iter()
            .map(|(row, score)| ScoredEntry {
                entry: row.entry.clone(),
                score,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str, value: &str, seq: i64, deleted: bool) -> ChangedRow {
        ChangedRow {
            entry: SemanticEntry {
                key: key.into(),
                value: serde_json::Value::String(value.into()),
                confidence: 1.0,
                source: "user_explicit".into(),
                created_at: format!("2026-01-01T00:00:{seq:02}.000000Z"),
                updated_at: format!("2026-01-01T00:00:{seq:02}.000000Z"),
            },
            seq,
            is_deleted: deleted,
            vector: None,
        }
    }

    #[test]
    fn deltas_replace_older_versions_and_drop_tombstones() {
        let mut mirror = SemanticMirror::default();
        mirror.apply(vec![
            row("pref.a", "dark", 1, false),
            row("pref.b", "vim", 2, false),
        ]);
        assert_eq!((mirror.len(), mirror.seq()), (2, 2));
        mirror.apply(vec![
            row("pref.a", "light", 3, false),
            row("pref.b", "vim", 4, true),
        ]);
        assert_eq!(mirror.len(), 1);
        // A stale replay changes nothing.
        mirror.apply(vec![row("pref.a", "dark", 1, false)]);
        let ranked = mirror.rank(&KeywordQuery::new(""), None, |_| true);
        assert_eq!(ranked[0].entry.value, "light");
        assert_eq!(mirror.seq(), 4);
    }

    #[test]
    fn ranking_is_score_then_recency() {
        let mut mirror = SemanticMirror::default();
        mirror.apply(vec![
            row("pref.editor", "helix", 1, false),
            row("pref.note", "an editor note", 2, false),
            row("pref.shell", "zsh", 3, false),
        ]);
        let keys = |ranked: Vec<ScoredEntry>| -> Vec<String> {
            ranked.into_iter().map(|s| s.entry.key).collect()
        };
        let q = KeywordQuery::new("editor");
        assert_eq!(
            keys(mirror.rank(&q, None, |_| true)),
            ["pref.editor", "pref.note", "pref.shell"]
        );
        assert_eq!(
            keys(mirror.rank(&q, None, |s| s > 0.0)),
            ["pref.editor", "pref.note"]
        );
        let empty = KeywordQuery::new("");
        assert_eq!(
            keys(mirror.rank(&empty, None, |_| true)),
            ["pref.shell", "pref.note", "pref.editor"]
        );
    }

    #[test]
    fn vectors_blend_with_keywords_only_within_their_space() {
        let mut mirror = SemanticMirror::default();
        let mut a = row("pref.a", "alpha", 1, false);
        a.vector = Some(("m/2".into(), vec![1.0, 0.0]));
        let mut b = row("pref.b", "beta", 2, false);
        b.vector = Some(("old/2".into(), vec![1.0, 0.0]));
        mirror.apply(vec![a, b, row("pref.c", "gamma", 3, false)]);
        let q = QueryVector {
            vector: &[1.0, 0.0],
            signature: "m/2",
        };
        let ranked = mirror.rank(&KeywordQuery::new("gamma"), Some(q), |_| true);
        let scores: Vec<(String, f64)> =
            ranked.into_iter().map(|s| (s.entry.key, s.score)).collect();
        assert_eq!(scores[0].0, "pref.a");
        assert!((scores[0].1 - VECTOR_WEIGHT).abs() < 1e-6);
        assert_eq!(scores[1].0, "pref.c");
        assert!(
            (scores[1].1 - KEYWORD_WEIGHT * 0.25).abs() < 1e-6,
            "{scores:?}"
        );
        assert_eq!(
            scores[2],
            ("pref.b".to_owned(), 0.0),
            "foreign-space vector ignored"
        );
    }
}
