//! Holding a flagged write: the row, its audit event and the security
//! event, the same for every writer (semantic, lessons, episodic, imports).

use serde_json::json;
use sqlx::sqlite::SqlitePool;

use super::db::{find_same, insert, trim, NewItem};
use super::types::Held;
use super::{INJECTION_QUARANTINED, MAX_ITEMS};
use crate::security::redact::redact;
use crate::security::screen::Verdict;
use crate::security_log::SecurityEvent;
use crate::vector_store::audit::{record_event, NewEvent};
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::screening::Screening;

/// Stores `held` in the quarantine (its text as screened, `text`; an item
/// already holding the same write is answered instead) with an
/// `injection_quarantined` audit event in the same transaction, trims the
/// table to [`MAX_ITEMS`] (each dropped item audited), and reports a
/// security event. Returns the error the writer answers:
/// [`VectorStoreError::Quarantined`], or the database's own failure.
pub(crate) async fn hold(
    pool: &SqlitePool,
    verdict: &Verdict,
    held: Held,
    text: &str,
    screening: &Screening,
    now: &str,
    max_events: u32,
) -> VectorStoreError {
    let rule = verdict.rule.unwrap_or("injection");
    let category = verdict.category.map(|c| c.as_str());
    let snippet = redact(text);
    let stored = async {
        let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(id) = find_same(&mut tx, &held, text).await? {
            return Ok(id);
        }
        let item = NewItem {
            held: &held,
            text,
            rule,
            category,
        };
        let id = insert(&mut tx, item, now).await?;
        let key = held.key().map_or_else(|| id.to_string(), str::to_owned);
        let event = NewEvent {
            event_type: INJECTION_QUARANTINED,
            memory_type: held.layer(),
            key: &key,
            old_value: None,
            new_value: Some(&snippet),
            source: held.source(),
        };
        record_event(&mut tx, event, now, max_events).await?;
        for gone in trim(&mut tx, MAX_ITEMS).await? {
            let event = NewEvent {
                event_type: "quarantine_evict",
                memory_type: &gone.layer,
                key: gone.key.as_deref().unwrap_or(""),
                old_value: Some(&redact(&gone.text)),
                new_value: Some("quarantine full: the oldest item was dropped"),
                source: held.source(),
            };
            record_event(&mut tx, event, now, max_events).await?;
        }
        tx.commit().await?;
        Ok::<i64, VectorStoreError>(id)
    }
    .await;
    tracing::warn!(
        layer = held.layer(),
        key = held.key(),
        rule,
        "memory write quarantined by injection screening"
    );
    if let (Some(log), Ok(id)) = (&screening.log, &stored) {
        log.record_later(SecurityEvent::new(
            INJECTION_QUARANTINED,
            held.source(),
            "quarantined",
            json!({
                "id": id,
                "memory_type": held.layer(),
                "key": held.key(),
                "rule": rule,
                "category": category,
                "layer": verdict.layer.map(|l| l.as_str()),
                "matched": verdict.matched.as_deref().map(redact),
                "snippet": snippet,
            }),
        ));
    }
    match stored {
        Ok(id) => VectorStoreError::Quarantined { id, rule, category },
        Err(e) => e,
    }
}
