//! `kirocrew bench loop` (issue 35) as a user runs it: the real binary
//! replays LoCoMo sessions through the hook adapter and the gateway into a
//! daemon of its own, consolidates them through the gold-observations
//! stand-in endpoint, then asks the questions as first prompts.

use std::path::PathBuf;

use serde_json::Value;

use crate::cli::{run_cli, stderr, stdout};
use crate::helpers::{required_asset, shared_model};

fn locomo() -> Option<PathBuf> {
    required_asset(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/locomo"),
        "../shared beside the checkout",
    )
}

/// Two sessions of the first conversation: the questions whose evidence
/// lies in them must find it in their first prompt's context (episodic
/// memory written by consolidation, retrieved for a new session), within
/// Claude Code's inline budget, and nothing on the way may fail.
#[test]
fn the_loop_puts_consolidated_memory_into_first_prompts() {
    let (Some(data), Some(model)) = (locomo(), shared_model("all-minilm-l6-v2-q8_0.gguf")) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (data, model) = (data.display().to_string(), model.display().to_string());
    let out = run_cli(
        home.path(),
        &[
            "bench",
            "loop",
            "--data",
            &data,
            "--model",
            &model,
            "--conversations",
            "1",
            "--sessions",
            "2",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let report: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let overall = &report["overall"];
    let questions = overall["questions"].as_u64().unwrap();
    assert!(questions >= 10, "{report}");
    let share = overall["evidence_in_context"].as_f64().unwrap();
    // Measured 0.85+ on these sessions; without episodic memory in a first
    // prompt it is 0.
    assert!(share >= 0.6, "{report}");
    assert!(overall["context_chars_max"].as_f64().unwrap() <= 9_500.0);
    assert!(overall["latency_ms"]["p95"].as_f64().unwrap() > 0.0);
    assert_eq!(report["by_surface"]["gateway"]["questions"], questions);
    let replay = &report["replay"];
    assert_eq!(replay["consolidation_runs"], 2, "{report}");
    assert_eq!(replay["consolidation_failures"], serde_json::json!([]));
    assert_eq!(replay["hook_warnings"], 0);
    assert!(
        replay["stored"]["episodic"].as_u64().unwrap() >= 5,
        "{report}"
    );
    let categories = report["by_category"].as_object().unwrap();
    let asked: u64 = categories
        .values()
        .map(|c| c["questions"].as_u64().unwrap())
        .sum();
    assert_eq!(asked, questions);
}

#[test]
fn bad_input_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("nowhere");
    let missing = missing.display().to_string();
    let out = run_cli(home.path(), &["bench", "loop", "--model", &missing]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("is not a file"), "{}", stderr(&out));
    let Some(model) = shared_model("all-minilm-l6-v2-q8_0.gguf") else {
        return;
    };
    let model = model.display().to_string();
    let out = run_cli(
        home.path(),
        &["bench", "loop", "--data", &missing, "--model", &model],
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("memories.jsonl"), "{}", stderr(&out));
}
