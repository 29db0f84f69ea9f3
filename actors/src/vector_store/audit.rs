//! The audit trail (`memory_events`): every accepted write, every refusal,
//! every deletion, in one table with one retention bound. Writers append
//! inside their own transactions through [`record_event`]; free-standing
//! events (things that happen to memory as a whole rather than to one key,
//! e.g. the Markdown `migration`, spec: "Automatic migration":
//! "acknowledges with a migration audit event (memory_events …, counts in
//! new_value)") come in as [`RecordEvent`].

use actix::prelude::*;
use serde::{Deserialize, Serialize};
use sqlx::sqlite::{SqliteConnection, SqlitePool};

use super::actor::VectorStore;
use super::error::VectorStoreError;

/// One row of the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEvent {
    /// Monotonic id.
    pub id: i64,
    /// `create`, `update`, `delete`, `conflict_skip`, `injection_blocked`, …
    pub event_type: String,
    /// `semantic`, `episodic`, `lesson`, …
    pub memory_type: String,
    /// The key concerned (empty for key-less events).
    pub key: String,
    /// The value before (JSON text), if any.
    pub old_value: Option<String>,
    /// The value after, or the redacted snippet of a blocked write.
    pub new_value: Option<String>,
    /// The writer's source label.
    pub source: String,
    /// When it happened (RFC 3339, UTC).
    pub ts: String,
}

/// What a new audit event records.
#[derive(Debug, Clone, Copy)]
pub(super) struct NewEvent<'a> {
    /// `create`, `update`, `delete`, `conflict_skip`, `injection_blocked`, …
    pub event_type: &'a str,
    /// `semantic`, `episodic`, …
    pub memory_type: &'a str,
    /// The key concerned.
    pub key: &'a str,
    /// Value before.
    pub old_value: Option<&'a str>,
    /// Value after (or a redacted snippet).
    pub new_value: Option<&'a str>,
    /// Writer's source.
    pub source: &'a str,
}

/// Event types that record a write the store refused. They are bounded
/// apart from the others (see [`record_event`]).
pub(crate) const REFUSALS: &[&str] = &[
    "injection_blocked",
    "injection_quarantined",
    "conflict_skip",
];

/// Whether `event_type` records a refused write.
pub(crate) fn is_refusal(event_type: &str) -> bool {
    REFUSALS.contains(&event_type)
}

/// Appends an audit event and drops the oldest of its class beyond
/// `max_events`. Refusals and everything else are two classes, each
/// bounded on its own, so refused attempts (cheap for a hostile client to
/// repeat) can only evict older refusals, never the record of accepted
/// writes, deletions and retirements.
pub(super) async fn record_event(
    conn: &mut SqliteConnection,
    event: NewEvent<'_>,
    now: &str,
    max_events: u32,
) -> Result<(), VectorStoreError> {
    let refusal = i64::from(is_refusal(event.event_type));
    sqlx::query(
        "INSERT INTO memory_events
             (event_type, memory_type, key, old_value, new_value, source, ts, refusal)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(event.event_type)
    .bind(event.memory_type)
    .bind(event.key)
    .bind(event.old_value)
    .bind(event.new_value)
    .bind(event.source)
    .bind(now)
    .bind(refusal)
    .execute(&mut *conn)
    .await?;
    // The newest `max_events` rows of the class stay; the cut-off is found
    // on the (refusal, id) index.
    sqlx::query(
        "DELETE FROM memory_events WHERE refusal = ?1 AND id <= (
             SELECT id FROM memory_events WHERE refusal = ?1
             ORDER BY id DESC LIMIT 1 OFFSET ?2)",
    )
    .bind(refusal)
    .bind(i64::from(max_events))
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct EventRow {
    id: i64,
    event_type: String,
    memory_type: String,
    key: String,
    old_value: Option<String>,
    new_value: Option<String>,
    source: String,
    ts: String,
}

/// The newest `limit` events, newest first.
pub(super) async fn list_events(
    pool: &SqlitePool,
    limit: u32,
) -> Result<Vec<MemoryEvent>, VectorStoreError> {
    let rows: Vec<EventRow> = sqlx::query_as(
        "SELECT id, event_type, memory_type, key, old_value, new_value, source, ts
         FROM memory_events ORDER BY id DESC LIMIT ?",
    )
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(EventRow::into_event).collect())
}

/// Events with an id above `after`, oldest first (the live feed).
pub(super) async fn events_since(
    pool: &SqlitePool,
    after: i64,
    limit: u32,
) -> Result<Vec<MemoryEvent>, VectorStoreError> {
    let rows: Vec<EventRow> = sqlx::query_as(
        "SELECT id, event_type, memory_type, key, old_value, new_value, source, ts
         FROM memory_events WHERE id > ? ORDER BY id LIMIT ?",
    )
    .bind(after)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(EventRow::into_event).collect())
}

impl EventRow {
    fn into_event(self) -> MemoryEvent {
        MemoryEvent {
            id: self.id,
            event_type: self.event_type,
            memory_type: self.memory_type,
            key: self.key,
            old_value: self.old_value,
            new_value: self.new_value,
            source: self.source,
            ts: self.ts,
        }
    }
}

/// Lists the newest audit events.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<MemoryEvent>, VectorStoreError>")]
pub(crate) struct ListEvents {
    /// At most this many.
    pub limit: u32,
}

impl Handler<ListEvents> for VectorStore {
    type Result = ResponseActFuture<Self, Result<Vec<MemoryEvent>, VectorStoreError>>;

    fn handle(&mut self, msg: ListEvents, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(|pool, _, _| async move { list_events(&pool, msg.limit).await })
    }
}

/// Appends one audit event.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub struct RecordEvent {
    /// e.g. `migration`.
    pub event_type: String,
    /// e.g. `markdown`.
    pub memory_type: String,
    /// The key concerned ("" for none).
    pub key: String,
    /// Details (JSON text).
    pub new_value: Option<String>,
    /// Who did it (`auto`, `dashboard`, `cli`).
    pub source: String,
}

impl Handler<RecordEvent> for VectorStore {
    type Result = AtomicResponse<Self, Result<(), VectorStoreError>>;

    fn handle(&mut self, msg: RecordEvent, _: &mut Context<Self>) -> Self::Result {
        self.atomic(move |pool, settings, now| async move {
            let mut conn = pool.acquire().await?;
            record_event(
                &mut conn,
                NewEvent {
                    event_type: &msg.event_type,
                    memory_type: &msg.memory_type,
                    key: &msg.key,
                    old_value: None,
                    new_value: msg.new_value.as_deref(),
                    source: &msg.source,
                },
                &now,
                settings.max_events,
            )
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_the_refused_write_events() {
        assert!(is_refusal("injection_blocked"));
        assert!(is_refusal("conflict_skip"));
        for accepted in ["create", "update", "delete", "retire", "merge", "migration"] {
            assert!(!is_refusal(accepted), "{accepted}");
        }
    }
}
