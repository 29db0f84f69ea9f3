//! Semantic key-value operations (spec: "Semantic Memory").
//!
//! Each write is: validate (pure) → screen for injection (pure, the blocked
//! attempt is audited) → one IMMEDIATE transaction that reads the incumbent,
//! runs the conflict ladder, writes, and appends the audit event. The actor
//! runs these inside `AtomicResponse`, so nothing else of the store's
//! interleaves with the read-modify-write.

use sqlx::sqlite::SqlitePool;

use super::context::{render_semantic_block, value_text};
use super::db::{self, NewEvent};
use super::error::VectorStoreError;
use super::keyword::KeywordQuery;
use super::ladder::{decide, Incumbent, Verdict};
use super::types::{ScoredEntry, SemanticEntry, SemanticWrite, WriteOutcome};
use super::validate::{validate_confidence, validate_key, validate_source, validate_value};
use super::StoreSettings;
use crate::screening::{find_injection_in_json, redact};

/// What `set_semantic_if_absent` did with one entry.
#[derive(Debug, Clone, PartialEq)]
pub enum IfAbsentOutcome {
    /// Stored: the key had no active row.
    Inserted(SemanticEntry),
    /// Left alone: an active row exists (never overwritten).
    Exists,
}

const MEMORY_TYPE: &str = "semantic";

/// Validates a write and returns its canonical value text. Injection
/// attempts are audited before the error is returned.
async fn admit(
    pool: &SqlitePool,
    settings: &StoreSettings,
    write: &SemanticWrite,
    now: &str,
) -> Result<String, VectorStoreError> {
    validate_key(&write.key, &settings.extra_prefixes)?;
    validate_source(&write.source)?;
    validate_confidence(
        write.confidence,
        &write.source,
        settings.confidence_threshold,
    )?;
    let value_json = validate_value(&write.value)?;
    if let Some(pattern) = find_injection_in_json(&write.value) {
        let snippet = redact(&value_text(&write.value));
        let mut conn = pool.acquire().await?;
        db::record_event(
            &mut conn,
            NewEvent {
                event_type: "injection_blocked",
                memory_type: MEMORY_TYPE,
                key: &write.key,
                old_value: None,
                new_value: Some(&snippet),
                source: &write.source,
            },
            now,
            settings.max_events,
        )
        .await?;
        tracing::warn!(key = %write.key, pattern, "semantic write blocked by injection screening");
        return Err(VectorStoreError::InjectionDetected { pattern });
    }
    Ok(value_json)
}

/// Writes one entry through the conflict ladder.
pub async fn write(
    pool: &SqlitePool,
    settings: &StoreSettings,
    write: SemanticWrite,
    now: &str,
) -> Result<(WriteOutcome, SemanticEntry), VectorStoreError> {
    let value_json = admit(pool, settings, &write, now).await?;
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let existing = db::fetch_active_semantic(&mut tx, &write.key).await?;
    let old_json = existing.as_ref().map(|e| e.value.to_string());
    let incumbent = existing.as_ref().map(|e| Incumbent {
        source: &e.source,
        confidence: e.confidence,
    });
    let (outcome, event_type) = match decide(incumbent, &write.source, write.confidence) {
        Verdict::Create => (WriteOutcome::Created, "create"),
        Verdict::Overwrite => (WriteOutcome::Updated, "update"),
        Verdict::Skip(reason) => {
            db::record_event(
                &mut tx,
                NewEvent {
                    event_type: "conflict_skip",
                    memory_type: MEMORY_TYPE,
                    key: &write.key,
                    old_value: old_json.as_deref(),
                    new_value: Some(&value_json),
                    source: &write.source,
                },
                now,
                settings.max_events,
            )
            .await?;
            tx.commit().await?;
            return Err(VectorStoreError::ConflictSkipped {
                key: write.key,
                reason,
            });
        }
    };
    let stored = db::upsert_semantic(
        &mut tx,
        &write.key,
        &value_json,
        write.confidence,
        &write.source,
        now,
    )
    .await?;
    db::record_event(
        &mut tx,
        NewEvent {
            event_type,
            memory_type: MEMORY_TYPE,
            key: &write.key,
            old_value: old_json.as_deref(),
            new_value: Some(&value_json),
            source: &write.source,
        },
        now,
        settings.max_events,
    )
    .await?;
    tx.commit().await?;
    Ok((outcome, stored))
}

