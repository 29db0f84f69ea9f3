//! `MemoryFiles` messages and their handlers.
//!
//! File work is synchronous (the actor has its own arbiter thread, so a
//! slow disk never stalls another actor). Index work is async sqlx inside
//! `AtomicResponse`, so no two index operations interleave. A file write
//! that succeeded is never reported as failed because its incremental index
//! update did not: the update is logged and the next full rebuild (start-up,
//! every 15 heartbeat ticks) catches the index up.

use actix::prelude::*;
use serde::Serialize;

use super::actor::MemoryFiles;
use super::context::{build_context, ContextCaps, MemoryContext};
use super::disk::HISTORY_DIR;
use super::docs::collect_documents;
use super::error::MemoryFilesError;
use super::files::{AppendedEntry, Layer, PruneReport};
use super::history::FULL_DAYS;
use super::index::FileHit;
use super::lemma::match_expression;

/// Longest search query accepted, in characters.
pub(super) const MAX_QUERY_CHARS: usize = 1000;

/// Appends an entry to today's history file.
#[derive(Debug, Message)]
#[rtype(result = "Result<AppendedEntry, MemoryFilesError>")]
pub(crate) struct AppendHistory {
    /// The entry text (1–20,000 characters).
    pub text: String,
}

/// The decayed history string (cached for five seconds).
#[derive(Debug, Message)]
#[rtype(result = "Result<String, MemoryFilesError>")]
pub(crate) struct ReadRecentHistory {
    /// Width of the full-detail tier in days (default 14).
    pub days: u32,
}

/// Deletes dated history files older than `keep_days`.
#[derive(Debug, Message)]
#[rtype(result = "Result<PruneReport, MemoryFilesError>")]
pub(crate) struct PruneHistory {
    /// Days kept (default 365).
    pub keep_days: u32,
}

/// Replaces preferences.md or projects.md wholesale.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), MemoryFilesError>")]
pub(crate) struct ReplaceLayer {
    /// Which file.
    pub layer: Layer,
    /// The new content.
    pub text: String,
}

/// The text of preferences.md or projects.md.
#[derive(Debug, Message)]
#[rtype(result = "Result<String, MemoryFilesError>")]
pub(crate) struct GetLayer {
    /// Which file.
    pub layer: Layer,
}

/// Re-indexes every memory file from scratch.
#[derive(Debug, Message)]
#[rtype(result = "Result<IndexReport, MemoryFilesError>")]
pub(crate) struct RebuildIndex;

/// What a rebuild indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IndexReport {
    /// Sections now in the index.
    pub sections: usize,
}

/// Full-text search over the memory files.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<FileHit>, MemoryFilesError>")]
pub(crate) struct SearchFiles {
    /// Free text; words are AND-ed, stemmed, irregular forms expanded.
    pub query: String,
    /// At most this many hits.
    pub limit: u32,
}

/// The Markdown layers' prompt context.
#[derive(Debug, Message)]
#[rtype(result = "Result<MemoryContext, MemoryFilesError>")]
pub(crate) struct GetMemoryContext {
    /// Per-section caps (clamped to the reference values).
    pub caps: ContextCaps,
}

/// Closes the index for good (shutdown).
#[derive(Debug, Message)]
#[rtype(result = "Result<(), MemoryFilesError>")]
pub(crate) struct CloseMemoryFiles;

/// Checks a query and turns it into an FTS5 expression.
pub(super) fn prepare_query(query: &str) -> Result<String, MemoryFilesError> {
    let len = query.chars().count();
    if len > MAX_QUERY_CHARS {
        return Err(MemoryFilesError::QueryTooLong {
            len,
            max: MAX_QUERY_CHARS,
        });
    }
    match_expression(query).ok_or(MemoryFilesError::EmptyQuery)
}

impl Handler<AppendHistory> for MemoryFiles {
    type Result = AtomicResponse<Self, Result<AppendedEntry, MemoryFilesError>>;

    fn handle(&mut self, msg: AppendHistory, _: &mut Context<Self>) -> Self::Result {
        let appended = match self.dir.append_history(&msg.text) {
            Ok(appended) => appended,
            Err(e) => return Self::fail(e),
        };
        self.with_index(move |mut index| {
            Box::pin(async move {
                let doc = appended.doc.clone();
                if let Err(e) = index.replace_files(&[], &[doc]).await {
                    tracing::warn!(error = %e, "history entry not indexed yet; the next rebuild adds it");
                }
                (index, Ok(appended))
            })
        })
    }
}

impl Handler<ReadRecentHistory> for MemoryFiles {
    type Result = Result<String, MemoryFilesError>;

    fn handle(&mut self, msg: ReadRecentHistory, _: &mut Context<Self>) -> Self::Result {
        self.dir.read_recent_history(msg.days)
    }
}

impl Handler<PruneHistory> for MemoryFiles {
    type Result = AtomicResponse<Self, Result<PruneReport, MemoryFilesError>>;

