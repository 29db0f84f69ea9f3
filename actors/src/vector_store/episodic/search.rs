//! Ranking a search over the mirror (runs inside the actor, no I/O).

use chrono::{DateTime, Utc};

use super::mirror::EpisodicMirror;
use super::{EpisodicHit, EpisodicQuery, SearchMode};
use crate::embedder::vector::cosine;
use crate::vector_store::episodic_rank::{
    decay, decayed_score, mmr, passes_gate, rrf, word_set, MMR_MAX_POOL,
};

/// Inputs besides the mirror.
pub struct Inputs<'a> {
    /// The query.
    pub query: &'a EpisodicQuery,
    /// The query vector and the space signature, when it embedded.
    pub vector: Option<(&'a [f32], &'a str)>,
    /// BM25 ranking (id, score), best first.
    pub keyword: &'a [(i64, f64)],
    /// "Now" for decay.
    pub now: DateTime<Utc>,
}

fn days_between(now: DateTime<Utc>, then: DateTime<Utc>) -> f64 {
    (now - then).num_milliseconds() as f64 / 86_400_000.0
}

/// Ranks, gates and diversifies. Without a query vector every mode falls
/// back to keyword ranking (the spec's fallback ladder).
pub fn rank(mirror: &EpisodicMirror, input: Inputs<'_>) -> Vec<EpisodicHit> {
    let q = input.query;
    let mode = if input.vector.is_none() {
        SearchMode::Keyword
    } else {
        q.mode
    };
    // (id, score, cosine) best first, gate applied first where requested.
    let vector_ranked = |gate: bool| -> Vec<(i64, f64, Option<f32>)> {
        let Some((qv, sig)) = input.vector else {
            return Vec::new();
        };
        let mut scored: Vec<(i64, f64, Option<f32>)> = mirror
            .rows()
            .filter_map(|row| {
                let (s, v) = row.vector.as_ref()?;
                if s != sig {
                    return None;
                }
                let cos = cosine(qv, v);
                if gate && !passes_gate(cos, row.entry.text.chars().count()) {
                    return None;
                }
                let days = days_between(input.now, row.created);
                Some((
                    row.entry.id,
                    decayed_score(cos, row.entry.importance, days),
                    Some(cos),
                ))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        scored
    };
    let ranked: Vec<(i64, f64, Option<f32>)> = match mode {
        SearchMode::Vector => vector_ranked(q.relevance_filter),
        SearchMode::Keyword => input.keyword.iter().map(|&(id, s)| (id, s, None)).collect(),
        SearchMode::Hybrid => {
            let vectors = vector_ranked(q.relevance_filter);
            let cosines: std::collections::HashMap<i64, Option<f32>> =
                vectors.iter().map(|&(id, _, c)| (id, c)).collect();
            let by_vector: Vec<i64> = vectors.iter().map(|r| r.0).collect();
            let by_keyword: Vec<i64> = input
                .keyword
                .iter()
                .map(|r| r.0)
                // With the gate on, keyword hits must pass it too.
                .filter(|id| !q.relevance_filter || cosines.contains_key(id))
                .collect();
            rrf(&[by_vector, by_keyword])
                .into_iter()
                .map(|(id, s)| {
                    let cos = cosines.get(&id).copied().flatten().or_else(|| {
                        let (qv, sig) = input.vector?;
                        match &mirror.get(id)?.vector {
                            Some((s, v)) if s == sig => Some(cosine(qv, v)),
                            _ => None,
                        }
                    });
                    (id, s, cos)
                })
                .collect()
        }
    };
    let mut pool: Vec<(i64, f64, Option<f32>)> = ranked
        .into_iter()
        .filter(|(id, _, _)| mirror.get(*id).is_some())
        .collect();
    pool.truncate(MMR_MAX_POOL);
    let order: Vec<usize> = if q.mmr {
        // Vector scores are on the spec's scale; fused and BM25 scores are
        // not, so they are normalized to [0, 1] before mixing with Jaccard.
        let max = pool.iter().map(|r| r.1).fold(0.0, f64::max);
        let scale = if mode == SearchMode::Vector || max <= 0.0 {
            1.0
        } else {
            max
        };
        let candidates: Vec<(f64, _)> = pool
            .iter()
            .filter_map(|(id, s, _)| Some((s / scale, word_set(&mirror.get(*id)?.entry.text))))
            .collect();
        mmr(&candidates, q.limit)
    } else {
        (0..pool.len().min(q.limit)).collect()
    };
    order
        .into_iter()
        .filter_map(|i| {
            let (id, score, cos) = pool[i];
            let row = mirror.get(id)?;
            Some(EpisodicHit {
                entry: row.entry.clone(),
                score,
                cosine: cos,
                decay: decay(days_between(input.now, row.created)),
                passed_gate: cos.is_none_or(|c| passes_gate(c, row.entry.text.chars().count())),
            })
        })
        .collect()
}
