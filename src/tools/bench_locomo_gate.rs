//! `kirocrew bench locomo`'s view of the gates: each question asked as
//! the context builder asks it (relevance filter on, 8 results), whether
//! anything was admitted, and the speaker gate's margin, for its
//! calibration curve (issue 37).

use serde_json::{json, Value};

use kirocrew_actors::vector_store::episodic::EpisodicHit;

/// The gate's view of one question asked as the context builder asks it
/// (relevance filter on, 8 results): admitted, and the speaker margin.
#[derive(Default)]
pub(super) struct GateLog {
    admitted: u32,
    /// Questions asked.
    pub(super) n: u32,
    margins: Vec<Option<f64>>,
}

impl GateLog {
    pub(super) fn add(&mut self, hits: &[EpisodicHit]) {
        self.n += 1;
        self.admitted += u32::from(hits.iter().any(|h| h.passed_gate));
        self.margins
            .push(hits.first().and_then(|h| h.parts.as_ref()?.speaker_margin));
    }

    pub(super) fn rate(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            f64::from(self.admitted) / f64::from(self.n)
        }
    }

    /// Share of questions the speaker gate would mark at each margin.
    fn marked_at(&self, margin: f64) -> f64 {
        let marked = self
            .margins
            .iter()
            .filter(|m| m.is_some_and(|m| m >= margin))
            .count();
        if self.n == 0 {
            0.0
        } else {
            marked as f64 / f64::from(self.n)
        }
    }
}

/// The speaker gate's calibration curve: for each margin, the share of
/// answerable (categories 1–4) and adversarial questions it would mark.
pub(super) fn speaker_curve(answerable: &GateLog, adversarial: &GateLog) -> Value {
    (0..=10)
        .map(|i| {
            let m = f64::from(i) * 0.05;
            json!({"margin": m, "answerable_marked": answerable.marked_at(m), "adversarial_marked": adversarial.marked_at(m)})
        })
        .collect()
}
