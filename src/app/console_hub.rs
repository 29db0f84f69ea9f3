//! [`ConsoleHub`]: what the console's sessions share — the session limit,
//! the waiting room of connections that have not sent their token yet, the
//! shutdown bell, and the `progress` stream's sampler.
//!
//! Only an authenticated session counts against
//! `server.console_max_sessions` (issue 42: eight sockets that never sent a
//! token used to hold every place, and reconnecting kept the console locked
//! for good). A connection waiting to authenticate holds a place in the
//! waiting room instead: at most [`MAX_PENDING`]; when it is full, the one
//! that has waited longest is told to go ([`PendingSlot::evicted`]), so a
//! flood of silent sockets cannot keep an operator out — the operator's
//! client authenticates within milliseconds of connecting.
//!
//! The `progress` stream carries the long operations' status snapshots
//! (model download, re-embed, Markdown migration) — the same snapshots
//! `GET /api/memory/embedding-status` and `/api/memory/migrate` answer. A
//! sampler reads them every [`SAMPLE_EVERY`] while anyone subscribes and
//! sends one only when it changed; with no subscriber it reads nothing.
//! The dashboard gets them pushed through the websocket instead of
//! polling the REST API.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::{broadcast, watch};

use crate::embedder_wiring::EmbeddingRuntime;
use crate::migration::MigrationService;

/// How often the progress sampler looks while someone subscribes.
const SAMPLE_EVERY: Duration = Duration::from_millis(500);

/// Progress snapshots a subscriber may fall behind by.
const PROGRESS_QUEUE: usize = 64;

/// Connections waiting to authenticate, at most; a new one sends the
/// longest-waiting away.
pub const MAX_PENDING: usize = 8;

/// Shared by every console session of one daemon. Cloneable.
#[derive(Clone)]
pub struct ConsoleHub {
    inner: Arc<Inner>,
}

struct Inner {
    active: AtomicUsize,
    max_sessions: usize,
    /// The waiting room, oldest first: each waiter's id and its bell.
    pending: Mutex<VecDeque<(u64, watch::Sender<bool>)>>,
    next_pending: AtomicU64,
    idle: Duration,
    closing: watch::Sender<bool>,
    progress: broadcast::Sender<Value>,
}

/// One admitted session; dropping it frees the place.
#[derive(Debug)]
pub struct SessionSlot {
    hub: Arc<Inner>,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.hub.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A place in the waiting room; dropping it frees the place.
#[derive(Debug)]
pub struct PendingSlot {
    hub: Arc<Inner>,
    id: u64,
    evicted: watch::Receiver<bool>,
}

impl PendingSlot {
    /// Resolves when a newer connection needed this place: the connection
    /// should close. Never resolves otherwise.
    pub async fn evicted(&mut self) {
        if self.evicted.wait_for(|gone| *gone).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Leaves the waiting room for a session place (the token was
    /// accepted), or `None` when every session place is taken.
    pub fn promote(self, hub: &ConsoleHub) -> Option<SessionSlot> {
        drop(self);
        hub.try_enter()
    }
}

impl Drop for PendingSlot {
    fn drop(&mut self) {
        if let Ok(mut room) = self.hub.pending.lock() {
            room.retain(|(id, _)| *id != self.id);
        }
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleHub")
            .field("active", &self.active.load(Ordering::Relaxed))
            .field("max_sessions", &self.max_sessions)
            .finish()
    }
}

impl ConsoleHub {
    /// A hub admitting `max_sessions` sessions, each closed after `idle`
    /// without a frame from its client.
    pub fn new(max_sessions: usize, idle: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                active: AtomicUsize::new(0),
                max_sessions,
                pending: Mutex::new(VecDeque::new()),
                next_pending: AtomicU64::new(0),
                idle,
                closing: watch::channel(false).0,
                progress: broadcast::channel(PROGRESS_QUEUE).0,
            }),
        }
    }

