//! Episodic ranking (spec: "Episodic Memory → Search", "Relevance
//! threshold", "MMR reranking", "Fading → Episodic decay").
//!
//! Pure functions, in the order a search applies them:
//! 1. [`passes_gate`] on the RAW cosine, before any ranking, so an old exact
//!    match cannot be pushed past the limit by recent noise and then lost;
//! 2. [`decayed_score`] = cosine × (0.7 + 0.3 × importance) × exp(−0.03 × days);
//! 3. [`mmr`] over at most [`MMR_MAX_POOL`] candidates, Jaccard similarity of
//!    word sets, λ = 0.6, to keep near-duplicates from filling the budget.
//!
//! The hybrid mode (the default, beyond the reference) replaces steps 1–2
//! with a fused relevance, because the benchmark on LoCoMo showed both parts
//! of the reference formula losing evidence (see `kirocrew bench locomo`):
//! - **fusion**: [`fuse`] = a convex combination of max-normalized BM25 and
//!   min-max-normalized cosine (Bruch et al., "An Analysis of Fusion
//!   Functions for Hybrid Retrieval", 2023: score fusion beats reciprocal
//!   rank fusion when one ranker is much weaker, as MiniLM is here);
//! - **episode context**: [`with_episode_context`]: a fragment inherits half
//!   of its best neighbour's relevance, where neighbours are the fragments
//!   written just before and after it in the same episode (no silence longer
//!   than [`EPISODE_GAP_HOURS`]). An answer ("Adoption agencies!") rarely
//!   repeats the words of the question that prompted it; its neighbour does;
//! - **recency as a bounded prior**: [`recency_prior`] takes at most 10% off
//!   for age instead of multiplying by exp(−0.03 × days), which made a
//!   five-month-old exact match lose to anything from last week.

use std::hash::{Hash, Hasher};

use chrono::{DateTime, Utc};

use crate::embedder::calibration::Thresholds;

/// What counts as long, in characters (the relevance gate is relaxed for
/// longer fragments: long texts dilute cosine).
pub(crate) const LONG_TEXT_CHARS: usize = 300;
/// Daily decay rate: exp(−0.03 × days) halves at ~23 days.
pub(crate) const DECAY_PER_DAY: f64 = 0.03;
/// MMR trade-off between relevance and novelty.
pub(crate) const MMR_LAMBDA: f64 = 0.6;
/// Recall-safe ceiling on the MMR candidate pool.
pub(crate) const MMR_MAX_POOL: usize = 1000;
/// Weight of the keyword (BM25) term in hybrid relevance; the cosine term
/// gets the rest. Equal weights: no ranker is preferred a priori.
pub(crate) const HYBRID_KEYWORD_WEIGHT: f64 = 0.5;
/// Share of its best neighbour's relevance a fragment inherits.
pub(crate) const EPISODE_CONTEXT_WEIGHT: f64 = 0.5;
/// Longest silence inside one episode: the spec's idle-session rule
/// (`memory.history_idle_hours` defaults to 3).
pub(crate) const EPISODE_GAP_HOURS: f64 = 3.0;
/// Most of a hybrid score that age can take away.
pub(crate) const RECENCY_PRIOR_WEIGHT: f64 = 0.1;
/// Whether a fragment of `chars` characters with raw cosine `cosine` may be
/// injected into context: `thresholds.relevance` (`relevance_long` for long
/// fragments), on the model's scale (`embedder/calibration.rs`).
pub(crate) fn passes_gate(cosine: f32, chars: usize, thresholds: &Thresholds) -> bool {
    let threshold = if chars > LONG_TEXT_CHARS {
        thresholds.relevance_long
    } else {
        thresholds.relevance
    };
    cosine >= threshold
}

/// The time factor: exp(−0.03 × days_old); future dates count as today.
pub(crate) fn decay(days_old: f64) -> f64 {
    (-DECAY_PER_DAY * days_old.max(0.0)).exp()
}

/// cosine × (0.7 + 0.3 × importance) × decay.
pub(crate) fn decayed_score(cosine: f32, importance: f64, days_old: f64) -> f64 {
    f64::from(cosine) * importance_factor(importance) * decay(days_old)
}

