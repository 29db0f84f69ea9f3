//! # MemoryFiles: the owner of the Markdown memory layers
//!
//! Owns `workspace/memory/` (preferences.md, projects.md, history/) and the
//! full-text index `memory_index.db` beside memory.db. Talked to by the HTTP
//! routes (`src/http/memory_files.rs`), the CLI (`kirocrew memory search
//! --files`), the heartbeat (rebuild every 15 ticks, prune once a day) and
//! later the consolidator and the context builder — always through
//! [`MemoryFilesHandle`].
//!
//! Spec sections: "Memory (`memory.py`)", "Decaying Memory
//! (`read_recent_history`)", "History Pruning".
//!
//! Layout of the module: pure logic in [`history`] (file names, entries,
//! tiers, pruning selection), [`lemma`] (irregular forms, query building)
//! and [`context`] (cited, capped sections); file I/O and the five-second
//! history cache in [`files`]; section splitting in [`docs`]; the SQLite index in [`index`]; the actor's
//! messages in [`messages`].
//!
//! The actor runs on its own arbiter thread: reading up to 181 daily files
//! for a context build is synchronous file I/O, and it must not stall the
//! actors that share the system arbiter. Index operations run as
//! `AtomicResponse`s so they never interleave; the index is moved into the
//! running operation and back, so no lock guards it.

pub mod context;
pub mod docs;
mod error;
pub mod files;
mod handle;
pub mod history;
pub mod index;
pub mod lemma;
mod messages;

use std::path::PathBuf;

use actix::prelude::*;
use std::future::Future;
use std::pin::Pin;

pub use context::{ContextCaps, ContextSection, MemoryContext};
pub use docs::Doc;
pub use error::MemoryFilesError;
pub use files::{AppendedEntry, Layer, MemoryDir, PruneReport};
pub use handle::MemoryFilesHandle;
pub use index::{FileHit, FtsIndex};
pub use messages::*;

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

/// The actor. Start it with [`MemoryFilesHandle::start`].
pub struct MemoryFiles {
    dir: MemoryDir,
    index: Option<FtsIndex>,
    rebuild_on_start: bool,
    closed: bool,
}

type IndexOp<T> = Pin<Box<dyn Future<Output = (FtsIndex, Result<T, MemoryFilesError>)>>>;

impl MemoryFiles {
    fn new(config: MemoryFilesConfig) -> Self {
        Self {
            dir: MemoryDir::new(config.memory_dir, config.clock),
            index: Some(FtsIndex::new(config.index_path)),
            rebuild_on_start: config.rebuild_on_start,
            closed: false,
        }
    }

    fn fail<T: 'static>(e: MemoryFilesError) -> AtomicResponse<Self, Result<T, MemoryFilesError>> {
        AtomicResponse::new(Box::pin(fut::ready(Err(e))))
    }

    /// Runs `op` with the index moved into it, and puts the index back.
    fn with_index<T: 'static>(
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
    fn open_index(&mut self, ctx: &mut Context<Self>) {
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
                        let docs = docs::collect_documents(&root);
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
