//! The `after_consolidation` steps: what runs once a session's history
//! path has finished (spec "Auto-Skill Creation": the pipeline
//! "piggybacks on the idle-fired consolidation" and hangs here).
//!
//! The daemon registers a list of steps when it starts the consolidator
//! (`ConsolidatorConfig::after_consolidation`, built in
//! `src/consolidation`); each history-path run that succeeded offers the
//! session to every step, in order, after the marker is persisted. A step
//! that fails is logged and named in the run's report
//! ([`RunReport::steps_failed`]); it never undoes what the run wrote, never
//! moves the marker back, and never keeps the later steps from running.
//!
//! Steps run inside the consolidation task: a slow one (generation, a
//! network call) hands the session over — a channel, a spawned task — and
//! returns, as the `mpsc::Sender` step does.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc;

use super::types::{AfterConsolidation, ConsolidatedSession, RunReport, StepFuture, SOURCE};
use crate::vector_store::RecordEvent;
use crate::vector_store::VectorStoreHandle;

/// A channel as a step: `try_send`, so a slow consumer misses sessions
/// (a failed step) rather than stalling consolidation.
impl AfterConsolidation for mpsc::Sender<ConsolidatedSession> {
    fn name(&self) -> &str {
        "channel"
    }

    fn after(&self, session: ConsolidatedSession) -> StepFuture {
        let sent = self
            .try_send(session)
            .map_err(|e| format!("queue full or closed: {e}"));
        Box::pin(async move { sent })
    }
}

/// The daemon's default step: a `consolidated` audit event (memory type
/// `session`, the session key as its key, the run's counts as its value,
/// source `consolidation`), so the memory audit trail says when and how a
/// session's history was consolidated.
#[derive(Debug, Clone)]
pub struct RecordConsolidated {
    store: VectorStoreHandle,
}

impl RecordConsolidated {
    /// A step writing into `store`'s audit trail.
    pub fn new(store: VectorStoreHandle) -> Self {
        Self { store }
    }
}

/// The audit event's value: what the run did (pure, for tests).
pub fn consolidated_summary(upto: u64, report: &RunReport) -> serde_json::Value {
    json!({
        "upto": upto,
        "turns": report.turns,
        "history": report.history,
        "episodic": report.episodic,
        "lessons": report.lessons,
        "refused": report.refused,
        "dropped": report.dropped,
        "ignored_keys": report.ignored_keys,
    })
}

impl AfterConsolidation for RecordConsolidated {
    fn name(&self) -> &str {
        "record_consolidated"
    }

    fn after(&self, session: ConsolidatedSession) -> StepFuture {
        let store = self.store.clone();
        Box::pin(async move {
            let event = RecordEvent {
                event_type: "consolidated".into(),
                memory_type: "session".into(),
                new_value: Some(consolidated_summary(session.upto, &session.report).to_string()),
                key: session.session,
                source: SOURCE.into(),
            };
            store.record_event(event).await.map_err(|e| e.to_string())
        })
    }
}

/// Offers `session` to every step in order; answers the failures as
/// `name: reason` (logged here).
pub(crate) async fn run_steps(
    steps: &[Arc<dyn AfterConsolidation>],
    session: &ConsolidatedSession,
) -> Vec<String> {
    let mut failed = Vec::new();
    for step in steps {
        if let Err(reason) = step.after(session.clone()).await {
            tracing::warn!(session = %session.session, step = step.name(), %reason, "after_consolidation step failed; the consolidation stands");
            failed.push(format!("{}: {reason}", step.name()));
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consolidator::Dropped;

    #[test]
    fn the_summary_names_what_the_run_did() {
        let report = RunReport {
            turns: 5,
            upto: 5,
            episodic: 2,
            lessons: 1,
            history: true,
            refused: 1,
            dropped: Dropped {
                episodic: 3,
                ..Dropped::default()
            },
            ..RunReport::default()
        };
        let summary = consolidated_summary(5, &report);
        assert_eq!(summary["upto"], 5);
        assert_eq!(summary["episodic"], 2);
        assert_eq!(summary["history"], true);
        assert_eq!(summary["dropped"]["episodic"], 3);
    }
}