/// The spec's importance factor: 0.7 + 0.3 × importance.
pub(crate) fn importance_factor(importance: f64) -> f64 {
    0.7 + 0.3 * importance.clamp(0.0, 1.0)
}

/// Hybrid mode's recency prior: 1 for today, falling towards
/// 1 − [`RECENCY_PRIOR_WEIGHT`] with the spec's decay curve.
pub(crate) fn recency_prior(days_old: f64) -> f64 {
    1.0 - RECENCY_PRIOR_WEIGHT + RECENCY_PRIOR_WEIGHT * decay(days_old)
}

/// Hybrid relevance in [0, 1] from a normalized keyword score and, when the
/// query embedded, a normalized cosine (both in [0, 1]). Without a query
/// vector the keyword term is all there is.
pub(crate) fn fuse(keyword: f64, vector: Option<f64>) -> f64 {
    match vector {
        Some(v) => HYBRID_KEYWORD_WEIGHT * keyword + (1.0 - HYBRID_KEYWORD_WEIGHT) * v,
        None => keyword,
    }
}

/// Maps scores onto [0, 1] by min-max over `scores`; all-equal (or empty)
/// scores map to 0, since they cannot tell candidates apart.
pub(crate) fn min_max(scores: impl Iterator<Item = f64> + Clone) -> impl Fn(f64) -> f64 {
    let lo = scores.clone().fold(f64::INFINITY, f64::min);
    let hi = scores.fold(f64::NEG_INFINITY, f64::max);
    move |s| {
        if hi > lo {
            (s - lo) / (hi - lo)
        } else {
            0.0
        }
    }
}

/// Whether two fragments written `gap_hours` apart belong to one episode.
pub(crate) fn same_episode(gap_hours: f64) -> bool {
    gap_hours.abs() <= EPISODE_GAP_HOURS
}

/// Whether fragments written at `a` and `b` belong to one episode.
pub(crate) fn same_episode_at(a: DateTime<Utc>, b: DateTime<Utc>) -> bool {
    same_episode((a - b).num_seconds() as f64 / 3600.0)
}

/// A fragment's relevance plus [`EPISODE_CONTEXT_WEIGHT`] × the best
/// relevance among its episode neighbours.
pub(crate) fn with_episode_context(own: f64, neighbours: &[f64]) -> f64 {
    own + EPISODE_CONTEXT_WEIGHT * neighbours.iter().copied().fold(0.0, f64::max)
}

/// A word set for MMR's Jaccard similarity: the lowercase alphanumeric
/// words of `text`, each hashed once, sorted and deduplicated. Comparing two
/// sorted id lists is a linear merge with no hashing or allocation, which is
/// what MMR does thousands of times per search.
pub(crate) fn word_set(text: &str) -> WordSet {
    let mut ids: Vec<u64> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut h = std::hash::DefaultHasher::new();
            w.to_lowercase().hash(&mut h);
            h.finish()
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    WordSet(ids)
}

/// Sorted, distinct word hashes (see [`word_set`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WordSet(Vec<u64>);

/// |a ∩ b| / |a ∪ b|; 0 for two empty sets.
pub(crate) fn jaccard(a: &WordSet, b: &WordSet) -> f64 {
    let (a, b) = (&a.0, &b.0);
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    }
}

