//! How a bench counts the chat runs that gave nothing usable.

/// The chat runs of a bench (`bench consolidate`, `bench compress`) that
/// gave nothing usable, told apart: a run cut at the token cap says the
/// model looped or the cap is low, any other failure says something broke.
#[derive(Debug, Default)]
pub(super) struct FailedRuns {
    /// Runs that reached the token cap.
    pub(super) truncated: usize,
    /// Runs that failed otherwise (or whose answer was refused).
    pub(super) failed: usize,
}

impl FailedRuns {
    /// Counts `error` and says what happened, for the run's line.
    pub(super) fn record(&mut self, error: &kirocrew_actors::llm::LlmError) -> String {
        if matches!(error, kirocrew_actors::llm::LlmError::Truncated) {
            self.truncated += 1;
            "truncated".to_owned()
        } else {
            self.failed += 1;
            format!("failed: {error}")
        }
    }
}
