//! Episodic messages and their handlers.

use actix::prelude::*;

use super::db;
use super::search::{exact_cosines, rank, rescore, Inputs};
use super::types::{
    content_hash, EpisodicEntry, EpisodicHit, EpisodicQuery, EpisodicWrite, SearchMode,
};
use super::write::{near_duplicate, store, Limits, NearDuplicate};
use crate::clock::format_ts;
use crate::vector_store::actor::VectorStore;
use crate::vector_store::audit::{record_event, NewEvent};
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::space::types::{CommitVector, EmbeddedQuery};

/// Graph candidates fetched per requested result (the MMR pool then has
/// room to diversify), and the least fetched.
const ANN_CANDIDATES_PER_RESULT: usize = 20;
const ANN_MIN_CANDIDATES: usize = 100;

/// Stores a fragment (vector embedded beforehand, if any).
#[derive(Debug, Message)]
#[rtype(result = "Result<i64, VectorStoreError>")]
pub(crate) struct WriteEpisodic {
    /// The fragment.
    pub write: EpisodicWrite,
    /// Its vector, made before the call.
    pub vector: Option<CommitVector>,
}

/// Searches fragments.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<EpisodicHit>, VectorStoreError>")]
pub(crate) struct SearchEpisodic {
    /// Parameters.
    pub query: EpisodicQuery,
    /// The query's embedding, when ready.
    pub embedded: Option<EmbeddedQuery>,
}

/// Whether a fragment with this text (after whitespace folding) was ever
/// stored, active or tombstoned: re-run importers skip what the user or
/// the cap removed.
#[derive(Debug, Message)]
#[rtype(result = "Result<bool, VectorStoreError>")]
pub(crate) struct HasEpisodicText {
    /// The text.
    pub text: String,
}

impl Handler<HasEpisodicText> for VectorStore {
    type Result = ResponseActFuture<Self, Result<bool, VectorStoreError>>;

    fn handle(&mut self, msg: HasEpisodicText, _: &mut Context<Self>) -> Self::Result {
        let hash = content_hash(msg.text.trim());
        self.concurrent(move |pool, _, _| async move { db::any_by_hash(&pool, &hash).await })
    }
}

/// Tombstones one fragment (with a `delete` audit event).
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct DeleteEpisodic {
    /// Row id.
    pub id: i64,
    /// Who deletes it (recorded in the audit event).
    pub source: String,
}

/// Clears a tombstone (undoes a delete, a retirement or a merge), unless an
/// active row already holds the same text or the store is full.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct RestoreEpisodic {
    /// Row id.
    pub id: i64,
    /// Who restores it (recorded in the audit event).
    pub source: String,
}

/// A page of fragments, newest first, with the total.
#[derive(Debug, Message)]
#[rtype(result = "Result<(Vec<EpisodicEntry>, i64), VectorStoreError>")]
pub(crate) struct ListEpisodic {
    /// Rows to skip.
    pub offset: u32,
    /// Page size.
    pub limit: u32,
}

impl Handler<WriteEpisodic> for VectorStore {
    type Result = AtomicResponse<Self, Result<i64, VectorStoreError>>;

