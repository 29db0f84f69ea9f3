//! Judging `kirocrew bench loop`'s contexts (pure functions).
//!
//! A question's context counts as holding its evidence when it quotes an
//! evidence turn or an item derived from one. What the daemon stored is
//! read back after the replay (`GET /api/memory/export`) and each item is
//! traced to the turns it came from: the gold observations it carries
//! (their evidence lists, `--backend observations`) and any single turn
//! holding at least half its content words (what any backend may write).
//! An item is recognised in a context by the opening of its text, since
//! the context builder may cut a long item, never its start.

use std::collections::{BTreeMap, HashSet};

use serde_json::{json, Value};

use kirocrew_actors::consolidator::grounding::Evidence;

use super::bench_locomo::percentile;

/// Characters of an item's (normalised) opening looked for in a context.
const PROBE_CHARS: usize = 60;
/// Share of an item's content words one turn must hold to be its source.
const TURN_SUPPORT: f64 = 0.5;
/// And at least this many of them: the speaker's name and one common word
/// ("Melanie loves her kids") would otherwise trace to half her turns.
const TURN_MIN_WORDS: usize = 3;

/// Lower case, whitespace runs as one space: contexts re-flow text.
pub(super) fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The opening of `text` that identifies it in a normalised context.
pub(super) fn probe(text: &str) -> String {
    normalize(text).chars().take(PROBE_CHARS).collect()
}

/// A stored item and the turns it derives from.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct DerivedItem {
    /// Its probe.
    pub(super) probe: String,
    /// Dialog ids (`D3:7`) it derives from.
    pub(super) evidence: HashSet<String>,
}

/// One turn of the conversation, for tracing.
pub(super) struct TracedTurn<'a> {
    /// Its dialog id.
    pub(super) id: &'a str,
    /// What was said.
    pub(super) text: &'a str,
}

/// One gold observation, for tracing.
pub(super) struct TracedObservation<'a> {
    /// Its text.
    pub(super) text: &'a str,
    /// The dialog ids that support it.
    pub(super) evidence: &'a [String],
}

