//! The live audit trail: every committed `memory_events` row, pushed to
//! subscribers as it lands (the operator console's `audit` stream and,
//! through it, the dashboard's audit card).
//!
//! ## Why rows are read back rather than sent by the writers
//! Audit rows are written inside each writer's own transaction (see
//! `audit.rs`), and a transaction may still roll back after its row was
//! inserted. So the feed never trusts an insert: after any handler of the
//! store finishes, it is woken (`VectorStore::stop_if_fatal`, which every
//! handler's result passes, rings a `Notify`), and
//! one task reads the rows committed since the last one it sent, in id
//! order, through the actor's mailbox like any other reader. (The actor
//! holds only the bell; the ring lives in the handle, so the actor knows
//! nothing of this file.) Wake-ups
//! coalesce (a `Notify` permit), so a burst of 1,000 writes costs a few
//! reads, not 1,000.
//!
//! Rows another process commits (the CLI opens memory.db itself) wake
//! nobody, so the publisher also looks once a second ([`POLL`]).
//!
//! ## Bounds
//! Subscribers share one `broadcast` ring of [`LIVE_QUEUE`] rows; one that
//! falls further behind gets `RecvError::Lagged(n)` with the count it
//! missed. A send never waits, so a slow subscriber cannot slow a writer
//! or the store, and memory stays bounded by the ring.

use std::sync::Arc;

use actix::prelude::*;
use tokio::sync::{broadcast, Notify};

use super::actor::VectorStore;
use super::audit::MemoryEvent;
use super::error::VectorStoreError;

/// Rows a live subscriber may fall behind by before it is told it lagged.
pub(crate) const LIVE_QUEUE: usize = 1024;

/// How often the feed looks for rows no handler of this store rang for
/// (written by another process); one indexed `MAX(id)` each time.
const POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// Rows read per round trip while catching up.
const BATCH: u32 = 256;

/// The ring subscribers read from.
pub(crate) fn channel() -> broadcast::Sender<MemoryEvent> {
    broadcast::channel(LIVE_QUEUE).0
}

/// Starts the one publisher task of a store: after each `wake` it sends
/// the rows committed since the last one it sent. It ends when the actor
/// is gone.
pub(crate) fn spawn_publisher(
    addr: actix::WeakAddr<VectorStore>,
    tx: broadcast::Sender<MemoryEvent>,
    wake: Arc<Notify>,
) {
    actix::spawn(async move {
        let mut cursor = match addr.upgrade() {
            Some(a) => a.send(LastEventId).await.ok().and_then(Result::ok),
            None => return,
        };
        loop {
            // Another process writing memory.db (the CLI does) rings no
            // bell here, so the feed also looks on a slow tick.
            tokio::select! {
                () = wake.notified() => {}
                () = tokio::time::sleep(POLL) => {}
            }
            let Some(store) = addr.upgrade() else { return };
            cursor = publish(&store, &tx, cursor).await;
        }
    });
}

/// Sends the rows after `cursor`; answers the new cursor. With no
/// subscriber it only moves the cursor to the newest row.
async fn publish(
    store: &Addr<VectorStore>,
    tx: &broadcast::Sender<MemoryEvent>,
    cursor: Option<i64>,
) -> Option<i64> {
    let newest = || async { store.send(LastEventId).await.ok().and_then(Result::ok) };
    let Some(mut after) = cursor else {
        return newest().await;
    };
    if tx.receiver_count() == 0 {
        let newest = newest().await;
        // A subscriber that joined while the query ran may be waiting for
        // rows the query already counted: keep the cursor then (it may see
        // a row from just before it joined, never miss one after).
        if tx.receiver_count() == 0 {
            return newest.or(Some(after));
        }
    }
    loop {
        let rows = match store
            .send(EventsSince {
                after,
                limit: BATCH,
            })
            .await
        {
            Ok(Ok(rows)) => rows,
            // Closed or reopening: try again at the next wake-up.
            _ => return Some(after),
        };
        let full = rows.len() >= BATCH as usize;
        for row in rows {
            after = after.max(row.id);
            // No receiver left is not an error.
            let _ = tx.send(row);
        }
        if !full {
            return Some(after);
        }
    }
}

