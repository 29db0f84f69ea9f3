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
//! [`rrf`] fuses a vector ranking with a keyword (BM25) ranking for the
//! hybrid mode.

use std::collections::HashSet;

/// Cosine a fragment needs for context injection.
pub const RELEVANCE_THRESHOLD: f32 = 0.55;
/// Relaxed threshold for long fragments (long texts dilute cosine).
pub const LONG_TEXT_THRESHOLD: f32 = 0.42;
/// What counts as long, in characters.
pub const LONG_TEXT_CHARS: usize = 300;
/// Daily decay rate: exp(−0.03 × days) halves at ~23 days.
pub const DECAY_PER_DAY: f64 = 0.03;
/// MMR trade-off between relevance and novelty.
pub const MMR_LAMBDA: f64 = 0.6;
/// Recall-safe ceiling on the MMR candidate pool.
pub const MMR_MAX_POOL: usize = 1000;
/// Reciprocal-rank-fusion constant (Cormack et al.).
pub const RRF_K: f64 = 60.0;
/// Cosine above which a new fragment duplicates an existing one.
pub const NEAR_DUPLICATE_COSINE: f32 = 0.88;

/// Whether a fragment of `chars` characters with raw cosine `cosine` may be
/// injected into context.
pub fn passes_gate(cosine: f32, chars: usize) -> bool {
    let threshold = if chars > LONG_TEXT_CHARS {
        LONG_TEXT_THRESHOLD
    } else {
        RELEVANCE_THRESHOLD
    };
    cosine >= threshold
}

/// The time factor: exp(−0.03 × days_old); future dates count as today.
pub fn decay(days_old: f64) -> f64 {
    (-DECAY_PER_DAY * days_old.max(0.0)).exp()
}

/// cosine × (0.7 + 0.3 × importance) × decay.
pub fn decayed_score(cosine: f32, importance: f64, days_old: f64) -> f64 {
    f64::from(cosine) * (0.7 + 0.3 * importance.clamp(0.0, 1.0)) * decay(days_old)
}

/// Lowercase alphanumeric words, for MMR's Jaccard similarity.
pub fn word_set(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// |a ∩ b| / |a ∪ b|; 0 for two empty sets.
pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

/// Greedy Maximal Marginal Relevance. `candidates` are (relevance, word
/// set) pairs, best first; returns the indices chosen, at most `limit`.
/// Each step takes the candidate maximizing
/// λ × relevance − (1 − λ) × max Jaccard to anything already chosen.
pub fn mmr(candidates: &[(f64, HashSet<String>)], limit: usize) -> Vec<usize> {
    let pool = candidates.len().min(MMR_MAX_POOL);
    let mut chosen: Vec<usize> = Vec::with_capacity(limit.min(pool));
    let mut left: Vec<usize> = (0..pool).collect();
    while chosen.len() < limit && !left.is_empty() {
        let mut best = (f64::NEG_INFINITY, 0usize);
        for (slot, &i) in left.iter().enumerate() {
            let redundancy = chosen
                .iter()
                .map(|&j| jaccard(&candidates[i].1, &candidates[j].1))
                .fold(0.0, f64::max);
            let value = MMR_LAMBDA * candidates[i].0 - (1.0 - MMR_LAMBDA) * redundancy;
            if value > best.0 {
                best = (value, slot);
            }
        }
        chosen.push(left.remove(best.1));
    }
    chosen
}

/// Reciprocal rank fusion of several rankings (ids, best first): each id
/// scores Σ 1 / (k + rank). Returns ids best first with their fused score.
pub fn rrf(rankings: &[Vec<i64>]) -> Vec<(i64, f64)> {
    let mut scores: std::collections::HashMap<i64, f64> = std::collections::HashMap::new();
    for ranking in rankings {
        for (rank, id) in ranking.iter().enumerate() {
            *scores.entry(*id).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(i64, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// Normalizes tags: trimmed, lowercase, inner whitespace to '-', only
/// letters, digits, '-', '_', ':' and '.', at most 40 chars each, at most
/// 20 tags, no duplicates, order kept.
pub fn sanitize_tags(tags: &[String]) -> Vec<String> {
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
        assert!(passes_gate(0.55, 10));
        assert!(!passes_gate(0.54, 10));
        assert!(!passes_gate(0.45, 300));
        assert!(passes_gate(0.45, 301));
        assert!(!passes_gate(0.41, 2000));
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
        let c = vec![
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
        assert_eq!(mmr(&c, 2), vec![0, 2]);
        assert_eq!(mmr(&c, 3), vec![0, 2, 1]);
        assert!(mmr(&c, 0).is_empty());
    }

    #[test]
    fn rrf_rewards_agreement() {
        let fused = rrf(&[vec![1, 2, 3], vec![3, 1, 4]]);
        assert_eq!(fused[0].0, 1);
        assert_eq!(fused[1].0, 3);
        assert_eq!(fused.len(), 4);
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