/// Greedy Maximal Marginal Relevance over the first [`MMR_MAX_POOL`]
/// candidates: `relevance[i]` is candidate i's relevance, `words(i)` its
/// word set (asked lazily, at most once per candidate). Each step takes the
/// candidate maximizing λ × relevance − (1 − λ) × max Jaccard to anything
/// already chosen; returns the indices chosen, at most `limit`.
///
/// Exact, but not quadratic: a candidate's redundancy is folded in only
/// against the picks made since it was last looked at, and when relevance
/// is sorted best first a step stops scanning once λ × relevance cannot beat
/// the best value found (redundancy is never negative). A 1,000-candidate
/// pool then costs a few dozen word sets instead of a million Jaccards.
pub(crate) fn mmr(relevance: &[f64], words: impl Fn(usize) -> WordSet, limit: usize) -> Vec<usize> {
    let pool = relevance.len().min(MMR_MAX_POOL);
    let sorted = relevance[..pool].windows(2).all(|w| w[0] >= w[1]);
    let mut sets: Vec<Option<WordSet>> = vec![None; pool];
    let mut redundancy = vec![0.0f64; pool];
    let mut folded = vec![0usize; pool];
    let mut taken = vec![false; pool];
    let mut chosen: Vec<usize> = Vec::with_capacity(limit.min(pool));
    while chosen.len() < limit.min(pool) {
        let mut best: Option<(f64, usize)> = None;
        for i in 0..pool {
            if taken[i] {
                continue;
            }
            if let Some((value, _)) = best {
                if sorted && MMR_LAMBDA * relevance[i] <= value {
                    break;
                }
            }
            if folded[i] < chosen.len() {
                if sets[i].is_none() {
                    sets[i] = Some(words(i));
                }
                let own = sets[i].as_ref();
                for &j in &chosen[folded[i]..] {
                    // Picks always have their set (filled below).
                    if let (Some(a), Some(b)) = (own, sets[j].as_ref()) {
                        redundancy[i] = redundancy[i].max(jaccard(a, b));
                    }
                }
                folded[i] = chosen.len();
            }
            let value = MMR_LAMBDA * relevance[i] - (1.0 - MMR_LAMBDA) * redundancy[i];
            if best.is_none_or(|(b, _)| value > b) {
                best = Some((value, i));
            }
        }
        let Some((_, pick)) = best else { break };
        if sets[pick].is_none() {
            sets[pick] = Some(words(pick));
        }
        taken[pick] = true;
        chosen.push(pick);
    }
    chosen
}

