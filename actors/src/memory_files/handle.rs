//! [`MemoryFilesHandle`]: the only way the rest of kirocrew talks to the
//! `MemoryFiles` actor. Cloneable, `Send`, free of actix types.

use std::path::{Path, PathBuf};

use actix::prelude::*;

use super::actor::{MemoryFiles, MemoryFilesConfig};
use super::context::{ContextCaps, MemoryContext};
use super::error::MemoryFilesError;
use super::files::{AppendedEntry, Layer, PruneReport};
use super::index::FileHit;
use super::messages::*;
use crate::ask::ask;

/// A cloneable reference to the running `MemoryFiles` actor.
#[derive(Clone)]
pub struct MemoryFilesHandle {
    addr: Addr<MemoryFiles>,
    arbiter: ArbiterHandle,
    memory_dir: PathBuf,
}

impl std::fmt::Debug for MemoryFilesHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryFilesHandle")
            .field("memory_dir", &self.memory_dir)
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl MemoryFilesHandle {
    /// Starts the supervised actor on its own arbiter thread. Returns at
    /// once: the index opens (and is rebuilt) in the background, and
    /// messages sent meanwhile wait for it. Must run inside an actix `System`.
    pub fn start(config: MemoryFilesConfig) -> Self {
        let arbiter = Arbiter::new().handle();
        let memory_dir = config.memory_dir.clone();
        let addr = Supervisor::start_in_arbiter(&arbiter, move |_| MemoryFiles::new(config));
        Self {
            addr,
            arbiter,
            memory_dir,
        }
    }

    async fn ask<M, T>(&self, msg: M) -> Result<T, MemoryFilesError>
    where
        M: Message<Result = Result<T, MemoryFilesError>> + Send + 'static,
        T: Send + 'static,
        MemoryFiles: Handler<M>,
    {
        ask(&self.addr, msg).await
    }

    /// The memory directory (`workspace/memory`).
    pub fn memory_dir(&self) -> &Path {
        &self.memory_dir
    }

    /// Appends an entry to today's history file (local date and time).
    pub async fn append_history(&self, text: &str) -> Result<AppendedEntry, MemoryFilesError> {
        self.ask(AppendHistory {
            text: text.to_owned(),
        })
        .await
    }

    /// The decayed history (`days` wide full tier; 14 by default).
    pub async fn read_recent_history(&self, days: u32) -> Result<String, MemoryFilesError> {
        self.ask(ReadRecentHistory { days }).await
    }

    /// Deletes dated history files older than `keep_days`.
    pub async fn prune_history(&self, keep_days: u32) -> Result<PruneReport, MemoryFilesError> {
        self.ask(PruneHistory { keep_days }).await
    }

    /// Replaces preferences.md or projects.md wholesale.
    pub async fn replace_layer(&self, layer: Layer, text: &str) -> Result<(), MemoryFilesError> {
        self.ask(ReplaceLayer {
            layer,
            text: text.to_owned(),
        })
        .await
    }

    /// The text of preferences.md or projects.md.
    pub async fn layer(&self, layer: Layer) -> Result<String, MemoryFilesError> {
        self.ask(GetLayer { layer }).await
    }

    /// Re-indexes every memory file.
    pub async fn rebuild_index(&self) -> Result<IndexReport, MemoryFilesError> {
        self.ask(RebuildIndex).await
    }

    /// Full-text search: file, section and snippet of each hit, best first.
    pub async fn search(&self, query: &str, limit: u32) -> Result<Vec<FileHit>, MemoryFilesError> {
        self.ask(SearchFiles {
            query: query.to_owned(),
            limit,
        })
        .await
    }

    /// Preferences, projects and recent history, cited and capped.
    pub async fn context(&self, caps: ContextCaps) -> Result<MemoryContext, MemoryFilesError> {
        self.ask(GetMemoryContext { caps }).await
    }

    /// Closes the index and stops the actor's thread.
    pub async fn close(&self) -> Result<(), MemoryFilesError> {
        let res = self.ask(CloseMemoryFiles).await;
        self.arbiter.stop();
        res
    }
}
