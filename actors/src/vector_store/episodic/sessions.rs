//! Two-stage retrieval: sessions first, then turns (issue 37), pure.
//!
//! ## Why
//! A multi-hop or open-domain question ("What activities does Melanie do
//! with her family?") is answered by several turns of one conversation
//! session, none of which holds all of the question's words. Ranked turn
//! by turn, each such turn is mediocre; ranked as a session, the session
//! covers the question. So a search scores each session (an episode:
//! adjacent writes no more than 3 h apart, `rank::same_episode`) first,
//! and a turn's score carries its session's.
//!
//! Sessions are runs of dialogue turns (`"<speaker>: …"` rows, see
//! `mirror.rs`); notes and facts have none and get no session score.
//!
//! A session's score fuses, with equal weights, two [0, 1] terms (each
//! max-normalized over the sessions of this query), after the
//! session-level max-sim + BM25 fusion reported on LoCoMo:
//! - **max-sim**: its best turn's own fused relevance;
//! - **coverage**: Σ idf of the distinct query terms found anywhere in the
//!   session, i.e. BM25 over the session as one document without the
//!   term-frequency saturation (a session is long; repeating a word in it
//!   says little).

use std::collections::{HashMap, HashSet};

/// Weight of the session score added to a turn's own relevance.
pub(crate) const SESSION_WEIGHT: f64 = 0.5;

/// Session scores in [0, 1] by episode id. `episode_of` maps a row to its
/// episode, `relevance` holds the candidates' fused relevance, and
/// `term_rows` the query terms' idf with the rows holding each.
pub(crate) fn session_scores(
    episode_of: impl Fn(i64) -> Option<i64>,
    relevance: &HashMap<i64, f64>,
    term_rows: &[(f64, Vec<i64>)],
) -> HashMap<i64, f64> {
    let mut best: HashMap<i64, f64> = HashMap::new();
    for (&id, &r) in relevance {
        if let Some(e) = episode_of(id) {
            let slot = best.entry(e).or_default();
            *slot = slot.max(r);
        }
    }
    let mut coverage: HashMap<i64, f64> = HashMap::new();
    for (idf, rows) in term_rows {
        let sessions: HashSet<i64> = rows.iter().filter_map(|&id| episode_of(id)).collect();
        for e in sessions {
            *coverage.entry(e).or_default() += idf;
        }
    }
    let max_of = |m: &HashMap<i64, f64>| m.values().copied().fold(0.0, f64::max);
    let (best_max, coverage_max) = (max_of(&best), max_of(&coverage));
    let norm = |x: f64, max: f64| if max > 0.0 { x / max } else { 0.0 };
    best.keys()
        .chain(coverage.keys())
        .copied()
        .collect::<HashSet<i64>>()
        .into_iter()
        .map(|e| {
            let b = norm(best.get(&e).copied().unwrap_or(0.0), best_max);
            let c = norm(coverage.get(&e).copied().unwrap_or(0.0), coverage_max);
            (e, 0.5 * b + 0.5 * c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_covering_the_question_beats_one_strong_turn_elsewhere() {
        // Rows 1–3 are session 1, rows 10–11 session 10.
        let episode = |id: i64| Some(if id < 10 { 1 } else { 10 });
        let relevance: HashMap<i64, f64> =
            [(1, 0.5), (2, 0.5), (3, 0.1), (10, 0.6), (11, 0.0)].into();
        // Three query terms: session 1 holds all of them (over two turns),
        // session 10 only one.
        let terms = vec![(1.0, vec![1, 10]), (2.0, vec![2]), (2.0, vec![3])];
        let s = session_scores(episode, &relevance, &terms);
        assert!(
            (s[&10] - (0.5 * 1.0 + 0.5 * 1.0 / 5.0)).abs() < 1e-12,
            "{s:?}"
        );
        assert!((s[&1] - (0.5 * 0.5 / 0.6 + 0.5)).abs() < 1e-12, "{s:?}");
        assert!(s[&1] > s[&10]);
    }

    #[test]
    fn no_evidence_scores_nothing() {
        let s = session_scores(|_| None, &HashMap::new(), &[]);
        assert!(s.is_empty());
        let s = session_scores(Some, &[(4, 0.0)].into(), &[]);
        assert!(s[&4].abs() < 1e-12, "{s:?}");
    }
}
