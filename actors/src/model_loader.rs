//! # The background load-state machine of an in-process model
//!
//! One [`ModelLoader`] per llama.cpp backend: the embedder
//! (`embedder/llama`, spec "In-Process Embedder") and the local chat
//! model (`llm/local.rs`, spec "Consolidation"). Both load a GGUF on a
//! thread of their own so no caller ever waits for it, answer "not ready"
//! at once until it is resident, and retry a failed load only after a
//! cooldown, so a broken file cannot spawn a loader thread per call.
//!
//! States: `Idle` → `Loading` → `Ready(T)` or `Failed {error, at}`;
//! `Failed` goes back to `Loading` once the cooldown has passed;
//! `Closed` is final (a load that finishes after `close` is dropped).
//! `T` is whatever the backend serves from (its worker channels).

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Where a background-loaded model is.
pub(crate) enum LoadState<T> {
    /// Nothing loaded and no load running.
    Idle,
    /// A load runs on the loader thread.
    Loading,
    /// Loaded: what the backend serves from.
    Ready(T),
    /// The last load failed at `at`.
    Failed {
        /// Why.
        error: String,
        /// When (the cooldown runs from here).
        at: Instant,
    },
    /// Closed for good.
    Closed,
}

impl<T> LoadState<T> {
    /// The state's name in status snapshots.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            LoadState::Idle => "idle",
            LoadState::Loading => "loading",
            LoadState::Ready(_) => "ready",
            LoadState::Failed { .. } => "failed",
            LoadState::Closed => "closed",
        }
    }
}

struct Inner<T> {
    state: Mutex<LoadState<T>>,
    changed: Condvar,
    thread_name: &'static str,
    cooldown: Duration,
}

/// A shared handle on one model's load state (clones share it).
pub(crate) struct ModelLoader<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for ModelLoader<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T: Send + 'static> ModelLoader<T> {
    /// An idle loader whose loads run on a thread named `thread_name` and
    /// are retried `cooldown` after a failure.
    pub(crate) fn new(thread_name: &'static str, cooldown: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(LoadState::Idle),
                changed: Condvar::new(),
                thread_name,
                cooldown,
            }),
        }
    }

    /// The current state, locked.
    pub(crate) fn lock(&self) -> MutexGuard<'_, LoadState<T>> {
        // A panic while holding this lock leaves a consistent enum value;
        // keep serving rather than poisoning every later call.
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `load` on the loader thread if the model is idle, or failed
    /// longer than the cooldown ago; answers whether a load started. The
    /// caller's thread never waits for it.
    pub(crate) fn kick<F>(&self, load: F) -> bool
    where
        F: FnOnce() -> Result<T, String> + Send + 'static,
    {
        let mut state = self.lock();
        let start = match &*state {
            LoadState::Idle => true,
            LoadState::Failed { at, .. } => at.elapsed() >= self.inner.cooldown,
            LoadState::Loading | LoadState::Ready(_) | LoadState::Closed => false,
        };
        if !start {
            return false;
        }
        *state = LoadState::Loading;
        drop(state);
        let inner = Arc::clone(&self.inner);
        let spawned = std::thread::Builder::new()
            .name(self.inner.thread_name.into())
            .spawn(move || {
                let outcome = load();
                let mut state = inner.state.lock().unwrap_or_else(|e| e.into_inner());
                if matches!(*state, LoadState::Closed) {
                    return;
                }
                *state = match outcome {
                    Ok(ready) => LoadState::Ready(ready),
                    Err(error) => LoadState::Failed {
                        error,
                        at: Instant::now(),
                    },
                };
                inner.changed.notify_all();
            });
        if let Err(e) = spawned {
            *self.lock() = LoadState::Failed {
                error: format!("cannot start loader thread: {e}"),
                at: Instant::now(),
            };
            self.inner.changed.notify_all();
        }
        true
    }

    /// Waits up to `timeout` while a load runs; answers the state then
    /// (still `Loading` when the time ran out).
    pub(crate) fn wait_while_loading(&self, timeout: Duration) -> MutexGuard<'_, LoadState<T>> {
        let deadline = Instant::now() + timeout;
        let mut state = self.lock();
        while matches!(*state, LoadState::Loading) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .inner
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        state
    }

    /// Closes for good: drops what `Ready` held (the backend's workers
    /// finish their current job and exit) and wakes every waiter.
    pub(crate) fn close(&self) {
        *self.lock() = LoadState::Closed;
        self.inner.changed.notify_all();
    }
}