/// Normalizes tags: trimmed, lowercase, inner whitespace to '-', only
/// letters, digits, '-', '_', ':' and '.', at most 40 chars each, at most
/// 20 tags, no duplicates, order kept.
pub(crate) fn sanitize_tags(tags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        let cleaned: String = tag
            .trim()
            .to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join("-")
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
            .take(40)
            .collect();
        if !cleaned.is_empty() && !out.contains(&cleaned) && out.len() < 20 {
            out.push(cleaned);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_reads_raw_cosine_with_a_long_text_relaxation() {
        let t = Thresholds {
            relevance: 0.55,
            relevance_long: 0.42,
            ..Thresholds::REFERENCE
        };
        assert!(passes_gate(0.55, 10, &t));
        assert!(!passes_gate(0.54, 10, &t));
        assert!(!passes_gate(0.45, 300, &t));
        assert!(passes_gate(0.45, 301, &t));
        assert!(!passes_gate(0.41, 2000, &t));
    }

    #[test]
    fn decay_matches_the_spec_example() {
        // 30 days, importance 0.8, cosine 0.9 → ≈ 0.34.
        let s = decayed_score(0.9, 0.8, 30.0);
        assert!((s - 0.9 * 0.94 * (-0.9f64).exp()).abs() < 1e-6, "{s}");
        assert!((s - 0.344).abs() < 0.001, "{s}");
        assert!((decay(23.1) - 0.5).abs() < 0.01, "halves at ~23 days");
        assert_eq!(decay(-5.0), 1.0);
    }

    #[test]
    fn mmr_drops_a_near_duplicate_of_a_chosen_result() {
        let c = [
            (
                0.90,
                word_set("Caroline went to the LGBTQ support group yesterday"),
            ),
            (
                0.89,
                word_set("Caroline went to the LGBTQ support group yesterday evening"),
            ),
            (0.70, word_set("Melanie painted a sunrise over the lake")),
        ];
        let rel: Vec<f64> = c.iter().map(|x| x.0).collect();
        let words = |i: usize| c[i].1.clone();
        assert_eq!(mmr(&rel, words, 2), vec![0, 2]);
        assert_eq!(mmr(&rel, words, 3), vec![0, 2, 1]);
        assert!(mmr(&rel, words, 0).is_empty());
    }

    /// The textbook quadratic MMR the fast one must agree with.
    fn naive_mmr(c: &[(f64, WordSet)], limit: usize) -> Vec<usize> {
        let mut chosen: Vec<usize> = Vec::new();
        let mut left: Vec<usize> = (0..c.len().min(MMR_MAX_POOL)).collect();
        while chosen.len() < limit && !left.is_empty() {
            let mut best = (f64::NEG_INFINITY, 0usize);
            for (slot, &i) in left.iter().enumerate() {
                let red = chosen
                    .iter()
                    .map(|&j| jaccard(&c[i].1, &c[j].1))
                    .fold(0.0, f64::max);
                let value = MMR_LAMBDA * c[i].0 - (1.0 - MMR_LAMBDA) * red;
                if value > best.0 {
                    best = (value, slot);
                }
            }
            chosen.push(left.remove(best.1));
        }
        chosen
    }

    #[test]
    fn jaccard_over_word_sets() {
        let a = word_set("The cat sat on the mat");
        let b = word_set("the CAT sat");
        assert!((jaccard(&a, &b) - 3.0 / 5.0).abs() < 1e-12);
        assert_eq!(jaccard(&word_set(""), &word_set("  ")), 0.0);
        assert_eq!(jaccard(&a, &a), 1.0);
    }

    #[test]
    fn fast_mmr_agrees_with_the_textbook_version() {
        // Deterministic pseudo-random pools over a small vocabulary (many
        // overlaps), sorted and unsorted.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..40 {
            let n = 1 + (next() % 60) as usize;
            let mut c: Vec<(f64, WordSet)> = (0..n)
                .map(|_| {
                    let len = 1 + next() % 6;
                    let words: Vec<String> =
                        (0..len).map(|_| format!("w{}", next() % 12)).collect();
                    ((next() % 1000) as f64 / 1000.0, word_set(&words.join(" ")))
                })
                .collect();
            if round % 2 == 0 {
                c.sort_by(|a, b| b.0.total_cmp(&a.0));
            }
            let rel: Vec<f64> = c.iter().map(|x| x.0).collect();
            for limit in [1, 5, 10, n + 3] {
                assert_eq!(
                    mmr(&rel, |i| c[i].1.clone(), limit),
                    naive_mmr(&c, limit),
                    "round {round} limit {limit}"
                );
            }
        }
    }

    #[test]
    fn fusion_weighs_both_rankers_and_falls_back_to_keywords() {
        assert!((fuse(1.0, Some(0.0)) - 0.5).abs() < 1e-12);
        assert!((fuse(0.2, Some(0.6)) - 0.4).abs() < 1e-12);
        assert_eq!(fuse(0.3, None), 0.3);
        let scores = [0.2, 0.4, 0.6];
        let norm = min_max(scores.iter().copied());
        assert_eq!(norm(0.2), 0.0);
        assert_eq!(norm(0.6), 1.0);
        assert!((norm(0.4) - 0.5).abs() < 1e-12);
        let flat = min_max([0.3, 0.3].iter().copied());
        assert_eq!(flat(0.3), 0.0);
    }

    #[test]
    fn recency_prior_is_bounded() {
        assert_eq!(recency_prior(0.0), 1.0);
        assert!((recency_prior(10_000.0) - 0.9).abs() < 1e-9);
        assert!(recency_prior(30.0) > recency_prior(60.0));
        assert!((importance_factor(2.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn episode_context_inherits_half_the_best_neighbour() {
        assert_eq!(with_episode_context(0.2, &[]), 0.2);
        assert!((with_episode_context(0.2, &[0.8, 0.4]) - 0.6).abs() < 1e-12);
        assert!(same_episode(3.0) && same_episode(-0.5));
        assert!(!same_episode(3.01));
    }

    #[test]
    fn tags_are_sanitized() {
        let tags = vec![
            " Travel Plans ".to_owned(),
            "travel-plans".to_owned(),
            "<script>".to_owned(),
            "".to_owned(),
            "conv:0".to_owned(),
        ];
        assert_eq!(
            sanitize_tags(&tags),
            vec!["travel-plans", "script", "conv:0"]
        );
        let many: Vec<String> = (0..30).map(|i| format!("t{i}")).collect();
        assert_eq!(sanitize_tags(&many).len(), 20);
    }
}