/// Traces each stored item to its source turns; items traced to none are
/// left out (they cannot count for any question).
pub(super) fn derive(
    items: &[String],
    turns: &[TracedTurn<'_>],
    observations: &[TracedObservation<'_>],
) -> Vec<DerivedItem> {
    let single: Vec<Evidence> = turns.iter().map(|t| Evidence::new([t.text], [])).collect();
    let observations: Vec<(String, &[String])> = observations
        .iter()
        .map(|o| (normalize(o.text), o.evidence))
        .collect();
    items
        .iter()
        .filter_map(|item| {
            let text = normalize(item);
            let mut evidence: HashSet<String> = observations
                .iter()
                .filter(|(obs, _)| !obs.is_empty() && text.contains(obs.as_str()))
                .flat_map(|(_, ids)| ids.iter().cloned())
                .collect();
            for (turn, support) in turns.iter().zip(&single) {
                let s = support.support(item);
                if s.found >= TURN_MIN_WORDS && s.ratio() >= TURN_SUPPORT {
                    evidence.insert(turn.id.to_owned());
                }
            }
            (!evidence.is_empty()).then(|| DerivedItem {
                probe: probe(item),
                evidence,
            })
        })
        .collect()
}

/// Whether `context` holds one of `evidence`'s turns (by `turn_probes`,
/// dialog id → probe) or an item derived from one.
pub(super) fn holds_evidence(
    context: &str,
    evidence: &[String],
    turn_probes: &BTreeMap<String, String>,
    derived: &[DerivedItem],
) -> bool {
    let context = normalize(context);
    evidence.iter().any(|id| {
        let quoted = turn_probes
            .get(id)
            .is_some_and(|p| p.chars().count() >= 12 && context.contains(p.as_str()));
        quoted
            || derived
                .iter()
                .any(|d| d.evidence.contains(id) && context.contains(d.probe.as_str()))
    })
}

/// One question asked through one surface.
#[derive(Debug, Clone)]
pub(super) struct Sample {
    /// LoCoMo's category name.
    pub(super) category: String,
    /// `claude_code` or `gateway`.
    pub(super) surface: &'static str,
    /// The context held its evidence.
    pub(super) hit: bool,
    /// Characters of context handed over.
    pub(super) chars: usize,
    /// Round trip of the surface, in milliseconds.
    pub(super) latency_ms: f64,
}

/// The figures of a set of samples.
pub(super) fn summarize<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Value {
    let samples: Vec<&Sample> = samples.into_iter().collect();
    let n = samples.len();
    let hits = samples.iter().filter(|s| s.hit).count();
    let mut chars: Vec<f64> = samples.iter().map(|s| s.chars as f64).collect();
    chars.sort_by(f64::total_cmp);
    let mut latency: Vec<f64> = samples.iter().map(|s| s.latency_ms).collect();
    latency.sort_by(f64::total_cmp);
    json!({
        "evidence_in_context": if n == 0 { 0.0 } else { hits as f64 / n as f64 },
        "questions": n,
        "context_chars_p50": percentile(&chars, 50.0),
        "context_chars_max": chars.last().copied().unwrap_or(0.0),
        "latency_ms": {"p50": percentile(&latency, 50.0), "p95": percentile(&latency, 95.0)},
    })
}

/// `summarize` per category, for one surface.
pub(super) fn by_category(samples: &[Sample], surface: &str) -> Value {
    let mut names: Vec<&str> = samples.iter().map(|s| s.category.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let map: serde_json::Map<String, Value> = names
        .into_iter()
        .map(|name| {
            let figures = summarize(
                samples
                    .iter()
                    .filter(|s| s.surface == surface && s.category == name),
            );
            (name.to_owned(), figures)
        })
        .collect();
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn items_are_traced_to_observations_and_supporting_turns() {
        let turns = [
            TracedTurn {
                id: "D1:3",
                text: "I went to a LGBTQ support group yesterday and it was so powerful.",
            },
            TracedTurn {
                id: "D1:4",
                text: "Wow, that's cool! What happened?",
            },
        ];
        let evidence = ids(&["D1:3"]);
        let observations = [TracedObservation {
            text: "Caroline attended an LGBTQ support group.",
            evidence: &evidence,
        }];
        let items = vec![
            "Caroline attended an LGBTQ support group. She felt accepted.".to_owned(),
            "The LGBTQ support group was powerful.".to_owned(),
            "Melanie bought a red bicycle in Paris.".to_owned(),
        ];
        let derived = derive(&items, &turns, &observations);
        assert_eq!(derived.len(), 2, "{derived:?}");
        assert!(derived.iter().all(|d| d.evidence.contains("D1:3")));
        assert!(!derived.iter().any(|d| d.evidence.contains("D1:4")));
    }

    #[test]
    fn a_context_holds_evidence_by_turn_or_derived_item() {
        let mut turn_probes = BTreeMap::new();
        turn_probes.insert(
            "D1:3".to_owned(),
            probe("I went to a LGBTQ support group yesterday."),
        );
        let derived = vec![DerivedItem {
            probe: probe("Melanie painted a lake sunrise last year."),
            evidence: ["D1:14".to_owned()].into(),
        }];
        let with_turn = "[Episodic Memory]\n- I went to a LGBTQ   support group\nyesterday.";
        assert!(holds_evidence(
            with_turn,
            &ids(&["D1:3"]),
            &turn_probes,
            &derived
        ));
        let with_item = "- (2026-12-07) MELANIE painted a lake sunrise last year.";
        assert!(holds_evidence(
            with_item,
            &ids(&["D1:14"]),
            &turn_probes,
            &derived
        ));
        assert!(!holds_evidence(
            with_item,
            &ids(&["D1:3"]),
            &turn_probes,
            &derived
        ));
        assert!(!holds_evidence(
            "",
            &ids(&["D1:14"]),
            &turn_probes,
            &derived
        ));
    }

    #[test]
    fn figures_per_surface_and_category() {
        let sample = |category: &str, surface, hit, chars| Sample {
            category: category.to_owned(),
            surface,
            hit,
            chars,
            latency_ms: chars as f64 / 10.0,
        };
        let samples = vec![
            sample("temporal", "claude_code", true, 100),
            sample("temporal", "claude_code", false, 300),
            sample("single-hop", "claude_code", true, 200),
            sample("temporal", "gateway", false, 50),
        ];
        let all = summarize(samples.iter().filter(|s| s.surface == "claude_code"));
        assert_eq!(all["questions"], 3);
        assert!((all["evidence_in_context"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
        let close = |v: &Value, want: f64| (v.as_f64().expect("a number") - want).abs() < 1e-9;
        assert!(close(&all["context_chars_p50"], 200.0), "{all:?}");
        let cats = by_category(&samples, "claude_code");
        assert_eq!(cats["temporal"]["questions"], 2);
        assert!(
            close(&cats["single-hop"]["evidence_in_context"], 1.0),
            "{cats:?}"
        );
        assert_eq!(summarize([].iter())["questions"], 0);
    }
}
