//! Ranking a search over the mirror (runs inside the actor, no I/O).
//!
//! The caller supplies the candidates: cosines from the exact scan
//! ([`exact_cosines`]) or the ANN index, and the BM25 hits (`bm25.rs`). This module
//! turns them into the ranked, gated, diversified result list; the rules are
//! in `rank.rs`.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};

use super::mirror::{EpisodicMirror, MirrorEpisode};
use super::rank::{
    decay, decayed_score, fuse, importance_factor, min_max, mmr, passes_gate, recency_prior,
    same_episode, with_episode_context, word_set, MMR_MAX_POOL,
};
use super::types::{EpisodicHit, EpisodicQuery, SearchMode};
use crate::embedder::calibration::Thresholds;
use crate::embedder::vector::cosine;

/// Inputs besides the mirror.
pub(super) struct Inputs<'a> {
    /// The query.
    pub query: &'a EpisodicQuery,
    /// The query vector and the space signature, when it embedded.
    pub vector: Option<(&'a [f32], &'a str)>,
    /// Vector candidates (id, cosine), each a row of the query's space.
    pub cosines: &'a [(i64, f32)],
    /// BM25 ranking (id, score), best first.
    pub keyword: &'a [(i64, f64)],
    /// "Now" for decay.
    pub now: DateTime<Utc>,
    /// The relevance gate's thresholds on the model's scale.
    pub thresholds: Thresholds,
}

/// A ranked candidate: (id, score, raw cosine when compared).
type Candidate = (i64, f64, Option<f32>);

fn days_between(now: DateTime<Utc>, then: DateTime<Utc>) -> f64 {
    (now - then).num_milliseconds() as f64 / 86_400_000.0
}

fn chars(row: &MirrorEpisode) -> usize {
    row.entry.text.chars().count()
}

/// The cosine of `row` to the query, when it has a vector of that space.
fn row_cosine(row: &MirrorEpisode, query: &[f32], signature: &str) -> Option<f32> {
    match &row.vector {
        Some((s, v)) if s == signature => Some(cosine(query, v)),
        _ => None,
    }
}

/// The exact scan: the cosine of every active row in the query's space.
pub(super) fn exact_cosines(
    mirror: &EpisodicMirror,
    query: &[f32],
    signature: &str,
) -> Vec<(i64, f32)> {
    mirror
        .rows()
        .filter_map(|row| Some((row.entry.id, row_cosine(row, query, signature)?)))
        .collect()
}

/// The graph's candidates with their exact cosine from the mirror's f32
/// vectors (the graph stores f16); ids the mirror no longer has are dropped.
pub(super) fn rescore(
    mirror: &EpisodicMirror,
    query: &[f32],
    signature: &str,
    candidates: &[(i64, f32)],
) -> Vec<(i64, f32)> {
    candidates
        .iter()
        .filter_map(|&(id, _)| Some((id, row_cosine(mirror.get(id)?, query, signature)?)))
        .collect()
}

fn best_first(mut ranked: Vec<Candidate>) -> Vec<Candidate> {
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    ranked
}

/// The reference ranking: cosine × importance × decay, gated first.
fn reference_ranking(mirror: &EpisodicMirror, input: &Inputs<'_>) -> Vec<Candidate> {
    let gate = input.query.relevance_filter;
    best_first(
        input
            .cosines
            .iter()
            .filter_map(|&(id, cos)| {
                let row = mirror.get(id)?;
                if gate && !passes_gate(cos, chars(row), &input.thresholds) {
                    return None;
                }
                let days = days_between(input.now, row.created);
                Some((
                    id,
                    decayed_score(cos, row.entry.importance, days),
                    Some(cos),
                ))
            })
            .collect(),
    )
}

