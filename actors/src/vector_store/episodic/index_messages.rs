//! Actor side of the episodic HNSW index: starting a load/build off the
//! actor thread, installing its result, and saving the index (see
//! `index.rs` for the state machine and the rules).

use actix::prelude::*;

use super::db;
use super::index::{index_path, IndexState};
use crate::ann::{build, AnnError, AnnIndex, IndexMeta};
use crate::vector_store::actor::VectorStore;
use crate::vector_store::error::VectorStoreError;

/// A finished load/build, sent by the task [`VectorStore::start_index_build`]
/// spawned.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct InstallEpisodicIndex {
    /// The space it was built for.
    pub signature: String,
    /// The index and whether it was loaded from disk, or why there is none.
    pub result: Result<(AnnIndex, bool), AnnError>,
}

/// Reports the episodic index state.
#[derive(Debug, Message)]
#[rtype(result = "Result<IndexState, VectorStoreError>")]
pub(crate) struct GetEpisodicIndexState;

impl Handler<GetEpisodicIndexState> for VectorStore {
    type Result = Result<IndexState, VectorStoreError>;

    fn handle(&mut self, _: GetEpisodicIndexState, _: &mut Context<Self>) -> Self::Result {
        Ok(self.episodic.index.state())
    }
}

/// A save's outcome: the index to put back (with its space) and whether
/// the file was written.
type Saved = (Option<(String, AnnIndex)>, bool);

/// Brings the mirror up to date and saves the index beside memory.db (at
/// close, so the next start loads instead of rebuilding). Nothing to do
/// without a ready index.
#[derive(Debug, Message)]
#[rtype(result = "Result<bool, VectorStoreError>")]
pub(crate) struct SaveEpisodicIndex;

impl VectorStore {
    /// Starts loading (or else building) the index for `signature` from the
    /// mirror's vectors, when the mirror has enough of them and no index or
    /// build exists for that space.
    pub(crate) fn maybe_start_index_build(&mut self, ctx: &mut Context<Self>) {
        let Some(signature) = self.space.signature() else {
            return;
        };
        // Runs on every search: count only when no index serves or builds,
        // and copy vectors only when a build starts.
        let mirror = &self.episodic;
        if !mirror
            .index
            .wants_build(&signature, || mirror.vectors_in(&signature).count())
        {
            return;
        }
        let rows: Vec<(u64, Vec<f32>)> = self
            .episodic
            .vectors_in(&signature)
            .filter_map(|(id, v)| Some((u64::try_from(id).ok()?, v.to_vec())))
            .collect();
        let Some(dim) = rows.first().map(|(_, v)| v.len()) else {
            return;
        };
        self.episodic.index.start_build(&signature);
        let path = index_path(&self.db_path);
        let addr = ctx.address();
        let expected = IndexMeta {
            signature: signature.clone(),
            count: rows.len() as u64,
        };
        actix::spawn(async move {
            let result =
                tokio::task::spawn_blocking(move || match AnnIndex::load(&path, &expected) {
                    Ok(Some(index)) => {
                        tracing::info!(rows = index.len(), "episodic index loaded");
                        Ok((index, true))
                    }
                    _ => {
                        let started = std::time::Instant::now();
                        let index = build(dim, rows)?;
                        tracing::info!(
                            rows = index.len(),
                            ms = started.elapsed().as_millis() as u64,
                            "episodic index built"
                        );
                        Ok((index, false))
                    }
                })
                .await
                .unwrap_or_else(|e| Err(AnnError::Meta(format!("index task failed: {e}"))));
            addr.do_send(InstallEpisodicIndex { signature, result });
        });
    }
}

impl Handler<InstallEpisodicIndex> for VectorStore {
    type Result = ();

    fn handle(&mut self, msg: InstallEpisodicIndex, _: &mut Context<Self>) {
        let installed = msg.result.and_then(|(index, loaded)| {
            let live: Vec<(i64, Vec<f32>)> = self
                .episodic
                .vectors_in(&msg.signature)
                .map(|(id, v)| (id, v.to_vec()))
                .collect();
            self.episodic.index.install(
                &msg.signature,
                index,
                loaded,
                live.iter().map(|(id, v)| (*id, v.as_slice())),
            )
        });
        if let Err(e) = installed {
            tracing::warn!(error = %e, "episodic index unavailable; exact scan");
            self.episodic.index.abandon();
        }
    }
}

impl Handler<SaveEpisodicIndex> for VectorStore {
    type Result = AtomicResponse<Self, Result<bool, VectorStoreError>>;

    fn handle(&mut self, _: SaveEpisodicIndex, _: &mut Context<Self>) -> Self::Result {
        let since = self.episodic.seq();
        let path = index_path(&self.db_path);
        let pool = self.pool();
        AtomicResponse::new(Box::pin(
            async move { db::fetch_changed(&pool?, since).await }
                .into_actor(self)
                .then(move |changed, act, _| {
                    let taken = changed.map(|changed| {
                        act.episodic.apply(changed);
                        act.episodic.index.take_for_save()
                    });
                    async move {
                        let Some((index, meta)) = taken? else {
                            return Ok::<Saved, VectorStoreError>((None, false));
                        };
                        let (index, saved) = tokio::task::spawn_blocking(move || {
                            let saved = index.save(&path, &meta);
                            (index, saved.map(|()| meta.signature))
                        })
                        .await
                        .map_err(|e| VectorStoreError::Unavailable(format!("save task: {e}")))?;
                        match saved {
                            Ok(signature) => Ok((Some((signature, index)), true)),
                            Err(e) => {
                                tracing::warn!(error = %e, "episodic index not saved");
                                Ok((None, false))
                            }
                        }
                    }
                    .into_actor(act)
                })
                .map(|res: Result<Saved, VectorStoreError>, act, _| {
                    let (back, saved) = res?;
                    if let Some((signature, index)) = back {
                        act.episodic.index.restore(&signature, index);
                    }
                    Ok(saved)
                }),
        ))
    }
}