    /// A place for one more session, or `None` when all are taken.
    pub fn try_enter(&self) -> Option<SessionSlot> {
        let admitted = self
            .inner
            .active
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.inner.max_sessions).then_some(n + 1)
            })
            .is_ok();
        admitted.then(|| SessionSlot {
            hub: Arc::clone(&self.inner),
        })
    }

    /// A place in the waiting room for a connection that has not
    /// authenticated yet; when the room is full, the longest-waiting
    /// connection is sent away to make room.
    pub fn enter_pending(&self) -> PendingSlot {
        let id = self.inner.next_pending.fetch_add(1, Ordering::Relaxed);
        let (bell, evicted) = watch::channel(false);
        if let Ok(mut room) = self.inner.pending.lock() {
            while room.len() >= MAX_PENDING {
                if let Some((_, oldest)) = room.pop_front() {
                    oldest.send_replace(true);
                }
            }
            room.push_back((id, bell));
        }
        PendingSlot {
            hub: Arc::clone(&self.inner),
            id,
            evicted,
        }
    }

    /// Connections waiting to authenticate now.
    pub fn pending(&self) -> usize {
        self.inner.pending.lock().map_or(0, |room| room.len())
    }

    /// Sessions open now.
    pub fn active(&self) -> usize {
        self.inner.active.load(Ordering::Acquire)
    }

    /// The most sessions admitted at once.
    pub fn max_sessions(&self) -> usize {
        self.inner.max_sessions
    }

    /// How long a silent session is kept.
    pub fn idle_timeout(&self) -> Duration {
        self.inner.idle
    }

    /// Tells every session to close (daemon shutdown) and stops the sampler.
    pub fn shutdown(&self) {
        self.inner.closing.send_replace(true);
    }

    /// Becomes `true` at shutdown.
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.inner.closing.subscribe()
    }

    /// The live `progress` stream.
    pub fn subscribe_progress(&self) -> broadcast::Receiver<Value> {
        self.inner.progress.subscribe()
    }

    /// Starts the progress sampler (module docs). It ends at shutdown.
    pub fn spawn_progress_sampler(
        &self,
        embeddings: EmbeddingRuntime,
        migration: MigrationService,
    ) {
        let hub = self.clone();
        actix_rt::spawn(async move {
            let mut closing = hub.closing();
            let mut ticks = tokio::time::interval(SAMPLE_EVERY);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            let mut last = Value::Null;
            loop {
                tokio::select! {
                    _ = closing.changed() => return,
                    _ = ticks.tick() => {}
                }
                if hub.inner.progress.receiver_count() == 0 {
                    // A new subscriber gets the current state first.
                    last = Value::Null;
                    continue;
                }
                let status = embeddings.status().await;
                let sample = progress_sample(
                    serde_json::to_value(&status).unwrap_or(Value::Null),
                    serde_json::to_value(migration.status()).unwrap_or(Value::Null),
                );
                if sample != last {
                    let _ = hub.inner.progress.send(sample.clone());
                    last = sample;
                }
            }
        });
    }
}

/// The parts of the status snapshots that make up progress (pure).
pub fn progress_sample(embedding: Value, migration: Value) -> Value {
    let pick = |v: &Value, keys: &[&str]| -> Value {
        keys.iter()
            .map(|k| ((*k).to_owned(), v.get(*k).cloned().unwrap_or(Value::Null)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    json!({
        "download": pick(&embedding, &["download_step", "download_attempt", "bytes_downloaded", "bytes_total", "error"]),
        "model": pick(&embedding, &["model_id", "model_state"]),
        "reembed": embedding.get("reembed").cloned().unwrap_or(Value::Null),
        "migration": pick(&migration, &["step", "source", "started_at", "finished_at", "error"]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_limit_holds_and_frees() {
        let hub = ConsoleHub::new(2, Duration::from_secs(60));
        let a = hub.try_enter().unwrap();
        let _b = hub.try_enter().unwrap();
        assert!(hub.try_enter().is_none());
        drop(a);
        assert_eq!(hub.active(), 1);
        assert!(hub.try_enter().is_some());
    }

    #[actix_rt::test]
    async fn waiting_connections_never_take_a_session_place() {
        let hub = ConsoleHub::new(1, Duration::from_secs(60));
        let mut first = hub.enter_pending();
        let rest: Vec<_> = (1..MAX_PENDING).map(|_| hub.enter_pending()).collect();
        assert_eq!(hub.pending(), MAX_PENDING);
        assert_eq!(hub.active(), 0);
        // One more: the longest waiting is sent away.
        let newest = hub.enter_pending();
        tokio::time::timeout(Duration::from_secs(1), first.evicted())
            .await
            .expect("the oldest waiter is evicted");
        assert_eq!(hub.pending(), MAX_PENDING);
        drop(first);
        assert_eq!(hub.pending(), MAX_PENDING, "it had already left the room");
        // The newest authenticates and takes the one session place.
        let session = newest.promote(&hub).expect("a place");
        assert_eq!((hub.active(), hub.pending()), (1, MAX_PENDING - 1));
        assert!(rest.into_iter().next().unwrap().promote(&hub).is_none());
        drop(session);
        assert_eq!(hub.active(), 0);
    }

    #[test]
    fn progress_keeps_only_the_progress_fields() {
        let s = progress_sample(
            json!({"download_step": "downloading", "bytes_downloaded": 5, "model_state": "idle",
                   "cache": {"hits": 1}, "reembed": {"running": false}}),
            json!({"step": "idle", "report": {"big": true}}),
        );
        assert_eq!(s["download"]["bytes_downloaded"], 5);
        assert!(s.get("cache").is_none());
        assert_eq!(s["migration"]["step"], "idle");
        assert!(s["migration"].get("report").is_none());
    }
}
