//! [`ConsoleHub`]: what the console's sessions share — the session limit,
//! the shutdown bell, and the `progress` stream's sampler.
//!
//! The `progress` stream carries the long operations' status snapshots
//! (model download, re-embed, Markdown migration) — the same snapshots
//! `GET /api/memory/embedding-status` and `/api/memory/migrate` answer. A
//! sampler reads them every [`SAMPLE_EVERY`] while anyone subscribes and
//! sends one only when it changed; with no subscriber it reads nothing.
//! The dashboard gets them pushed through the websocket instead of
//! polling the REST API.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::{broadcast, watch};

use crate::embedder_wiring::EmbeddingRuntime;
use crate::migration::MigrationService;

/// How often the progress sampler looks while someone subscribes.
const SAMPLE_EVERY: Duration = Duration::from_millis(500);

/// Progress snapshots a subscriber may fall behind by.
const PROGRESS_QUEUE: usize = 64;

/// Shared by every console session of one daemon. Cloneable.
#[derive(Clone)]
pub struct ConsoleHub {
    inner: Arc<Inner>,
}

struct Inner {
    active: AtomicUsize,
    max_sessions: usize,
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