/// A worker's report that its context exists (or why it does not).
pub(crate) type WorkerReady = mpsc::Sender<Result<(), String>>;

/// Reports a worker's context creation to [`spawn_worker`]'s caller;
/// answers the context when there is one.
pub(crate) fn report_ready<C, E: std::fmt::Display>(
    ready: &WorkerReady,
    created: Result<C, E>,
) -> Option<C> {
    match created {
        Ok(ctx) => {
            let _ = ready.send(Ok(()));
            Some(ctx)
        }
        Err(e) => {
            let _ = ready.send(Err(format!("cannot create a llama.cpp context: {e}")));
            None
        }
    }
}

/// Starts `run` on a thread named `name` with a fresh job queue, waits
/// until it reports its context ready, and answers the queue. The worker
/// owns its llama.cpp context (neither `Send` nor `Sync`) and serves jobs
/// until the queue's last sender is dropped.
pub(crate) fn spawn_worker<J, F>(name: String, run: F) -> Result<mpsc::Sender<J>, String>
where
    J: Send + 'static,
    F: FnOnce(mpsc::Receiver<J>, WorkerReady) + Send + 'static,
{
    let (jobs, queue) = mpsc::channel::<J>();
    let (ready, started) = mpsc::channel::<Result<(), String>>();
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || run(queue, ready))
        .map_err(|e| format!("cannot start the {name} thread: {e}"))?;
    started
        .recv()
        .map_err(|_| format!("the {name} thread died while starting"))??;
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready_name(loader: &ModelLoader<u32>) -> &'static str {
        loader.wait_while_loading(Duration::from_secs(30)).name()
    }

    #[test]
    fn a_load_runs_once_and_serves() {
        let loader = ModelLoader::<u32>::new("test-load", Duration::from_secs(300));
        assert_eq!(loader.lock().name(), "idle");
        assert!(loader.kick(|| Ok(7)));
        assert_eq!(ready_name(&loader), "ready");
        assert!(!loader.kick(|| Ok(8)), "a ready model is not loaded again");
        assert!(matches!(*loader.lock(), LoadState::Ready(7)));
    }

    #[test]
    fn a_failed_load_waits_out_the_cooldown() {
        let loader = ModelLoader::<u32>::new("test-load", Duration::from_secs(300));
        assert!(loader.kick(|| Err("bad file".into())));
        assert_eq!(ready_name(&loader), "failed");
        assert!(!loader.kick(|| Ok(1)), "still in its cooldown");
        let quick = ModelLoader::<u32>::new("test-load", Duration::ZERO);
        assert!(quick.kick(|| Err("bad file".into())));
        assert_eq!(ready_name(&quick), "failed");
        assert!(quick.kick(|| Ok(1)), "cooldown over: retried");
        assert_eq!(ready_name(&quick), "ready");
    }

    #[test]
    fn a_load_finishing_after_close_is_dropped() {
        let loader = ModelLoader::<u32>::new("test-load", Duration::ZERO);
        let (go, wait) = std::sync::mpsc::channel::<()>();
        assert!(loader.kick(move || {
            let _ = wait.recv();
            Ok(1)
        }));
        loader.close();
        go.send(()).unwrap();
        assert_eq!(ready_name(&loader), "closed");
        assert!(!loader.kick(|| Ok(2)));
    }

    #[test]
    fn a_worker_starts_serves_and_reports_a_failed_start() {
        let jobs = spawn_worker("test-worker".into(), |queue, ready: WorkerReady| {
            let _ = ready.send(Ok(()));
            while let Ok(reply) = queue.recv() {
                let reply: mpsc::Sender<u32> = reply;
                let _ = reply.send(42);
            }
        })
        .unwrap();
        let (tx, rx) = mpsc::channel();
        jobs.send(tx).unwrap();
        assert_eq!(rx.recv().unwrap(), 42);
        let failed = spawn_worker::<(), _>("test-worker".into(), |_, ready: WorkerReady| {
            let _ = ready.send(Err("no context".into()));
        });
        assert_eq!(failed.unwrap_err(), "no context");
        let died = spawn_worker::<(), _>("test-worker".into(), |_, _| {});
        assert!(died.unwrap_err().contains("died while starting"));
    }
}
