//! The `VectorStore` protocol: one struct per request, each with its thin
//! handler. Writes are `AtomicResponse` (mailbox held for the whole
//! read-modify-write); reads are plain response futures.

use actix::prelude::*;

use super::context::render_semantic_items;
use super::db;
use super::mirror::QueryVector;
use super::types::{
    IfAbsentOutcome, KeyState, ScoredEntry, SemanticEntry, SemanticWrite, WriteOutcome,
};
use super::write;
use crate::context_block::ContextBlock;
use crate::vector_store::actor::VectorStore;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::keyword::KeywordQuery;
use crate::vector_store::space::types::{CommitVector, EmbeddedQuery};

/// Writes a semantic entry through validation, screening and the conflict
/// ladder, with the vector embedded beforehand (if any).
#[derive(Debug, Message)]
#[rtype(result = "Result<(WriteOutcome, SemanticEntry), VectorStoreError>")]
pub(crate) struct WriteSemantic {
    /// The write.
    pub write: SemanticWrite,
    /// Its vector and the space generation it was made in.
    pub vector: Option<CommitVector>,
}

/// Writes a semantic entry only if the key has no active row (bulk import).
#[derive(Debug, Message)]
#[rtype(result = "Result<IfAbsentOutcome, VectorStoreError>")]
pub(crate) struct WriteSemanticIfAbsent(pub SemanticWrite);

/// Tombstones a semantic entry.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct DeleteSemantic {
    /// The key.
    pub key: String,
    /// Who deletes it (recorded in the audit event).
    pub source: String,
}

/// Fetches one active semantic entry.
#[derive(Debug, Message)]
#[rtype(result = "Result<SemanticEntry, VectorStoreError>")]
pub(crate) struct GetSemantic {
    /// The key.
    pub key: String,
}

/// Lists active semantic entries, newest first.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<SemanticEntry>, VectorStoreError>")]
pub(crate) struct ListSemantic {
    /// Only keys starting with this text.
    pub prefix: Option<String>,
    /// At most this many.
    pub limit: u32,
}

/// Searches semantic entries by relevance.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<ScoredEntry>, VectorStoreError>")]
pub(crate) struct SearchSemantic {
    /// Free text; empty means recency order.
    pub query: String,
    /// The query's embedding, when the embedder is ready.
    pub embedded: Option<EmbeddedQuery>,
    /// At most this many.
    pub limit: usize,
}

/// Renders the `[Semantic Memory]` context block.
#[derive(Debug, Message)]
#[rtype(result = "Result<ContextBlock, VectorStoreError>")]
pub(crate) struct GetSemanticContext {
    /// The user's message (ranks the entries); empty means recency order.
    pub query: String,
    /// The query's embedding, when the embedder is ready.
    pub embedded: Option<EmbeddedQuery>,
    /// Character cap for the whole block.
    pub cap: usize,
}

impl Handler<WriteSemantic> for VectorStore {
    type Result = AtomicResponse<Self, Result<(WriteOutcome, SemanticEntry), VectorStoreError>>;

    fn handle(&mut self, msg: WriteSemantic, _: &mut Context<Self>) -> Self::Result {
        let space = self.space.clone();
        let screening = self.screening();
        self.atomic(|pool, settings, now| async move {
            let (w, v) = (msg.write, msg.vector);
            write::write(&pool, &settings, w, v, &space, &screening, &now).await
        })
    }
}

impl Handler<WriteSemanticIfAbsent> for VectorStore {
    type Result = AtomicResponse<Self, Result<IfAbsentOutcome, VectorStoreError>>;

    fn handle(&mut self, msg: WriteSemanticIfAbsent, _: &mut Context<Self>) -> Self::Result {
        let screening = self.screening();
        self.atomic(|pool, settings, now| async move {
            write::write_if_absent(&pool, &settings, msg.0, &screening, &now).await
        })
    }
}

impl Handler<DeleteSemantic> for VectorStore {
    type Result = AtomicResponse<Self, Result<(), VectorStoreError>>;

    fn handle(&mut self, msg: DeleteSemantic, _: &mut Context<Self>) -> Self::Result {
        self.atomic(|pool, settings, now| async move {
            write::delete(&pool, &settings, &msg.key, &msg.source, &now).await
        })
    }
}

