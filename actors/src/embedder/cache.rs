//! The embedding cache: the 128 most recent (text, model, kind) → vector
//! results (spec: "Sync embedding cache"). Embeddings are deterministic
//! for a model, so caching is safe; the model id is part of the key, so a
//! swapped-in model never gets the old model's vectors. Failures are never
//! cached: a still-loading model is asked again next time.

use std::num::NonZeroUsize;
use std::sync::Arc;

use lru::LruCache;
use serde::Serialize;

use super::backend::EmbedKind;

/// Entries kept.
pub const CACHE_CAPACITY: usize = 128;

/// Misses between two stats log lines.
const LOG_EVERY_MISSES: u64 = 20;

type Key = (String, String, EmbedKind);

/// Hit/miss counters, reported by the status endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that needed the model.
    pub misses: u64,
    /// Entries held now.
    pub size: usize,
    /// Capacity.
    pub capacity: usize,
}

/// The cache.
pub(super) struct EmbedCache {
    entries: LruCache<Key, Arc<Vec<f32>>>,
    hits: u64,
    misses: u64,
}

impl Default for EmbedCache {
    fn default() -> Self {
        Self::with_capacity(CACHE_CAPACITY)
    }
}

impl EmbedCache {
    /// A cache of `capacity` entries (at least one).
    pub(super) fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: LruCache::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN)),
            hits: 0,
            misses: 0,
        }
    }

    /// Looks `text` up, counting a hit or a miss.
    pub(super) fn get(
        &mut self,
        text: &str,
        model_id: &str,
        kind: EmbedKind,
    ) -> Option<Arc<Vec<f32>>> {
        let key = (text.to_owned(), model_id.to_owned(), kind);
        match self.entries.get(&key) {
            Some(v) => {
                self.hits += 1;
                Some(Arc::clone(v))
            }
            None => {
                self.misses += 1;
                if self.misses % LOG_EVERY_MISSES == 0 {
                    tracing::info!(
                        hits = self.hits,
                        misses = self.misses,
                        size = self.entries.len(),
                        "embedding cache stats"
                    );
                }
                None
            }
        }
    }

    /// Stores a successful result.
    pub(super) fn put(
        &mut self,
        text: String,
        model_id: String,
        kind: EmbedKind,
        vector: Arc<Vec<f32>>,
    ) {
        self.entries.put((text, model_id, kind), vector);
    }

    /// Current counters.
    pub(super) fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits,
            misses: self.misses,
            size: self.entries.len(),
            capacity: self.entries.cap().get(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_by_text_model_and_kind_and_bounded() {
        let mut cache = EmbedCache::with_capacity(2);
        cache.put(
            "a".into(),
            "m1".into(),
            EmbedKind::Document,
            Arc::new(vec![1.0]),
        );
        assert!(cache.get("a", "m1", EmbedKind::Document).is_some());
        assert!(cache.get("a", "m2", EmbedKind::Document).is_none());
        assert!(cache.get("a", "m1", EmbedKind::Query).is_none());
        cache.put(
            "b".into(),
            "m1".into(),
            EmbedKind::Document,
            Arc::new(vec![2.0]),
        );
        cache.put(
            "c".into(),
            "m1".into(),
            EmbedKind::Document,
            Arc::new(vec![3.0]),
        );
        assert!(
            cache.get("a", "m1", EmbedKind::Document).is_none(),
            "evicted"
        );
        let stats = cache.stats();
        assert_eq!(
            (stats.hits, stats.misses, stats.size, stats.capacity),
            (1, 3, 2, 2)
        );
    }
}
