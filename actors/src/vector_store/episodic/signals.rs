//! The retrieval-v2 signals read off the mirror (issue 37): the speaker
//! gate's margin and whom a turn answers, the entity graph's spread, and
//! each result's episode neighbours. The scoring rules are pure functions
//! in `speaker_gate.rs`, `sessions.rs` and `graph.rs`; `search.rs` fuses
//! what these return into the hybrid score.

use std::collections::{HashMap, HashSet};

use super::graph::SEED_ROWS;
use super::mirror::EpisodicMirror;
use super::names::{name_key, owner};
use super::speaker_gate::{margin, side, Side};
use super::types::EpisodicEntry;
use crate::vector_store::keyword::query_words;

/// The query's topic words: its keyword words without the named
/// speakers' names, so a name does not count as support for its owner.
pub(super) fn topic_words(query: &str, named: &[String]) -> Vec<String> {
    let name_parts: HashSet<&str> = named.iter().flat_map(|k| k.split(' ')).collect();
    query_words(query)
        .into_iter()
        .filter(|w| !name_parts.contains(name_key(w).as_str()))
        .collect()
}

/// The speaker gate's margin (see `speaker_gate.rs`) over the candidates'
/// topic relevance: only each side's best counts, so the walk goes best
/// first and stops once both sides have one.
pub(super) fn speaker_margin(
    mirror: &EpisodicMirror,
    topic_relevance: HashMap<i64, f64>,
    named: &[String],
) -> Option<f64> {
    let book = mirror.speakers();
    let mut ranked: Vec<(i64, f64)> = topic_relevance.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut seen = (false, false);
    margin(ranked.into_iter().map_while(|(id, r)| {
        if seen.0 && seen.1 {
            return None;
        }
        let side = match mirror.get(id) {
            Some(row) => side(
                &row.entry.text,
                listener(mirror, id).as_deref(),
                named,
                book,
            ),
            None => Side::Neutral,
        };
        seen.0 |= side == Side::Named;
        seen.1 |= side == Side::Other;
        Some((side, r))
    }))
}

/// Whom row `id` answers: the speaker of the nearest episode neighbour
/// (before, then after) who is not its own speaker.
pub(super) fn listener(mirror: &EpisodicMirror, id: i64) -> Option<String> {
    let row = mirror.get(id)?;
    let own = owner(&row.entry.text).map(name_key);
    mirror
        .episode_neighbours(id)
        .filter_map(|n| owner(&n.entry.text).map(name_key))
        .find(|k| Some(k) != own.as_ref())
}

/// Relevance spread from the best [`SEED_ROWS`] candidates over the
/// entity graph, for the rows it reaches (seeds excluded: they rank on
/// their own evidence) and `admit` lets in (the relevance gate).
pub(super) fn graph_spread(
    mirror: &EpisodicMirror,
    relevance: &HashMap<i64, f64>,
    admit: impl Fn(i64) -> bool,
) -> HashMap<i64, f64> {
    let mut seeds: Vec<(i64, f64)> = relevance.iter().map(|(&id, &r)| (id, r)).collect();
    seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    seeds.truncate(SEED_ROWS);
    let mut spread = mirror.graph().spread(&seeds, mirror.len());
    spread.retain(|id, _| !seeds.iter().any(|s| s.0 == *id) && admit(*id));
    spread
}

/// Each dialogue turn's episode neighbours (the turns just before and
/// after it, same episode) that are not results themselves; a turn is
/// credited to the best-ranked result it neighbours only.
pub(super) fn episode_windows(
    mirror: &EpisodicMirror,
    chosen: &[i64],
) -> HashMap<i64, Vec<EpisodicEntry>> {
    let mut credited: HashSet<i64> = chosen.iter().copied().collect();
    chosen
        .iter()
        .filter_map(|&id| {
            let row = mirror.get(id)?;
            // Dialogue turns only: a note or fact stands on its own, and
            // the row written next to it may be from another session.
            owner(&row.entry.text)?;
            let window: Vec<EpisodicEntry> = mirror
                .episode_neighbours(id)
                .filter(|n| owner(&n.entry.text).is_some())
                .filter(|n| credited.insert(n.entry.id))
                .map(|n| n.entry.clone())
                .collect();
            Some((id, window))
        })
        .collect()
}
