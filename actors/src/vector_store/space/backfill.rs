//! The re-embed sweep: gives every row without a vector one — episodic
//! fragments, semantic rows, and lessons (spec: "Automatic migration →
//! Re-embed sweep", "Dashboard Enable Flow"). Lessons are embedded from
//! their rule text by the lesson domain's batch
//! (`VectorStoreHandle::embed_lesson_batch`), as the lesson writer does, so a
//! model change re-embeds them and the embedding rung of their dedup ladder
//! keeps working.
//!
//! NULL vectors come from writes made while no model was ready, from bulk
//! imports, and from a model change (which clears the old space). The sweep
//! runs in the background, in batches, embedding outside the store and
//! committing each batch with the generation it sampled first, so a model
//! swap in the middle only costs the rows of one batch (they stay NULL and
//! the next sweep picks them up). Progress lands in the store's `reembed`
//! snapshot; only one sweep (or model apply) runs at a time.

use super::types::semantic_document;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::handle::VectorStoreHandle;

/// Rows per embed batch.
const BATCH: u32 = 32;

/// Runs one sweep to completion. `claimed` says the caller already holds
/// the single-flight slot (the model apply flow); otherwise this claims it
/// and fails with `ReembedBusy` if taken. Returns the rows embedded.
pub async fn run_backfill(
    store: &VectorStoreHandle,
    claimed: bool,
) -> Result<u64, VectorStoreError> {
    if store.embedder().is_none() {
        return Ok(0);
    }
    let total = store.count_missing_vectors().await?;
    if !claimed {
        store.begin_reembed("running", total).await?;
    }
    let outcome = sweep(store, total).await;
    match &outcome {
        Ok(done) => {
            tracing::info!(done, total, "re-embed sweep finished");
            store.record_reembed(*done, total, Some("done"), None).await;
        }
        Err(e) => {
            tracing::warn!(error = %e, "re-embed sweep failed");
            store
                .record_reembed(0, total, Some("failed"), Some(e.to_string()))
                .await;
        }
    }
    outcome
}

/// The kinds of row the sweep fills, in the order it fills them.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Episodic,
    Lessons,
    Semantic,
}

async fn sweep(store: &VectorStoreHandle, total: u64) -> Result<u64, VectorStoreError> {
    let mut done = 0u64;
    store.record_reembed(0, total, None, None).await;
    for kind in [Kind::Episodic, Kind::Lessons, Kind::Semantic] {
        loop {
            let (listed, stored) = embed_batch(store, kind).await?;
            if listed == 0 || stored == 0 {
                // Nothing left of this kind, or every row of the batch
                // changed under us or the space moved: go on rather than
                // spin; the next sweep starts over.
                break;
            }
            done += stored;
            store
                .record_reembed(done, total.max(done), None, None)
                .await;
        }
    }
    Ok(done)
}

/// Embeds one batch of `kind` rows without a vector and stores it; returns
/// (rows listed, vectors stored).
async fn embed_batch(
    store: &VectorStoreHandle,
    kind: Kind,
) -> Result<(usize, u64), VectorStoreError> {
    match kind {
        // Deferred writes, writes made before the model was ready, rows
        // cleared by a space change.
        Kind::Episodic => {
            let rows = store.missing_episodic_vectors(BATCH).await?;
            if rows.is_empty() {
                return Ok((0, 0));
            }
            let texts: Vec<String> = rows.iter().map(|(_, text)| text.clone()).collect();
            let vectors = store.embed_for_commit(texts).await?;
            let batch: Vec<_> = rows
                .into_iter()
                .zip(vectors)
                .map(|((id, text), vector)| (id, text, vector))
                .collect();
            let listed = batch.len();
            Ok((listed, store.store_episodic_vectors(batch).await?))
        }
        // Made from the rule text, as the lesson writer makes them.
        Kind::Lessons => store.embed_lesson_batch(BATCH).await,
        Kind::Semantic => {
            let rows = store.missing_vectors(BATCH).await?;
            if rows.is_empty() {
                return Ok((0, 0));
            }
            let documents: Vec<String> = rows
                .iter()
                .map(|(key, value)| semantic_document(key, value))
                .collect();
            let vectors = store.embed_for_commit(documents).await?;
            let batch: Vec<_> = rows
                .into_iter()
                .zip(vectors)
                .map(|((key, value), vector)| (key, value, vector))
                .collect();
            let listed = batch.len();
            Ok((listed, store.store_vectors(batch).await?))
        }
    }
}
