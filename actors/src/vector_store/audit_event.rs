//! Free-standing audit events: things that happen to memory as a whole
//! rather than to one key (the Markdown `migration`, spec: "Automatic
//! migration": "acknowledges with a migration audit event (memory_events
//! …, counts in new_value)"). Same table, same retention as every event.

use actix::prelude::*;

use super::db::{self, NewEvent};
use super::{VectorStore, VectorStoreError, VectorStoreHandle};

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
            db::record_event(
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

impl VectorStoreHandle {
    /// Appends an audit event that belongs to no single write.
    pub async fn record_event(&self, event: RecordEvent) -> Result<(), VectorStoreError> {
        self.ask(event).await
    }
}
