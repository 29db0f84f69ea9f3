//! `memory_search`'s one ranked list out of three stores. Their scores are
//! on different scales (semantic: 0.6 × cosine + 0.4 × keyword overlap in
//! [0, 1]; episodic: a fused hybrid score with decay; Markdown files: raw
//! BM25, unbounded), so they cannot be compared directly. What *is*
//! comparable is each store's own order: the lists are merged by
//! reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009),
//! `1 / (60 + rank)`, and ties between equal ranks go to the hit that is
//! stronger relative to its own store's best. Every result keeps its
//! store's score parts, so the agent (and an operator) can see why it
//! ranked where it did.

use serde::Serialize;
use serde_json::Value;

/// RRF's damping constant; 60 is the value the paper found robust.
const RRF_K: f64 = 60.0;

/// One hit from one store, in that store's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// `semantic`, `episodic` or `files`.
    pub source: &'static str,
    /// Its identity in that store (key, fragment id, `file#section`).
    pub id: String,
    /// What it says.
    pub text: String,
    /// The store's own score (higher is better).
    pub source_score: f64,
    /// The store's score parts.
    pub score_parts: Value,
}

/// A merged result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranked {
    /// The hit.
    #[serde(flatten)]
    pub candidate: Candidate,
    /// 1-based rank within its own store.
    pub source_rank: usize,
    /// The fused score, `1 / (60 + source_rank)`.
    pub score: f64,
}

/// Merges per-store lists (each best first) into one list of at most
/// `limit`, best first.
pub fn fuse(lists: Vec<Vec<Candidate>>, limit: usize) -> Vec<Ranked> {
    let mut ranked: Vec<(Ranked, f64)> = Vec::new();
    for list in lists {
        let best = list
            .iter()
            .map(|c| c.source_score)
            .fold(f64::NEG_INFINITY, f64::max);
        for (i, candidate) in list.into_iter().enumerate() {
            let relative = if best > 0.0 {
                candidate.source_score / best
            } else {
                0.0
            };
            let source_rank = i + 1;
            ranked.push((
                Ranked {
                    candidate,
                    source_rank,
                    score: 1.0 / (RRF_K + source_rank as f64),
                },
                relative,
            ));
        }
    }
    ranked.sort_by(|(a, ra), (b, rb)| {
        b.score
            .total_cmp(&a.score)
            .then(rb.total_cmp(ra))
            .then_with(|| a.candidate.source.cmp(b.candidate.source))
    });
    ranked.into_iter().take(limit).map(|(r, _)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hit(source: &'static str, id: &str, score: f64) -> Candidate {
        Candidate {
            source,
            id: id.into(),
            text: id.into(),
            source_score: score,
            score_parts: json!({}),
        }
    }

    #[test]
    fn ranks_not_raw_scores_decide_across_stores() {
        // BM25 scores in the tens must not bury the semantic list.
        let semantic = vec![hit("semantic", "s1", 0.9), hit("semantic", "s2", 0.5)];
        let files = vec![hit("files", "f1", 14.0), hit("files", "f2", 13.9)];
        let out = fuse(vec![semantic, files], 10);
        let ids: Vec<&str> = out.iter().map(|r| r.candidate.id.as_str()).collect();
        // Rank 1 of each store first; between them the one closer to its
        // store's best (both are the best: 1.0 each) → source name order.
        assert_eq!(ids, ["f1", "s1", "f2", "s2"]);
        assert_eq!(out[0].source_rank, 1);
        assert!((out[0].score - 1.0 / 61.0).abs() < 1e-12);
    }

    #[test]
    fn equal_ranks_go_to_the_relatively_stronger_hit() {
        let semantic = vec![hit("semantic", "s1", 0.9), hit("semantic", "s2", 0.85)];
        let episodic = vec![hit("episodic", "e1", 0.8), hit("episodic", "e2", 0.2)];
        let out = fuse(vec![semantic, episodic], 10);
        let ids: Vec<&str> = out.iter().map(|r| r.candidate.id.as_str()).collect();
        // s2 is 0.94 of its best, e2 only 0.25 of its own.
        assert_eq!(ids, ["e1", "s1", "s2", "e2"]);
    }

    #[test]
    fn limit_and_empty_lists() {
        assert!(fuse(vec![], 5).is_empty());
        assert!(fuse(vec![vec![], vec![]], 5).is_empty());
        let many: Vec<Candidate> = (0..20)
            .map(|i| hit("episodic", &i.to_string(), 1.0))
            .collect();
        let out = fuse(vec![many], 5);
        assert_eq!(out.len(), 5);
        assert_eq!(out[4].candidate.id, "4");
        // A store whose scores are all zero still ranks by its order.
        let zeros = vec![hit("files", "a", 0.0), hit("files", "b", 0.0)];
        assert_eq!(fuse(vec![zeros], 5)[0].candidate.id, "a");
    }
}
