//! The store's tunables, taken from the `memory` section of the config.

use super::episodic::types::{Methods, DEFAULT_EPISODIC_MAX};
use super::semantic::validate::DEFAULT_CONFIDENCE_THRESHOLD;
use crate::embedder::calibration::Thresholds;

/// Tunables of the store, taken from the `memory` section of the config.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreSettings {
    /// Extra allowed key prefixes, normalized to end in `.`.
    pub extra_prefixes: Vec<String>,
    /// Confidence automated writes need.
    pub confidence_threshold: f64,
    /// Audit events kept (oldest dropped beyond this).
    pub max_events: u32,
    /// Active episodic fragments kept.
    pub episodic_max: u64,
    /// The retrieval-v2 methods hybrid episodic search may use
    /// (`memory.episodic_methods`); a query's own choice is and-ed with it.
    pub episodic_methods: Methods,
    /// The similarity thresholds on the embedding model's scale. Not a
    /// setting: the store fills it in for every request from the model's
    /// calibration (`embedder/calibration.rs`), the reference values until
    /// one is measured.
    pub similarity: Thresholds,
}

impl Default for StoreSettings {
    fn default() -> Self {
        Self {
            extra_prefixes: Vec::new(),
            confidence_threshold: DEFAULT_CONFIDENCE_THRESHOLD,
            max_events: 10_000,
            episodic_max: DEFAULT_EPISODIC_MAX,
            episodic_methods: Methods::default(),
            similarity: Thresholds::REFERENCE,
        }
    }
}
