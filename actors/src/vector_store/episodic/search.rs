//! Ranking a search over the mirror (runs inside the actor, no I/O).
//!
//! The caller supplies the candidates: cosines from the exact scan
//! ([`exact_cosines`]) or the ANN index, and the BM25 hits (`bm25.rs`). This module
//! turns them into the ranked, gated, diversified result list; the rules are
//! in `rank.rs`.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};

use super::graph::GRAPH_WEIGHT;
use super::mirror::{EpisodicMirror, MirrorEpisode};
use super::rank::{
    decay, decayed_score, fuse, importance_factor, min_max, mmr, passes_gate, recency_prior,
    with_episode_context, word_set, MMR_MAX_POOL,
};
use super::sessions::{session_scores, SESSION_WEIGHT};
use super::signals::{episode_windows, graph_spread, speaker_margin, topic_words};
use super::speaker_gate::{boost, is_mismatch, side};
use super::types::{EpisodicHit, EpisodicQuery, ScoreParts, SearchMode};
use crate::embedder::calibration::Thresholds;
use crate::embedder::vector::cosine;
use crate::vector_store::keyword::query_words;

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

/// A ranked candidate.
struct Candidate {
    id: i64,
    score: f64,
    /// The raw cosine, when compared.
    cosine: Option<f32>,
    /// Hybrid mode's score parts.
    parts: Option<ScoreParts>,
}

impl Candidate {
    fn plain(id: i64, score: f64, cosine: Option<f32>) -> Self {
        Self {
            id,
            score,
            cosine,
            parts: None,
        }
    }
}

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
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.id.cmp(&a.id)));
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
                Some(Candidate::plain(
                    id,
                    decayed_score(cos, row.entry.importance, days),
                    Some(cos),
                ))
            })
            .collect(),
    )
}

/// Every candidate's cosine: the vector candidates plus the keyword hits
/// they missed.
fn all_cosines(mirror: &EpisodicMirror, input: &Inputs<'_>) -> HashMap<i64, f32> {
    let mut cosines: HashMap<i64, f32> = input.cosines.iter().copied().collect();
    if let Some((query, signature)) = input.vector {
        for &(id, _) in input.keyword {
            if let Some(c) = mirror
                .get(id)
                .and_then(|row| row_cosine(row, query, signature))
            {
                cosines.entry(id).or_insert(c);
            }
        }
    }
    cosines
}

/// Fused keyword + vector relevance in [0, 1] of every candidate that
/// passes the gate (when the query asks for it).
fn fused_relevance(
    mirror: &EpisodicMirror,
    input: &Inputs<'_>,
    cosines: &HashMap<i64, f32>,
    keyword: &[(i64, f64)],
) -> HashMap<i64, f64> {
    let gate = input.query.relevance_filter;
    let keyword: HashMap<i64, f64> = keyword.iter().copied().collect();
    // BM25 is ≥ 0 and most rows score 0, so max-normalizing is min-max.
    let keyword_max = keyword.values().copied().fold(0.0, f64::max);
    let cosine_norm = min_max(cosines.values().map(|&c| f64::from(c)));
    let has_vector = input.vector.is_some();
    let ids: BTreeSet<i64> = cosines.keys().chain(keyword.keys()).copied().collect();
    ids.into_iter()
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
        .collect()
}