    fn handle(&mut self, msg: WriteEpisodic, _: &mut Context<Self>) -> Self::Result {
        let since = self.episodic.seq();
        let max = self.settings.episodic_max;
        let fetch =
            self.concurrent(move |pool, _, _| async move { db::fetch_changed(&pool, since).await });
        AtomicResponse::new(Box::pin(
            fetch
                .then(move |changed, act, _| {
                    let prepared = changed.and_then(|changed| {
                        act.episodic.apply(changed);
                        let signature =
                            msg.vector.as_ref().and_then(|v| v.signature_in(&act.space));
                        // Near-duplicates only count against active rows: the
                        // mirror holds no tombstones, so a deleted twin never
                        // blocks a new memory.
                        let twin = match (&msg.vector, &signature) {
                            (Some(v), Some(sig)) if msg.write.dedup => act
                                .episodic
                                .nearest(&v.vector, sig)
                                .filter(|(_, cos)| *cos > act.thresholds().near_duplicate)
                                .and_then(|(id, _)| act.episodic.get(id)),
                            _ => None,
                        };
                        let now = act.clock.now();
                        let duplicate = twin.map(|old| near_duplicate(&msg.write, old, now));
                        let pool = act.pool()?;
                        Ok((
                            signature,
                            duplicate,
                            pool,
                            act.settings.max_events,
                            act.screening(),
                            format_ts(now),
                        ))
                    });
                    fut::wrap_future::<_, Self>(async move {
                        let (signature, duplicate, pool, max_events, screening, now) = prepared?;
                        let merge = match duplicate {
                            Some(NearDuplicate::Refused(id)) => {
                                return Err(VectorStoreError::DuplicateEpisode { id })
                            }
                            Some(NearDuplicate::Replaces(old)) => Some(old),
                            None => None,
                        };
                        let limits = Limits { max, max_events };
                        let vector = msg.vector.zip(signature);
                        store(&pool, msg.write, vector, merge, limits, &screening, &now).await
                    })
                })
                .map(|res, act, ctx| {
                    act.stop_if_fatal(&res, ctx);
                    res
                }),
        ))
    }
}

impl Handler<SearchEpisodic> for VectorStore {
    type Result = ResponseActFuture<Self, Result<Vec<EpisodicHit>, VectorStoreError>>;

    fn handle(&mut self, mut msg: SearchEpisodic, _: &mut Context<Self>) -> Self::Result {
        msg.query.methods = msg.query.methods.and(self.settings.episodic_methods);
        let since = self.episodic.seq();
        let want_keywords = msg.embedded.is_none() || msg.query.mode != SearchMode::Vector;
        let fetch =
            self.concurrent(move |pool, _, _| async move { db::fetch_changed(&pool, since).await });
        Box::pin(fetch.map(move |res, act, ctx| {
            act.episodic.apply(res?);
            act.episodic.refresh_episodes();
            let keyword = if want_keywords {
                let words = crate::vector_store::keyword::query_words(&msg.query.text);
                act.episodic
                    .keyword_search(&words, super::rank::MMR_MAX_POOL)
            } else {
                Vec::new()
            };
            act.maybe_start_index_build(ctx);
            let now = msg.query.as_of.unwrap_or_else(|| act.clock.now());
            let signature = msg
                .embedded
                .as_ref()
                .and_then(|e| e.signature_in(&act.space));
            let vector = msg
                .embedded
                .as_ref()
                .zip(signature.as_deref())
                .map(|(e, sig)| (e.vector.as_slice(), sig));
            // The graph's top candidates when it serves this space (large
            // stores), else every row's exact cosine.
            let candidates = (msg.query.limit * ANN_CANDIDATES_PER_RESULT)
                .clamp(ANN_MIN_CANDIDATES, super::rank::MMR_MAX_POOL);
            let cosines = vector
                .map(
                    |(v, sig)| match act.episodic.index.search(v, sig, candidates) {
                        Some(found) => rescore(&act.episodic, v, sig, &found),
                        None => exact_cosines(&act.episodic, v, sig),
                    },
                )
                .unwrap_or_default();
            let hits = rank(
                &act.episodic,
                Inputs {
                    query: &msg.query,
                    vector,
                    cosines: &cosines,
                    keyword: &keyword,
                    now,
                    thresholds: act.thresholds(),
                },
            );
            let ids: Vec<i64> = hits.iter().map(|h| h.entry.id).collect();
            if !ids.is_empty() {
                if let Ok(pool) = act.pool() {
                    let stamp = format_ts(act.clock.now());
                    // An independent task, not ctx.spawn: futures inside the
                    // actor are not polled while an atomic write (or close)
                    // holds it, and this one may hold a pool connection.
                    // Tracked, so close waits for it.
                    actix::spawn(act.background.track_future(async move {
                        if let Err(e) = db::touch(&pool, &ids, &stamp).await {
                            tracing::debug!(error = %e, "last_accessed not updated");
                        }
                    }));
                }
            }
            Ok(hits)
        }))
    }
}