    fn handle(&mut self, msg: PruneHistory, _: &mut Context<Self>) -> Self::Result {
        let report = match self.dir.prune_history(msg.keep_days) {
            Ok(report) => report,
            Err(e) => return Self::fail(e),
        };
        if !report.removed.is_empty() {
            tracing::info!(removed = report.removed.len(), "pruned old history files");
        }
        self.with_index(move |mut index| {
            Box::pin(async move {
                let files: Vec<String> = report
                    .removed
                    .iter()
                    .map(|n| format!("{HISTORY_DIR}/{n}"))
                    .collect();
                if let Err(e) = index.replace_files(&files, &[]).await {
                    tracing::warn!(error = %e, "pruned files stay in the index until the next rebuild");
                }
                (index, Ok(report))
            })
        })
    }
}

impl Handler<ReplaceLayer> for MemoryFiles {
    type Result = AtomicResponse<Self, Result<(), MemoryFilesError>>;

    fn handle(&mut self, msg: ReplaceLayer, _: &mut Context<Self>) -> Self::Result {
        let docs = match self.dir.replace_layer(msg.layer, &msg.text) {
            Ok(docs) => docs,
            Err(e) => return Self::fail(e),
        };
        let file = msg.layer.file_name().to_owned();
        self.with_index(move |mut index| {
            Box::pin(async move {
                if let Err(e) = index.replace_files(&[file], &docs).await {
                    tracing::warn!(error = %e, "layer not re-indexed yet; the next rebuild does it");
                }
                (index, Ok(()))
            })
        })
    }
}

impl Handler<GetLayer> for MemoryFiles {
    type Result = Result<String, MemoryFilesError>;

    fn handle(&mut self, msg: GetLayer, _: &mut Context<Self>) -> Self::Result {
        self.dir.read_layer(msg.layer)
    }
}

impl Handler<RebuildIndex> for MemoryFiles {
    type Result = AtomicResponse<Self, Result<IndexReport, MemoryFilesError>>;

    fn handle(&mut self, _: RebuildIndex, _: &mut Context<Self>) -> Self::Result {
        let docs = collect_documents(self.dir.root());
        self.with_index(move |mut index| {
            Box::pin(async move {
                let res = index
                    .rebuild(&docs)
                    .await
                    .map(|sections| IndexReport { sections })
                    .map_err(MemoryFilesError::from);
                (index, res)
            })
        })
    }
}

impl Handler<SearchFiles> for MemoryFiles {
    type Result = AtomicResponse<Self, Result<Vec<FileHit>, MemoryFilesError>>;

    fn handle(&mut self, msg: SearchFiles, _: &mut Context<Self>) -> Self::Result {
        let expr = match prepare_query(&msg.query) {
            Ok(expr) => expr,
            Err(e) => return Self::fail(e),
        };
        let root = self.dir.root().to_path_buf();
        self.with_index(move |mut index| {
            Box::pin(async move {
                let res = match index.search(&expr, msg.limit).await {
                    Err(e) => {
                        if !index.search_error_is_damage(&e).await {
                            // The index is sound: the query itself failed.
                            return (index, Err(MemoryFilesError::Search(e)));
                        }
                        // Self-healing: a damaged index is rebuilt from the
                        // files and the search retried once.
                        tracing::warn!(error = %e, "memory index damaged; rebuilding before searching");
                        let docs = collect_documents(&root);
                        match index.recreate().await {
                            Ok(()) => match index.rebuild(&docs).await {
                                Ok(_) => index.search(&expr, msg.limit).await,
                                Err(e) => Err(e),
                            },
                            Err(e) => Err(e),
                        }
                    }
                    ok => ok,
                };
                (index, res.map_err(MemoryFilesError::from))
            })
        })
    }
}

impl Handler<GetMemoryContext> for MemoryFiles {
    type Result = Result<MemoryContext, MemoryFilesError>;

    fn handle(&mut self, msg: GetMemoryContext, _: &mut Context<Self>) -> Self::Result {
        let prefs = self.dir.read_layer(Layer::Preferences)?;
        let projects = self.dir.read_layer(Layer::Projects)?;
        let history = self.dir.read_recent_history(FULL_DAYS)?;
        let root = self.dir.root();
        let cite = |name: &str| root.join(name).display().to_string();
        Ok(build_context(
            [
                ("Preferences", cite(Layer::Preferences.file_name()), &prefs),
                ("Projects", cite(Layer::Projects.file_name()), &projects),
                (
                    "Recent History",
                    format!("{}/", cite(HISTORY_DIR)),
                    &history,
                ),
            ],
            msg.caps,
        ))
    }
}

impl Handler<CloseMemoryFiles> for MemoryFiles {
    type Result = AtomicResponse<Self, Result<(), MemoryFilesError>>;

    fn handle(&mut self, _: CloseMemoryFiles, _: &mut Context<Self>) -> Self::Result {
        let closing = self.with_index(|mut index| {
            Box::pin(async move {
                index.close().await;
                (index, Ok(()))
            })
        });
        self.closed = true;
        closing
    }
}
