//! Bounded concurrent searches over usearch's per-thread contexts.

use std::sync::{Condvar, Mutex, PoisonError};

/// Bounds on the concurrent searches served at once (the machine's
/// parallelism, clamped); more wait for a slot.
const MIN_SEARCH_SLOTS: usize = 4;
const MAX_SEARCH_SLOTS: usize = 64;

/// usearch serves each call from one of a fixed number of per-thread
/// contexts and fails a search that finds none free ("Reserve capacity
/// ahead of searches!"). This counting semaphore, sized like the contexts,
/// makes an extra concurrent search wait for a context instead.
pub(super) struct Slots {
    /// Contexts usearch is told to keep.
    pub(super) count: usize,
    free: Mutex<usize>,
    freed: Condvar,
}

pub(super) struct SlotGuard<'a>(&'a Slots);

impl Slots {
    pub(super) fn new() -> Self {
        let count = std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .clamp(MIN_SEARCH_SLOTS, MAX_SEARCH_SLOTS);
        Self {
            count,
            free: Mutex::new(count),
            freed: Condvar::new(),
        }
    }

    pub(super) fn acquire(&self) -> SlotGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        SlotGuard(self)
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}