/// The hybrid ranking: fused relevance, episode context, importance and
/// the bounded recency prior.
fn hybrid_ranking(mirror: &EpisodicMirror, input: &Inputs<'_>) -> Vec<Candidate> {
    let gate = input.query.relevance_filter;
    let mut cosines: HashMap<i64, f32> = input.cosines.iter().copied().collect();
    if let Some((query, signature)) = input.vector {
        // Keyword hits the vector candidates missed still get their cosine.
        for &(id, _) in input.keyword {
            if let Some(c) = mirror
                .get(id)
                .and_then(|row| row_cosine(row, query, signature))
            {
                cosines.entry(id).or_insert(c);
            }
        }
    }
    let keyword: HashMap<i64, f64> = input.keyword.iter().copied().collect();
    // BM25 is ≥ 0 and most rows score 0, so max-normalizing is min-max.
    let keyword_max = keyword.values().copied().fold(0.0, f64::max);
    let cosine_norm = min_max(cosines.values().map(|&c| f64::from(c)));
    let has_vector = input.vector.is_some();

    let ids: BTreeSet<i64> = cosines.keys().chain(keyword.keys()).copied().collect();
    let relevance: HashMap<i64, f64> = ids
        .into_iter()
        .filter_map(|id| {
            let row = mirror.get(id)?;
            let cos = cosines.get(&id).copied();
            // The gate judges cosines only (spec: the threshold is on the
            // raw vector score). A candidate without one — no model, a
            // cooling-down model, a row whose embedding is deferred — came
            // from the keyword ranking and is served on that evidence.
            if gate && cos.is_some_and(|c| !passes_gate(c, chars(row), &input.thresholds)) {
                return None;
            }
            let k = match keyword.get(&id) {
                Some(s) if keyword_max > 0.0 => s / keyword_max,
                _ => 0.0,
            };
            let v = has_vector.then(|| cos.map_or(0.0, |c| cosine_norm(f64::from(c))));
            Some((id, fuse(k, v)))
        })
        .collect();

    best_first(
        relevance
            .iter()
            .filter_map(|(&id, &own)| {
                let row = mirror.get(id)?;
                let neighbours: Vec<f64> = mirror
                    .neighbours(id)
                    .into_iter()
                    .flatten()
                    .filter(|n| {
                        same_episode((n.created - row.created).num_seconds() as f64 / 3600.0)
                    })
                    .filter_map(|n| relevance.get(&n.entry.id).copied())
                    .collect();
                let days = days_between(input.now, row.created);
                let score = with_episode_context(own, &neighbours)
                    * importance_factor(row.entry.importance)
                    * recency_prior(days);
                Some((id, score, cosines.get(&id).copied()))
            })
            .collect(),
    )
}

/// Ranks, gates and diversifies. Without a query vector, vector mode falls
/// back to keyword ranking (the spec's fallback ladder) and hybrid mode
/// fuses the keyword term alone.
pub(super) fn rank(mirror: &EpisodicMirror, input: Inputs<'_>) -> Vec<EpisodicHit> {
    let q = input.query;
    let mode = match q.mode {
        SearchMode::Vector if input.vector.is_none() => SearchMode::Keyword,
        mode => mode,
    };
    let ranked: Vec<Candidate> = match mode {
        SearchMode::Vector => reference_ranking(mirror, &input),
        SearchMode::Keyword => input
            .keyword
            .iter()
            .filter(|(id, _)| mirror.get(*id).is_some())
            .map(|&(id, s)| (id, s, None))
            .collect(),
        SearchMode::Hybrid => hybrid_ranking(mirror, &input),
    };
    let mut pool = ranked;
    pool.truncate(MMR_MAX_POOL);
    let order: Vec<usize> = if q.mmr {
        // Reference scores are on the spec's scale; hybrid and BM25 scores
        // are not, so they are max-normalized before mixing with Jaccard.
        let max = pool.iter().map(|r| r.1).fold(0.0, f64::max);
        let scale = if mode == SearchMode::Vector || max <= 0.0 {
            1.0
        } else {
            max
        };
        let relevance: Vec<f64> = pool.iter().map(|r| r.1 / scale).collect();
        let words = |i: usize| {
            let row = mirror.get(pool[i].0);
            row.map(|r| word_set(&r.entry.text)).unwrap_or_default()
        };
        mmr(&relevance, words, q.limit)
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
                passed_gate: cos.is_none_or(|c| passes_gate(c, chars(row), &input.thresholds)),
            })
        })
        .collect()
}