/// Whether a key was ever written: absent, active, or tombstoned (so a
/// re-run importer can leave what the user deleted deleted).
#[derive(Debug, Message)]
#[rtype(result = "Result<KeyState, VectorStoreError>")]
pub(crate) struct GetKeyState {
    /// The key.
    pub key: String,
}

impl Handler<GetKeyState> for VectorStore {
    type Result = ResponseActFuture<Self, Result<KeyState, VectorStoreError>>;

    fn handle(&mut self, msg: GetKeyState, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(|pool, _, _| async move {
            let deleted: Option<i64> =
                sqlx::query_scalar("SELECT is_deleted FROM semantic_memory WHERE key = ?")
                    .bind(&msg.key)
                    .fetch_optional(&pool)
                    .await?;
            Ok(match deleted {
                None => KeyState::Absent,
                Some(0) => KeyState::Active,
                Some(_) => KeyState::Deleted,
            })
        })
    }
}

impl Handler<GetSemantic> for VectorStore {
    type Result = ResponseActFuture<Self, Result<SemanticEntry, VectorStoreError>>;

    fn handle(&mut self, msg: GetSemantic, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(|pool, _, _| async move { write::get(&pool, &msg.key).await })
    }
}

impl Handler<ListSemantic> for VectorStore {
    type Result = ResponseActFuture<Self, Result<Vec<SemanticEntry>, VectorStoreError>>;

    fn handle(&mut self, msg: ListSemantic, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(|pool, _, _| async move {
            db::list_semantic(&pool, msg.prefix.as_deref(), Some(msg.limit)).await
        })
    }
}

impl VectorStore {
    /// Brings the ranking mirror up to date (fetching only rows changed since
    /// its last sequence number, off the actor), then runs `then` in the
    /// actor, where the mirror lives.
    pub(crate) fn with_fresh_mirror<T: 'static>(
        &mut self,
        then: impl FnOnce(&mut Self) -> Result<T, VectorStoreError> + 'static,
    ) -> ResponseActFuture<Self, Result<T, VectorStoreError>> {
        let since = self.mirror.seq();
        let fetch = self.concurrent(move |pool, _, _| async move {
            db::fetch_changed_semantic(&pool, since).await
        });
        Box::pin(fetch.map(move |changed, act, _| {
            act.mirror.apply(changed?);
            then(act)
        }))
    }

    /// Ranks the semantic rows for `query` on a fresh mirror.
    fn ranked<T: 'static>(
        &mut self,
        query: String,
        embedded: Option<EmbeddedQuery>,
        matches_only: bool,
        finish: impl FnOnce(Vec<ScoredEntry>) -> T + 'static,
    ) -> ResponseActFuture<Self, Result<T, VectorStoreError>> {
        self.with_fresh_mirror(move |act| {
            let keywords = KeywordQuery::new(&query);
            // A query vector counts only if it was made by the model whose
            // space the store holds.
            let signature = embedded.as_ref().and_then(|e| e.signature_in(&act.space));
            let vector = QueryVector::of(embedded.as_ref(), signature.as_deref());
            // An empty query (no words, no vector) lists everything newest
            // first even for search.
            let everything = !matches_only || (keywords.is_empty() && vector.is_none());
            let ranked = act
                .mirror
                .rank(&keywords, vector, |score| everything || score > 0.0);
            Ok(finish(ranked))
        })
    }
}

impl Handler<SearchSemantic> for VectorStore {
    type Result = ResponseActFuture<Self, Result<Vec<ScoredEntry>, VectorStoreError>>;

    fn handle(&mut self, msg: SearchSemantic, _: &mut Context<Self>) -> Self::Result {
        let limit = msg.limit;
        self.ranked(msg.query, msg.embedded, true, move |mut found| {
            found.truncate(limit);
            found
        })
    }
}

impl Handler<GetSemanticContext> for VectorStore {
    type Result = ResponseActFuture<Self, Result<ContextBlock, VectorStoreError>>;

    fn handle(&mut self, msg: GetSemanticContext, _: &mut Context<Self>) -> Self::Result {
        let cap = msg.cap;
        // The block ranks every row (non-matches last, by recency); search
        // keeps matches only.
        self.ranked(msg.query, msg.embedded, false, move |ranked| {
            render_semantic_items(&ranked, cap)
        })
    }
}
