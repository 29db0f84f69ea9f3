//! The entity graph for multi-hop questions (issue 37), after HippoRAG
//! (Gutiérrez et al., 2024): fragments linked through the entities they
//! share, and relevance spread over it by personalised PageRank.
//!
//! ## Why
//! "Where does Anna's sister work?" is answered by two fragments: "Anna:
//! my sister Beatrice …" and "Beatrice started at Novartis in Basel". The
//! second shares no word with the question, so neither BM25 nor a
//! sentence embedding finds it; it shares an entity (Beatrice) with a
//! fragment that does match. Spreading the matched fragments' relevance
//! through their entities reaches it.
//!
//! ## What an entity is
//! Deterministic, no model: capitalized words and runs of them that do not
//! open a sentence ("Beatrice", "New York", "LGBTQ"), folded like names,
//! minus a list of capitalized function words ("I", "Thanks", "Hey");
//! the speaker prefix is not part of the text scanned. An entity found in
//! more than [`MAX_ENTITY_SHARE`] of the rows is a hub (a speaker's own
//! name, "Mom") and carries no spread.
//!
//! ## Where it lives
//! In the mirror, beside the BM25 postings and fed by the same change
//! stream: a tombstone, a merge (tombstone + update) or an eviction takes
//! the row's edges out with the row, and a restart rebuilds it from
//! memory.db's active rows. Extraction is deterministic and cheap, so the
//! graph is derived state like the postings (see `bm25.rs`, "Why not
//! FTS5"); a stored copy could only fall out of step with its rows.

use std::collections::{HashMap, HashSet};

use super::names::entities;

/// Weight of the spread relevance added to a fragment's score.
pub(crate) const GRAPH_WEIGHT: f64 = 0.3;
/// Fragments whose relevance seeds the walk (best first).
pub(crate) const SEED_ROWS: usize = 5;
/// Restart probability's complement: the share of mass that walks on.
const DAMPING: f64 = 0.5;
/// Power-iteration steps: three row-to-row hops reach a bridge's
/// bridge; at damping 0.5 what lies further holds under 1/16 of the mass.
const ITERATIONS: usize = 3;
/// Mass below this (of a total of 1) is not propagated: it could only
/// reach rows with less, and at 10,000 rows spreading it was most of a
/// search's time.
const MIN_MASS: f64 = 1e-3;
/// An entity in more than this share of the rows is a hub.
pub(crate) const MAX_ENTITY_SHARE: f64 = 0.05;
/// An entity seen in fewer rows than this is never a hub (small stores).
const MIN_HUB_ROWS: usize = 20;

/// Rows ↔ entities, kept by the mirror.
#[derive(Debug, Default)]
pub(crate) struct EntityGraph {
    rows_of: HashMap<String, HashSet<i64>>,
    entities_of: HashMap<i64, Vec<String>>,
}

impl EntityGraph {
    /// Links row `id` to the entities of `text` (replacing its old links).
    pub(crate) fn upsert(&mut self, id: i64, text: &str) {
        self.remove(id);
        let found = entities(text);
        for e in &found {
            self.rows_of.entry(e.clone()).or_default().insert(id);
        }
        if !found.is_empty() {
            self.entities_of.insert(id, found);
        }
    }

    /// Unlinks row `id` (tombstoned, merged away, evicted).
    pub(crate) fn remove(&mut self, id: i64) {
        for e in self.entities_of.remove(&id).unwrap_or_default() {
            if let Some(rows) = self.rows_of.get_mut(&e) {
                rows.remove(&id);
                if rows.is_empty() {
                    self.rows_of.remove(&e);
                }
            }
        }
    }

    /// The rows linked to `entity`.
    #[cfg(test)]
    pub(crate) fn rows(&self, entity: &str) -> Option<&HashSet<i64>> {
        self.rows_of.get(entity)
    }

