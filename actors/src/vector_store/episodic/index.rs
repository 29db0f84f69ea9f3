//! The episodic HNSW index as the store uses it (spec: "Episodic Memory →
//! Vector index"): the [`AnnIndex`] plus the state machine around it.
//!
//! - **Who feeds it:** only `EpisodicMirror::apply`. Every row change
//!   (insert, vector backfilled, tombstone, eviction, retirement) reaches the
//!   mirror through the change sequence, so routing it here keeps the index
//!   and the mirror in step without a second bookkeeping path.
//! - **Loading / building:** off the actor thread. When the store first has
//!   [`ANN_MIN_ROWS`] vectors of one space, the actor starts a task that loads
//!   the saved file if its sidecar matches (same space, same count: the
//!   normal restart, no rebuild) or else builds from the mirror's vectors.
//!   Meanwhile searches scan exactly, and tombstones are remembered so the
//!   finished index can drop them at [`EpisodicIndex::install`]; rows added
//!   meanwhile are added then.
//! - **Saving:** at `CloseStore`, beside memory.db, with its sidecar.
//! - **When it is used:** at or above [`ANN_MIN_ROWS`] rows. Below that an
//!   exact scan is faster: `cargo bench --bench ann` measures the graph
//!   overtaking the scan at ~1,500 rows for k = 10 but only at ~3,000 rows
//!   for k = 100, the candidate count a search asks for (at 10,000 rows:
//!   80 µs vs 323 µs). The graph only picks candidates; their cosines are
//!   recomputed exactly from the mirror's f32 vectors.

use std::path::{Path, PathBuf};

use crate::ann::{AnnError, AnnIndex, IndexMeta};

/// Vectors of one space from which search goes through the graph (the
/// measured k = 100 crossover).
pub const ANN_MIN_ROWS: usize = 3_000;

/// `memory.db` → `memory.episodic.usearch` (its sidecar adds `.meta.json`).
pub fn index_path(db_path: &Path) -> PathBuf {
    db_path.with_extension("episodic.usearch")
}

#[derive(Default)]
enum State {
    /// No index: searches scan exactly.
    #[default]
    Absent,
    /// A load/build task runs for `signature`; tombstoned ids are kept for
    /// the finished index.
    Building {
        signature: String,
        removed: Vec<i64>,
    },
    /// Serving; `loaded` when it came from the saved file (not rebuilt).
    Ready {
        signature: String,
        index: AnnIndex,
        loaded: bool,
    },
}

/// What [`EpisodicIndex::state`] reports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IndexState {
    /// `absent`, `building` or `ready`.
    pub state: &'static str,
    /// Vectors in the ready index.
    pub rows: usize,
    /// Whether the ready index was loaded from disk rather than rebuilt.
    pub loaded: bool,
}

/// The index and its state.
#[derive(Default)]
pub(crate) struct EpisodicIndex {
    state: State,
}

impl std::fmt::Debug for EpisodicIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Absent => "absent".to_owned(),
            State::Building { signature, .. } => format!("building {signature}"),
            State::Ready {
                signature, index, ..
            } => format!("ready {signature} ({})", index.len()),
        };
        f.debug_struct("EpisodicIndex")
            .field("state", &state)
            .finish()
    }
}

fn key(id: i64) -> Option<u64> {
    u64::try_from(id).ok()
}

impl EpisodicIndex {
    /// Follows one row change: a live vector of the index's space is added
    /// (unless already there: a loaded index is not rebuilt row by row);
    /// anything else (tombstone, vector cleared, another space) is removed.
    pub(crate) fn on_row(&mut self, id: i64, vector: Option<(&str, &[f32])>) {
        match &mut self.state {
            State::Absent => {}
            State::Building { signature, removed } => {
                if vector.is_none_or(|(s, _)| s != signature) {
                    removed.push(id);
                }
            }
            State::Ready {
                signature, index, ..
            } => {
                let Some(k) = key(id) else { return };
                let outcome = match vector {
                    Some((s, v)) if s == signature => {
                        if index.contains(k) {
                            Ok(())
                        } else {
                            index.add(k, v)
                        }
                    }
                    _ => index.remove(k).map(|_| ()),
                };
                if let Err(e) = outcome {
                    // A graph that missed a change cannot be trusted: drop it
                    // (exact scan) and let the next search rebuild.
                    tracing::warn!(error = %e, "episodic index update failed; falling back to exact scan");
                    self.state = State::Absent;
                }
            }
        }
    }

    /// Whether a load/build should start for `signature`; `rows` (the
    /// number of vectors of that space, O(n) to count) is only asked when
    /// no build runs and no index of that space serves, since this is
    /// checked on every search.
    pub(crate) fn wants_build(&self, signature: &str, rows: impl FnOnce() -> usize) -> bool {
        match &self.state {
            State::Building { .. } => false,
            State::Ready { signature: s, .. } if s == signature => false,
            _ => rows() >= ANN_MIN_ROWS,
        }
    }

    /// Marks a load/build as running for `signature`.
    pub(crate) fn start_build(&mut self, signature: &str) {
        self.state = State::Building {
            signature: signature.to_owned(),
            removed: Vec::new(),
        };
    }