/// The hybrid ranking: fused relevance, episode context, session score,
/// speaker boost, importance and the bounded recency prior; and whether the
/// result is a speaker mismatch.
fn hybrid_ranking(mirror: &EpisodicMirror, input: &Inputs<'_>) -> (Vec<Candidate>, bool) {
    let methods = input.query.methods;
    let cosines = all_cosines(mirror, input);
    let relevance = fused_relevance(mirror, input, &cosines, input.keyword);

    let named = if methods.speakers {
        mirror.speakers().named_in(&input.query.text)
    } else {
        Vec::new()
    };
    let margin = if named.is_empty() {
        None
    } else {
        let topic = topic_words(&input.query.text, &named);
        (!topic.is_empty())
            .then(|| {
                let keyword = mirror.keyword_search(&topic, MMR_MAX_POOL);
                let relevance = fused_relevance(mirror, input, &cosines, &keyword);
                speaker_margin(mirror, relevance, &named)
            })
            .flatten()
    };
    let sessions = if methods.sessions {
        let words = query_words(&input.query.text);
        session_scores(
            |id| mirror.episode_of(id),
            &relevance,
            &mirror.term_rows(&words),
        )
    } else {
        HashMap::new()
    };

    let spread = if methods.graph {
        // A reached row not already a candidate still has to pass the
        // relevance gate when it has a cosine.
        let admit = |id: i64| {
            relevance.contains_key(&id)
                || !input.query.relevance_filter
                || cosines.get(&id).is_none_or(|&c| {
                    mirror
                        .get(id)
                        .is_some_and(|row| passes_gate(c, chars(row), &input.thresholds))
                })
        };
        graph_spread(mirror, &relevance, admit)
    } else {
        HashMap::new()
    };
    // A row the walk reaches is a candidate even when nothing else found
    // it (a bridge sharing no word with the query); it still has to pass
    // the relevance gate when it has a cosine.
    let mut relevance = relevance;
    for &id in spread.keys() {
        relevance.entry(id).or_insert(0.0);
    }

    let ranked = relevance
        .iter()
        .filter_map(|(&id, &own)| {
            let row = mirror.get(id)?;
            let neighbours: Vec<f64> = mirror
                .episode_neighbours(id)
                .filter_map(|n| relevance.get(&n.entry.id).copied())
                .collect();
            let context = with_episode_context(own, &neighbours) - own;
            let session = mirror
                .episode_of(id)
                .and_then(|e| sessions.get(&e))
                .map_or(0.0, |s| SESSION_WEIGHT * s);
            // The boost reads ownership and mentions only: also reading
            // second-person turns as about the listener (as the gate does)
            // cost answerable recall on dev (any@5 0.755 → 0.732).
            let speaker_boost = boost(side(&row.entry.text, None, &named, mirror.speakers()));
            let days = days_between(input.now, row.created);
            let graph = GRAPH_WEIGHT * spread.get(&id).copied().unwrap_or(0.0);
            let score = (own + context + session + graph)
                * speaker_boost
                * importance_factor(row.entry.importance)
                * recency_prior(days);
            Some(Candidate {
                id,
                score,
                cosine: cosines.get(&id).copied(),
                parts: Some(ScoreParts {
                    relevance: own,
                    episode_context: context,
                    session,
                    graph,
                    speaker_boost,
                    speaker_margin: margin,
                }),
            })
        })
        .collect();
    (best_first(ranked), is_mismatch(margin))
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
    let (ranked, mismatch): (Vec<Candidate>, bool) = match mode {
        SearchMode::Vector => (reference_ranking(mirror, &input), false),
        SearchMode::Keyword => (
            input
                .keyword
                .iter()
                .filter(|(id, _)| mirror.get(*id).is_some())
                .map(|&(id, s)| Candidate::plain(id, s, None))
                .collect(),
            false,
        ),
        SearchMode::Hybrid => hybrid_ranking(mirror, &input),
    };
    let mut pool = ranked;
    pool.truncate(MMR_MAX_POOL);
    let order: Vec<usize> = if q.mmr {
        // Reference scores are on the spec's scale; hybrid and BM25 scores
        // are not, so they are max-normalized before mixing with Jaccard.
        let max = pool.iter().map(|r| r.score).fold(0.0, f64::max);
        let scale = if mode == SearchMode::Vector || max <= 0.0 {
            1.0
        } else {
            max
        };
        let relevance: Vec<f64> = pool.iter().map(|r| r.score / scale).collect();
        let words = |i: usize| {
            let row = mirror.get(pool[i].id);
            row.map(|r| word_set(&r.entry.text)).unwrap_or_default()
        };
        mmr(&relevance, words, q.limit)
    } else {
        (0..pool.len().min(q.limit)).collect()
    };
    let windows = if mode == SearchMode::Hybrid && q.methods.neighbours {
        let chosen: Vec<i64> = order.iter().map(|&i| pool[i].id).collect();
        episode_windows(mirror, &chosen)
    } else {
        HashMap::new()
    };
    order
        .into_iter()
        .filter_map(|i| {
            let c = &pool[i];
            let row = mirror.get(c.id)?;
            let relevant = c
                .cosine
                .is_none_or(|cos| passes_gate(cos, chars(row), &input.thresholds));
            Some(EpisodicHit {
                entry: row.entry.clone(),
                score: c.score,
                cosine: c.cosine,
                decay: decay(days_between(input.now, row.created)),
                passed_gate: relevant && !mismatch,
                speaker_mismatch: mismatch,
                parts: c.parts.clone(),
                neighbours: windows.get(&c.id).cloned().unwrap_or_default(),
            })
        })
        .collect()
}
