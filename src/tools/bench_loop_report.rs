//! `kirocrew bench loop`'s report: the replay's counts and the figures of
//! the questions, as JSON and as lines for a person.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use super::bench_locomo::percentile;
use super::bench_loop_score::{by_category, summarize, Sample};

/// Latencies and counts of the replay.
#[derive(Default)]
pub(super) struct Replay {
    pub(super) hook_ms: Vec<f64>,
    pub(super) gateway_ms: Vec<f64>,
    pub(super) hook_warnings: usize,
    pub(super) runs: usize,
    pub(super) run_secs: Vec<f64>,
    pub(super) run_errors: Vec<String>,
    pub(super) episodic: usize,
    pub(super) semantic: usize,
    pub(super) traced: usize,
    /// Audit events by type (writes, refusals, ungrounded drops, merges).
    pub(super) events: BTreeMap<String, usize>,
    pub(super) misses_shown: usize,
    /// Questions asked, and those with a stored item traced to one of
    /// their evidence turns (the most any retrieval could find).
    pub(super) questions: usize,
    pub(super) reachable: usize,
}

/// The JSON report.
pub(super) fn report(
    samples: &[Sample],
    replay: &Replay,
    backend: &str,
    elapsed: Duration,
) -> Value {
    let on = |surface: &'static str| samples.iter().filter(move |s| s.surface == surface);
    let latency = |ms: &[f64]| {
        let mut ms = ms.to_vec();
        ms.sort_by(f64::total_cmp);
        json!({"n": ms.len(), "p50": percentile(&ms, 50.0), "p95": percentile(&ms, 95.0)})
    };
    let mut run_secs = replay.run_secs.clone();
    run_secs.sort_by(f64::total_cmp);
    json!({
        "overall": summarize(on("claude_code")),
        "by_category": by_category(samples, "claude_code"),
        "by_surface": {
            "claude_code": summarize(on("claude_code")),
            "gateway": summarize(on("gateway")),
            "gateway_by_category": by_category(samples, "gateway"),
        },
        "replay": {
            "hook_prompt_ms": latency(&replay.hook_ms),
            "gateway_message_ms": latency(&replay.gateway_ms),
            "hook_warnings": replay.hook_warnings,
            "consolidation_runs": replay.runs,
            "consolidation_secs_p50": percentile(&run_secs, 50.0),
            "consolidation_failures": replay.run_errors,
            "stored": {"episodic": replay.episodic, "semantic": replay.semantic,
                       "traced_to_turns": replay.traced},
            "audit_events": replay.events,
            "questions_with_a_stored_source": replay.reachable,
            "reachable": replay.reachable as f64 / replay.questions.max(1) as f64,
        },
        "backend": backend,
        "secs": elapsed.as_secs_f64(),
    })
}

/// The report as lines.
pub(super) fn print_report(report: &Value) {
    let line = |name: &str, v: &Value| {
        println!(
            "{name:<24} evidence in context {:.3} of {} questions, context chars p50 {} max {}, latency p50 {:.0} ms p95 {:.0} ms",
            v["evidence_in_context"].as_f64().unwrap_or(0.0),
            v["questions"],
            v["context_chars_p50"],
            v["context_chars_max"],
            v["latency_ms"]["p50"].as_f64().unwrap_or(0.0),
            v["latency_ms"]["p95"].as_f64().unwrap_or(0.0),
        );
    };
    println!("backend: {}", report["backend"]);
    line("claude code (overall)", &report["overall"]);
    line("gateway", &report["by_surface"]["gateway"]);
    for (name, v) in report["by_category"].as_object().into_iter().flatten() {
        line(&format!("  {name}"), v);
    }
    let r = &report["replay"];
    println!(
        "replay: {} consolidation runs (p50 {:.1} s, {} failed), stored {} episodic / {} semantic ({} traced to turns)",
        r["consolidation_runs"],
        r["consolidation_secs_p50"].as_f64().unwrap_or(0.0),
        r["consolidation_failures"].as_array().map_or(0, Vec::len),
        r["stored"]["episodic"],
        r["stored"]["semantic"],
        r["stored"]["traced_to_turns"],
    );
    println!(
        "audit events: {}; questions with a stored item from their evidence: {:.3}",
        r["audit_events"],
        r["reachable"].as_f64().unwrap_or(0.0)
    );
}