/// The id of the newest audit row (0 when there is none).
#[derive(Debug, Message)]
#[rtype(result = "Result<i64, VectorStoreError>")]
pub(crate) struct LastEventId;

/// Audit rows with an id above `after`, oldest first.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<MemoryEvent>, VectorStoreError>")]
pub(crate) struct EventsSince {
    /// The last id already sent.
    pub after: i64,
    /// At most this many.
    pub limit: u32,
}

// Both are answered without `VectorStore::concurrent`: its result passes
// `stop_if_fatal`, which wakes the feed, and the feed's own reads must not
// wake it again (that would loop).

impl Handler<LastEventId> for VectorStore {
    type Result = ResponseFuture<Result<i64, VectorStoreError>>;

    fn handle(&mut self, _: LastEventId, _: &mut Context<Self>) -> Self::Result {
        let pool = self.pool();
        Box::pin(async move {
            let pool = pool?;
            let id: (i64,) = sqlx::query_as("SELECT COALESCE(MAX(id), 0) FROM memory_events")
                .fetch_one(&pool)
                .await?;
            Ok(id.0)
        })
    }
}

impl Handler<EventsSince> for VectorStore {
    type Result = ResponseFuture<Result<Vec<MemoryEvent>, VectorStoreError>>;

    fn handle(&mut self, msg: EventsSince, _: &mut Context<Self>) -> Self::Result {
        let pool = self.pool();
        Box::pin(async move { super::audit::events_since(&pool?, msg.after, msg.limit).await })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::vector_store::actor::supervision_tests::{open_store, write};

    /// Committed rows arrive in order; a receiver that falls behind is told how many it missed.
    #[actix_rt::test]
    async fn committed_rows_arrive_in_order_and_lag_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let store = open_store(dir.path().join("memory.db")).await;
        store.write_semantic(write("pref.old")).await.unwrap();
        // Let the publisher see the old row with nobody listening.
        store.stats().await.unwrap();
        let mut rx = store.subscribe_events();
        store.write_semantic(write("pref.a")).await.unwrap();
        store.write_semantic(write("pref.b")).await.unwrap();
        let wait = Duration::from_secs(30);
        // The old row may still be on its way (the publisher is a task).
        let mut first = tokio::time::timeout(wait, rx.recv())
            .await
            .unwrap()
            .unwrap();
        while first.key == "pref.old" {
            first = tokio::time::timeout(wait, rx.recv())
                .await
                .unwrap()
                .unwrap();
        }
        let second = tokio::time::timeout(wait, rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (first.key.as_str(), second.key.as_str()),
            ("pref.a", "pref.b")
        );
        assert!(first.id < second.id);

        let mut slow = store.subscribe_events();
        let n = super::LIVE_QUEUE + 10;
        for i in 0..n {
            store
                .write_semantic(write(&format!("pref.k{i}")))
                .await
                .unwrap();
        }
        let mut missed = 0;
        let mut got = 0;
        while got + missed < n as u64 {
            match tokio::time::timeout(wait, slow.recv()).await.unwrap() {
                Ok(_) => got += 1,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(k)) => missed += k,
                Err(e) => panic!("{e}"),
            }
        }
        // The last rows may be published after reading began, so fewer
        // than the overflow may be missed; but some are, and every row is
        // either delivered or counted.
        assert!(missed > 0, "missed {missed}");
        assert_eq!(got + missed, n as u64);
        store.close().await.unwrap();
    }

    /// A row committed by another writer of the file (another process in
    /// production: the CLI) reaches subscribers without any operation of
    /// this store to wake the feed.
    #[actix_rt::test]
    async fn rows_from_another_writer_arrive_on_the_tick() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        let daemon = open_store(path.clone()).await;
        daemon.stats().await.unwrap();
        let mut rx = daemon.subscribe_events();
        let cli = open_store(path).await;
        cli.write_semantic(write("pref.from_cli")).await.unwrap();
        let row = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("the tick delivers the row")
            .unwrap();
        assert_eq!(row.key, "pref.from_cli");
        cli.close().await.unwrap();
        daemon.close().await.unwrap();
    }
}