    /// Personalised PageRank from `seeds` (row id, weight) over the
    /// row–entity graph, `total_rows` active rows (for the hub rule).
    /// Returns each reached row's share of the walk's mass, max-normalized
    /// to [0, 1], seeds included.
    pub(crate) fn spread(&self, seeds: &[(i64, f64)], total_rows: usize) -> HashMap<i64, f64> {
        let hub = (total_rows as f64 * MAX_ENTITY_SHARE).max(MIN_HUB_ROWS as f64);
        let seed_sum: f64 = seeds.iter().map(|s| s.1.max(0.0)).sum();
        if seed_sum <= 0.0 {
            return HashMap::new();
        }
        let restart: HashMap<i64, f64> = seeds
            .iter()
            .map(|&(id, w)| (id, w.max(0.0) / seed_sum))
            .collect();
        let links = |id: i64| -> Vec<&String> {
            self.entities_of
                .get(&id)
                .map(|es| {
                    es.iter()
                        .filter(|e| {
                            self.rows_of
                                .get(*e)
                                .is_some_and(|r| (r.len() as f64) <= hub)
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut mass = restart.clone();
        for _ in 0..ITERATIONS {
            let mut next: HashMap<i64, f64> = restart
                .iter()
                .map(|(&id, &w)| (id, (1.0 - DAMPING) * w))
                .collect();
            for (&id, &m) in &mass {
                if m < MIN_MASS {
                    *next.entry(id).or_default() += DAMPING * m;
                    continue;
                }
                let out = links(id);
                if out.is_empty() {
                    // A dead end returns its mass to where the walk started.
                    *next.entry(id).or_default() += DAMPING * m;
                    continue;
                }
                let share = DAMPING * m / out.len() as f64;
                for e in out {
                    let Some(rows) = self.rows_of.get(e) else {
                        continue;
                    };
                    let each = share / rows.len() as f64;
                    for &r in rows {
                        *next.entry(r).or_default() += each;
                    }
                }
            }
            mass = next;
        }
        let max = mass.values().copied().fold(0.0, f64::max);
        if max > 0.0 {
            mass.values_mut().for_each(|m| *m /= max);
        }
        mass
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_reaches_a_bridge_that_shares_no_query_word() {
        let mut g = EntityGraph::default();
        g.upsert(1, "Anna: my younger sister is called Beatrice.");
        g.upsert(2, "Tom: Yesterday Beatrice started a job at Novartis.");
        g.upsert(3, "Tom: The weather was nice.");
        let spread = g.spread(&[(1, 1.0)], 3);
        assert!(spread.get(&2).copied().unwrap_or(0.0) > 0.0, "{spread:?}");
        assert!(!spread.contains_key(&3));
        assert!(
            (spread[&1] - 1.0).abs() < 1e-12,
            "the seed keeps the most mass: {spread:?}"
        );
    }

    #[test]
    fn updates_and_tombstones_move_the_edges() {
        let mut g = EntityGraph::default();
        g.upsert(1, "We met Beatrice in Basel");
        g.upsert(2, "Lunch with Beatrice");
        assert_eq!(g.rows("beatrice").map(|r| r.len()), Some(2));
        // A merge rewrites row 1 and tombstones row 2.
        g.upsert(1, "We met Beatrice in Zurich");
        g.remove(2);
        assert_eq!(g.rows("beatrice").map(|r| r.len()), Some(1));
        assert!(g.rows("basel").is_none());
        assert!(g.rows("zurich").is_some());
        g.remove(1);
        assert!(g.rows_of.is_empty() && g.entities_of.is_empty());
        assert!(g.spread(&[(1, 1.0)], 0).contains_key(&1));
        assert!(g.spread(&[], 0).is_empty());
    }

    #[test]
    fn hubs_carry_no_spread() {
        let mut g = EntityGraph::default();
        for id in 0..100 {
            g.upsert(id, &format!("We talked about Hub and thing {id}"));
        }
        g.upsert(100, "We talked about Rare");
        g.upsert(101, "Then Rare again");
        // "Hub" is in 100 of 102 rows: the walk from row 0 goes nowhere.
        let s = g.spread(&[(0, 1.0)], 102);
        assert_eq!(s.len(), 1, "{s:?}");
        let s = g.spread(&[(100, 1.0)], 102);
        assert!(s.contains_key(&101));
    }
}