impl Handler<RestoreEpisodic> for VectorStore {
    type Result = AtomicResponse<Self, Result<(), VectorStoreError>>;

    fn handle(&mut self, msg: RestoreEpisodic, _: &mut Context<Self>) -> Self::Result {
        self.atomic(move |pool, settings, now| async move {
            let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            let Some((text, hash)) = db::tombstoned(&mut tx, msg.id).await? else {
                return Err(VectorStoreError::EpisodeNotFound(msg.id));
            };
            if let Some(id) = db::active_by_hash(&mut tx, &hash).await? {
                return Err(VectorStoreError::DuplicateEpisode { id });
            }
            let max = settings.episodic_max;
            if db::count_active(&mut tx).await? >= max {
                return Err(VectorStoreError::EpisodicFull { max });
            }
            db::untombstone(&mut tx, msg.id).await?;
            record_event(
                &mut tx,
                NewEvent {
                    event_type: "restore",
                    memory_type: "episodic",
                    key: &msg.id.to_string(),
                    old_value: None,
                    new_value: Some(&text),
                    source: &msg.source,
                },
                &now,
                settings.max_events,
            )
            .await?;
            tx.commit().await?;
            Ok(())
        })
    }
}

impl Handler<DeleteEpisodic> for VectorStore {
    type Result = AtomicResponse<Self, Result<(), VectorStoreError>>;

    fn handle(&mut self, msg: DeleteEpisodic, _: &mut Context<Self>) -> Self::Result {
        self.atomic(move |pool, settings, now| async move {
            let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            let Some(text) = db::tombstone(&mut tx, msg.id).await? else {
                return Err(VectorStoreError::EpisodeNotFound(msg.id));
            };
            record_event(
                &mut tx,
                NewEvent {
                    event_type: "delete",
                    memory_type: "episodic",
                    key: &msg.id.to_string(),
                    old_value: Some(&text),
                    new_value: None,
                    source: &msg.source,
                },
                &now,
                settings.max_events,
            )
            .await?;
            tx.commit().await?;
            Ok(())
        })
    }
}

impl Handler<ListEpisodic> for VectorStore {
    type Result = ResponseActFuture<Self, Result<(Vec<EpisodicEntry>, i64), VectorStoreError>>;

    fn handle(&mut self, msg: ListEpisodic, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(
            move |pool, _, _| async move { db::page(&pool, msg.offset, msg.limit).await },
        )
    }
}

/// Fragments without a vector: (id, text).
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<(i64, String)>, VectorStoreError>")]
pub(crate) struct ListMissingEpisodicVectors {
    /// At most this many.
    pub limit: u32,
}

/// Stores backfilled fragment vectors (row unchanged, generation current).
#[derive(Debug, Message)]
#[rtype(result = "Result<u64, VectorStoreError>")]
pub(crate) struct StoreEpisodicVectors {
    /// (id, text the vector was made from, vector).
    pub rows: Vec<(i64, String, CommitVector)>,
}

impl Handler<ListMissingEpisodicVectors> for VectorStore {
    type Result = ResponseActFuture<Self, Result<Vec<(i64, String)>, VectorStoreError>>;

    fn handle(&mut self, msg: ListMissingEpisodicVectors, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(
            move |pool, _, _| async move { db::missing_vectors(&pool, msg.limit).await },
        )
    }
}

impl Handler<StoreEpisodicVectors> for VectorStore {
    type Result = AtomicResponse<Self, Result<u64, VectorStoreError>>;

    fn handle(&mut self, msg: StoreEpisodicVectors, _: &mut Context<Self>) -> Self::Result {
        let space = self.space.clone();
        self.atomic(move |pool, _, _| async move {
            let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            let mut stored = 0;
            for (id, text, vector) in msg.rows {
                if let Some(sig) = vector.signature_in(&space) {
                    if db::store_vector(&mut tx, id, &text, &vector.vector, &sig).await? {
                        stored += 1;
                    }
                }
            }
            tx.commit().await?;
            Ok(stored)
        })
    }
}
