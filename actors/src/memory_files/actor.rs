//! The `MemoryFiles` actor: the memory directory, the FTS index (moved into
//! each running index operation and back, so no lock guards it), and the
//! start-up configuration. The protocol is in `messages.rs`.

use std::path::PathBuf;

use actix::prelude::*;
use std::future::Future;
use std::pin::Pin;

use super::error::MemoryFilesError;
use super::files::MemoryDir;
use super::index::FtsIndex;
use crate::clock::SharedClock;

/// How to start the actor.
#[derive(Clone)]
pub struct MemoryFilesConfig {
    /// `workspace/memory` under the data home.
    pub memory_dir: PathBuf,
    /// `memory_index.db` under the data home.
    pub index_path: PathBuf,
    /// Time source for dates, timestamps and the history cache.
    pub clock: SharedClock,
    /// Rebuild the whole index when the actor starts (the daemon: yes, per
    /// the spec; a one-shot CLI search: only if the index is new or was
    /// damaged, so it never rewrites the running daemon's index).
    pub rebuild_on_start: bool,
}

/// The actor. Start it with `MemoryFilesHandle::start`.
pub(crate) struct MemoryFiles {
    pub(super) dir: MemoryDir,
    pub(super) index: Option<FtsIndex>,
    pub(super) rebuild_on_start: bool,
    pub(super) closed: bool,
}

type IndexOp<T> = Pin<Box<dyn Future<Output = (FtsIndex, Result<T, MemoryFilesError>)>>>;

impl MemoryFiles {
    pub(super) fn new(config: MemoryFilesConfig) -> Self {
        Self {
            dir: MemoryDir::new(config.memory_dir, config.clock),
            index: Some(FtsIndex::new(config.index_path)),
            rebuild_on_start: config.rebuild_on_start,
            closed: false,
        }
    }

    pub(super) fn fail<T: 'static>(
        e: MemoryFilesError,
    ) -> AtomicResponse<Self, Result<T, MemoryFilesError>> {
        AtomicResponse::new(Box::pin(fut::ready(Err(e))))
    }

    /// Runs `op` with the index moved into it, and puts the index back.
    pub(super) fn with_index<T: 'static>(
        &mut self,
        op: impl FnOnce(FtsIndex) -> IndexOp<T>,
    ) -> AtomicResponse<Self, Result<T, MemoryFilesError>> {
        if self.closed {
            return Self::fail(MemoryFilesError::Unavailable(
                "memory files are closed".into(),
            ));
        }
        let Some(index) = self.index.take() else {
            return Self::fail(MemoryFilesError::Unavailable("the index is busy".into()));
        };
        AtomicResponse::new(Box::pin(op(index).into_actor(self).map(
            |(index, res), act, _| {
                act.index = Some(index);
                res
            },
        )))
    }

    /// Opens the index (recreating a damaged one) and rebuilds it when asked
    /// to or when it starts out empty.
    pub(super) fn open_index(&mut self, ctx: &mut Context<Self>) {
        if let Err(e) = self.dir.ensure() {
            tracing::error!(error = %e, "cannot create the memory directory");
        }
        let Some(mut index) = self.index.take() else {
            return;
        };
        let always = self.rebuild_on_start;
        let root = self.dir.root().to_path_buf();
        ctx.wait(
            async move {
                let res = match index.open().await {
                    Ok(fresh) if fresh || always => {
                        let docs = super::docs::collect_documents(&root);
                        index.rebuild(&docs).await.map(Some)
                    }
                    Ok(_) => Ok(None),
                    Err(e) => Err(e),
                };
                (index, res)
            }
            .into_actor(self)
            .map(|(index, res), act, _| {
                match res {
                    Ok(Some(sections)) => tracing::debug!(sections, "memory index rebuilt"),
                    Ok(None) => {}
                    Err(e) => {
                        tracing::error!(error = %e, "memory index unavailable; search retries on use")
                    }
                }
                act.index = Some(index);
            }),
        );
    }
}

impl Actor for MemoryFiles {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.open_index(ctx);
    }
}

impl Supervised for MemoryFiles {
    fn restarting(&mut self, _: &mut Self::Context) {
        tracing::warn!("MemoryFiles restarting");
        self.dir.invalidate_history_cache();
    }
}