/// Bulk-import write: validated and screened like any write, but an existing
/// active row is never touched.
pub async fn write_if_absent(
    pool: &SqlitePool,
    settings: &StoreSettings,
    write: SemanticWrite,
    now: &str,
) -> Result<IfAbsentOutcome, VectorStoreError> {
    let value_json = admit(pool, settings, &write, now).await?;
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    if db::fetch_active_semantic(&mut tx, &write.key)
        .await?
        .is_some()
    {
        return Ok(IfAbsentOutcome::Exists);
    }
    let stored = db::upsert_semantic(
        &mut tx,
        &write.key,
        &value_json,
        write.confidence,
        &write.source,
        now,
    )
    .await?;
    db::record_event(
        &mut tx,
        NewEvent {
            event_type: "create",
            memory_type: MEMORY_TYPE,
            key: &write.key,
            old_value: None,
            new_value: Some(&value_json),
            source: &write.source,
        },
        now,
        settings.max_events,
    )
    .await?;
    tx.commit().await?;
    Ok(IfAbsentOutcome::Inserted(stored))
}

/// Tombstones a key and audits the old value.
pub async fn delete(
    pool: &SqlitePool,
    settings: &StoreSettings,
    key: &str,
    source: &str,
    now: &str,
) -> Result<(), VectorStoreError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let Some(existing) = db::fetch_active_semantic(&mut tx, key).await? else {
        return Err(VectorStoreError::NotFound(key.to_owned()));
    };
    db::tombstone_semantic(&mut tx, key, now).await?;
    let old_json = existing.value.to_string();
    db::record_event(
        &mut tx,
        NewEvent {
            event_type: "delete",
            memory_type: MEMORY_TYPE,
            key,
            old_value: Some(&old_json),
            new_value: None,
            source,
        },
        now,
        settings.max_events,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The active row for `key`.
pub async fn get(pool: &SqlitePool, key: &str) -> Result<SemanticEntry, VectorStoreError> {
    let mut conn = pool.acquire().await?;
    db::fetch_active_semantic(&mut conn, key)
        .await?
        .ok_or_else(|| VectorStoreError::NotFound(key.to_owned()))
}

/// Every active row ranked for `query`: by keyword score, ties (and an empty
/// query) by recency. This is the seam where vector scoring will blend in.
pub async fn rank(pool: &SqlitePool, query: &str) -> Result<Vec<ScoredEntry>, VectorStoreError> {
    let rows = db::list_semantic(pool, None, None).await?;
    let query = KeywordQuery::new(query);
    let mut scored: Vec<ScoredEntry> = rows
        .into_iter()
        .map(|entry| {
            let score = query.score(&entry.key, &value_text(&entry.value));
            ScoredEntry { entry, score }
        })
        .collect();
    // `rows` is newest first and the sort is stable, so equal scores keep
    // recency order.
    scored.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(scored)
}

/// Rows matching `query` (score > 0), best first; an empty query lists the
/// newest rows.
pub async fn search(
    pool: &SqlitePool,
    query: &str,
    limit: usize,
) -> Result<Vec<ScoredEntry>, VectorStoreError> {
    let empty = KeywordQuery::new(query).is_empty();
    let mut ranked = rank(pool, query).await?;
    if !empty {
        ranked.retain(|s| s.score > 0.0);
    }
    ranked.truncate(limit);
    Ok(ranked)
}

/// The `[Semantic Memory]` block for `query` within `cap` characters.
pub async fn context(
    pool: &SqlitePool,
    query: &str,
    cap: usize,
) -> Result<String, VectorStoreError> {
    Ok(render_semantic_block(&rank(pool, query).await?, cap))
}
