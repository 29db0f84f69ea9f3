//! The episodic mirror: active fragments with their vectors, kept in the
//! actor and refreshed by the change sequence (like the semantic mirror), so
//! a search scans memory instead of decoding every BLOB from SQLite. The
//! keyword postings ([`KeywordIndex`]) ride on the same change stream.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound::{Excluded, Unbounded};

use chrono::{DateTime, Utc};

use super::bm25::KeywordIndex;
use super::graph::EntityGraph;
use super::index::EpisodicIndex;
use super::rank::same_episode_at;
use super::speakers::SpeakerBook;
use super::types::EpisodicEntry;
use crate::embedder::vector::cosine;

/// One changed row as read from memory.db.
#[derive(Debug, Clone)]
pub(crate) struct ChangedEpisode {
    /// The row.
    pub entry: EpisodicEntry,
    /// Parsed `created_at`.
    pub created: DateTime<Utc>,
    /// Change sequence.
    pub seq: i64,
    /// Tombstoned now.
    pub is_deleted: bool,
    /// Vector with its space signature.
    pub vector: Option<(String, Vec<f32>)>,
}

/// A mirrored active row.
#[derive(Debug, Clone)]
pub(crate) struct MirrorEpisode {
    /// The row.
    pub entry: EpisodicEntry,
    /// Parsed `created_at`.
    pub created: DateTime<Utc>,
    /// Change sequence.
    pub seq: i64,
    /// Vector with its space signature.
    pub vector: Option<(String, Vec<f32>)>,
}

/// Active episodic rows.
#[derive(Debug, Default)]
pub(crate) struct EpisodicMirror {
    seq: i64,
    /// By id, which is write order: episode neighbours are adjacent keys.
    rows: BTreeMap<i64, MirrorEpisode>,
    /// The HNSW index over the rows' vectors, fed by [`Self::apply`].
    pub index: EpisodicIndex,
    /// BM25 postings over the rows' text and tags, fed by [`Self::apply`].
    keywords: KeywordIndex,
    /// The speakers owning active rows, fed by [`Self::apply`].
    speakers: SpeakerBook,
    /// Rows linked by shared entities, fed by [`Self::apply`].
    graph: EntityGraph,
    /// Row id → first row id of its episode; rebuilt by
    /// [`Self::refresh_episodes`] after rows changed (`None` = stale).
    episodes: Option<HashMap<i64, i64>>,
}

impl EpisodicMirror {
    /// Highest change sequence applied.
    pub(crate) fn seq(&self) -> i64 {
        self.seq
    }

    /// Forgets everything (the next delta reloads).
    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }

    /// Applies changed rows; older versions never replace newer ones.
    pub(crate) fn apply(&mut self, changed: Vec<ChangedEpisode>) {
        for row in changed {
            self.seq = self.seq.max(row.seq);
            if self
                .rows
                .get(&row.entry.id)
                .is_some_and(|r| r.seq >= row.seq)
            {
                continue;
            }
            let vector = row
                .vector
                .as_ref()
                .filter(|_| !row.is_deleted)
                .map(|(s, v)| (s.as_str(), v.as_slice()));
            self.index.on_row(row.entry.id, vector);
            self.episodes = None;
            if let Some(old) = self.rows.get(&row.entry.id) {
                self.speakers.remove(&old.entry.text);
            }
            if row.is_deleted {
                self.graph.remove(row.entry.id);
                self.keywords.remove(row.entry.id);
                self.rows.remove(&row.entry.id);
            } else {
                self.keywords
                    .upsert(row.entry.id, &row.entry.text, &row.entry.tags);
                self.speakers.add(&row.entry.text);
                self.graph.upsert(row.entry.id, &row.entry.text);
                self.rows.insert(
                    row.entry.id,
                    MirrorEpisode {
                        entry: row.entry,
                        created: row.created,
                        seq: row.seq,
                        vector: row.vector,
                    },
                );
            }
        }
    }

    /// Active rows matching any of the query's `words` by BM25, best
    /// first (at most `limit`).
    pub(crate) fn keyword_search(&self, words: &[String], limit: usize) -> Vec<(i64, f64)> {
        self.keywords.search(words, limit)
    }

    /// Brings the episode map up to date: runs of dialogue turns (rows
    /// with a speaker prefix, in write order) with no silence longer than
    /// the episode gap (`rank::same_episode`). Other rows (notes, facts)
    /// belong to no session: a consolidation or an import writes hundreds
    /// of them in one burst, which is not a conversation.
    pub(crate) fn refresh_episodes(&mut self) {
        if self.episodes.is_some() {
            return;
        }
        let mut map = HashMap::with_capacity(self.rows.len());
        let mut current: Option<(i64, DateTime<Utc>)> = None;
        let turns = self
            .rows
            .iter()
            .filter(|(_, row)| super::names::owner(&row.entry.text).is_some());
        for (&id, row) in turns {
            let start = match current {
                Some((start, last)) if same_episode_at(row.created, last) => start,
                _ => id,
            };
            map.insert(id, start);
            current = Some((start, row.created));
        }
        self.episodes = Some(map);
    }

    /// The episode (its first row's id) of active row `id`; `None` when
    /// the map is stale or the row unknown.
    pub(crate) fn episode_of(&self, id: i64) -> Option<i64> {
        self.episodes.as_ref()?.get(&id).copied()
    }

    /// For each distinct term of the query `words`, its idf and the rows
    /// holding it.
    pub(crate) fn term_rows(&self, words: &[String]) -> Vec<(f64, Vec<i64>)> {
        self.keywords.term_rows(words)
    }

    /// The entity graph over the active rows.
    pub(crate) fn graph(&self) -> &EntityGraph {
        &self.graph
    }

    /// Active rows.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The speakers of the active rows.
    pub(crate) fn speakers(&self) -> &SpeakerBook {
        &self.speakers
    }

    /// An active row.
    pub(crate) fn get(&self, id: i64) -> Option<&MirrorEpisode> {
        self.rows.get(&id)
    }

    /// The active rows written just before and just after `id`, when they
    /// are in its episode (no silence longer than the episode gap).
    pub(crate) fn episode_neighbours(&self, id: i64) -> impl Iterator<Item = &MirrorEpisode> {
        let row = self.rows.get(&id);
        let before = self.rows.range(..id).next_back().map(|(_, r)| r);
        let after = self
            .rows
            .range((Excluded(id), Unbounded))
            .next()
            .map(|(_, r)| r);
        [before, after]
            .into_iter()
            .flatten()
            .filter(move |n| row.is_some_and(|r| same_episode_at(n.created, r.created)))
    }

    /// Active rows with a vector of `signature`, as (id, vector).
    pub(crate) fn vectors_in<'a>(
        &'a self,
        signature: &'a str,
    ) -> impl Iterator<Item = (i64, &'a [f32])> + 'a {
        self.rows.values().filter_map(move |row| match &row.vector {
            Some((s, v)) if s == signature => Some((row.entry.id, v.as_slice())),
            _ => None,
        })
    }

    /// Active rows, in id order.
    pub(crate) fn rows(&self) -> impl Iterator<Item = &MirrorEpisode> {
        self.rows.values()
    }

    /// The most similar active row with a vector of `signature`, if any.
    pub(crate) fn nearest(&self, query: &[f32], signature: &str) -> Option<(i64, f32)> {
        self.rows
            .values()
            .filter_map(|row| match &row.vector {
                Some((sig, v)) if sig == signature => Some((row.entry.id, cosine(query, v))),
                _ => None,
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}