    /// Installs a finished index if it is still wanted, reconciled with the
    /// mirror: ids tombstoned during the build are removed, and `live` rows
    /// (every active vector of the space now) missing from it are added.
    pub(crate) fn install<'a>(
        &mut self,
        signature: &str,
        mut index: AnnIndex,
        loaded: bool,
        live: impl Iterator<Item = (i64, &'a [f32])>,
    ) -> Result<(), AnnError> {
        let State::Building {
            signature: wanted,
            removed,
        } = &self.state
        else {
            return Ok(());
        };
        if wanted != signature {
            return Ok(());
        }
        for id in removed {
            if let Some(k) = key(*id) {
                index.remove(k)?;
            }
        }
        for (id, v) in live {
            if let Some(k) = key(id) {
                if !index.contains(k) {
                    index.add(k, v)?;
                }
            }
        }
        self.state = State::Ready {
            signature: signature.to_owned(),
            index,
            loaded,
        };
        Ok(())
    }

    /// A failed load/build: back to exact scans.
    pub(crate) fn abandon(&mut self) {
        self.state = State::Absent;
    }

    /// The `k` nearest ids with their cosine, when a ready index of
    /// `signature` holds at least [`ANN_MIN_ROWS`] vectors.
    pub(crate) fn search(
        &self,
        query: &[f32],
        signature: &str,
        k: usize,
    ) -> Option<Vec<(i64, f32)>> {
        match &self.state {
            State::Ready {
                signature: s,
                index,
                ..
            } if s == signature && index.len() >= ANN_MIN_ROWS => Some(
                index
                    .search(query, k)
                    .into_iter()
                    .filter_map(|(id, c)| Some((i64::try_from(id).ok()?, c)))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Takes a ready index out for saving (at close), with its metadata.
    pub(crate) fn take_for_save(&mut self) -> Option<(AnnIndex, IndexMeta)> {
        match std::mem::take(&mut self.state) {
            State::Ready {
                signature, index, ..
            } => {
                let meta = IndexMeta {
                    signature,
                    count: index.len() as u64,
                };
                Some((index, meta))
            }
            other => {
                self.state = other;
                None
            }
        }
    }

    /// Puts back an index taken by [`Self::take_for_save`].
    pub(crate) fn restore(&mut self, signature: &str, index: AnnIndex) {
        if matches!(self.state, State::Absent) {
            self.state = State::Ready {
                signature: signature.to_owned(),
                index,
                loaded: false,
            };
        }
    }

    /// The state, for stats and tests.
    pub(crate) fn state(&self) -> IndexState {
        match &self.state {
            State::Absent => IndexState {
                state: "absent",
                rows: 0,
                loaded: false,
            },
            State::Building { .. } => IndexState {
                state: "building",
                rows: 0,
                loaded: false,
            },
            State::Ready { index, loaded, .. } => IndexState {
                state: "ready",
                rows: index.len(),
                loaded: *loaded,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(i: usize) -> Vec<f32> {
        let mut v = vec![0.0f32; 4];
        v[i % 4] = 1.0;
        v
    }

    #[test]
    fn a_build_is_reconciled_with_changes_made_meanwhile() {
        let mut idx = EpisodicIndex::default();
        assert!(idx.wants_build("m/4", || ANN_MIN_ROWS));
        assert!(!idx.wants_build("m/4", || ANN_MIN_ROWS - 1));
        idx.start_build("m/4");
        assert!(
            !idx.wants_build("m/4", || unreachable!("not counted while building")),
            "one build at a time"
        );
        // The snapshot had rows 1..=3; row 2 is tombstoned and row 4 added
        // while the build runs.
        let mut built = AnnIndex::new(4).unwrap();
        for id in 1..=3u64 {
            built.add(id, &unit(id as usize)).unwrap();
        }
        idx.on_row(2, None);
        let live = [(1i64, unit(1)), (3, unit(3)), (4, unit(0))];
        idx.install(
            "m/4",
            built,
            false,
            live.iter().map(|(id, v)| (*id, v.as_slice())),
        )
        .unwrap();
        let state = idx.state();
        assert_eq!((state.state, state.rows, state.loaded), ("ready", 3, false));
        // A vector of another space leaves the index; so does a tombstone.
        idx.on_row(3, Some(("other/4", &unit(3))));
        idx.on_row(4, None);
        assert_eq!(idx.state().rows, 1);
        // Queries of another space never use it (and it is below the
        // size where it would serve at all).
        assert!(idx.search(&unit(1), "other/4", 5).is_none());
        assert!(idx.search(&unit(1), "m/4", 5).is_none());
    }

    #[test]
    fn an_install_for_a_superseded_space_is_dropped() {
        let mut idx = EpisodicIndex::default();
        idx.start_build("old/4");
        idx.start_build("new/4");
        idx.install("old/4", AnnIndex::new(4).unwrap(), true, std::iter::empty())
            .unwrap();
        assert_eq!(idx.state().state, "building");
        idx.abandon();
        assert_eq!(idx.state().state, "absent");
    }
}
