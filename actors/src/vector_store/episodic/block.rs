//! The `[Episodic Memory]` context block (spec: "Context Builder →
//! Episodic"), with each result's episode neighbours (issue 37).
//!
//! Results come first: at most [`CONTEXT_LIMIT`] of them, each cut to
//! [`CONTEXT_FRAGMENT_CHARS`], within min([`CONTEXT_CAP`], cap). Only the
//! budget they leave is spent on neighbours, in result order, so a
//! window never pushes a result out. A neighbour is rendered beside its
//! result, in write order, indented:
//!
//! ```text
//! [Episodic Memory]
//!   | Melanie: What have you been researching lately, Caroline?
//! - (2026-03-01) Caroline: Adoption agencies! I want to give a kid a home.
//! ```
//!
//! Why neighbours at all: an answer rarely repeats the question's words
//! ("Adoption agencies!"), and a multi-hop question's evidence is often the
//! next turn; crediting them to the result set, not only to the ranking,
//! is what gets all of a question's evidence in front of the agent.

use std::collections::HashMap;

use super::types::{
    EpisodicEntry, EpisodicHit, CONTEXT_CAP, CONTEXT_FRAGMENT_CHARS, CONTEXT_LIMIT,
};
use crate::context_block::{fit_items, BlockItem, ContextBlock, DropReason};

/// The block's header.
const HEADER: &str = "[Episodic Memory]";
/// Characters kept of each neighbour.
pub(crate) const CONTEXT_NEIGHBOUR_CHARS: usize = 300;

fn one_line(text: &str, max: usize) -> String {
    text.chars()
        .take(max)
        .collect::<String>()
        .replace('\n', " ")
}

fn result_line(hit: &EpisodicHit) -> String {
    let created = &hit.entry.created_at;
    let day = created.get(..10).unwrap_or(created);
    format!(
        "- ({day}) {}",
        one_line(&hit.entry.text, CONTEXT_FRAGMENT_CHARS)
    )
}

fn neighbour_line(entry: &EpisodicEntry) -> String {
    format!("  | {}", one_line(&entry.text, CONTEXT_NEIGHBOUR_CHARS))
}

/// Renders the block; empty when nothing fits. Every hit is reported
/// (included, or dropped by the speaker gate, the relevance gate, the
/// count limit or the cap), then every neighbour offered (included, or
/// dropped by the cap).
pub(crate) fn render_episodic_items(hits: &[EpisodicHit], cap: usize) -> ContextBlock {
    let cap = cap.min(CONTEXT_CAP);
    let mut shown = 0usize;
    let candidates: Vec<(Option<String>, BlockItem)> = hits
        .iter()
        .map(|hit| {
            let score = serde_json::json!({
                "score": hit.score,
                "cosine": hit.cosine,
                "decay": hit.decay,
                "importance": hit.entry.importance,
                "parts": hit.parts,
            });
            let item = BlockItem::new(hit.entry.id.to_string(), "episodic", Some(score));
            if hit.speaker_mismatch {
                return (None, item.dropped(DropReason::SpeakerMismatch));
            }
            if !hit.passed_gate {
                return (None, item.dropped(DropReason::RelevanceGate));
            }
            shown += 1;
            if shown > CONTEXT_LIMIT {
                return (None, item.dropped(DropReason::Limit));
            }
            (Some(result_line(hit)), item)
        })
        .collect();
    let mut block = fit_items(HEADER, candidates, cap);
    if block.text.is_empty() {
        return block;
    }
    // fit_items reports one item per candidate, in order.
    let mut used = block.text.chars().count();
    // Result index → its neighbours that fit, as (row id, rendered line).
    let mut windows: HashMap<usize, Vec<(i64, String)>> = HashMap::new();
    let mut neighbour_items = Vec::new();
    for (i, hit) in hits.iter().enumerate() {
        if !block.items.get(i).is_some_and(|item| item.included) {
            continue;
        }
        for n in &hit.neighbours {
            let score = serde_json::json!({ "neighbour_of": hit.entry.id });
            let item = BlockItem::new(n.id.to_string(), "episodic_neighbour", Some(score));
            let line = neighbour_line(n);
            let len = line.chars().count() + 1;
            if used + len <= cap {
                used += len;
                windows.entry(i).or_default().push((n.id, line));
                let mut item = item;
                item.included = true;
                neighbour_items.push(item);
            } else {
                neighbour_items.push(item.dropped(DropReason::Cap));
            }
        }
    }
    let mut text = String::from(HEADER);
    for (i, hit) in hits.iter().enumerate() {
        if !block.items.get(i).is_some_and(|item| item.included) {
            continue;
        }
        let window = windows.get(&i).map(Vec::as_slice).unwrap_or_default();
        for (_, line) in window.iter().filter(|(id, _)| *id < hit.entry.id) {
            text.push('\n');
            text.push_str(line);
        }
        text.push('\n');
        text.push_str(&result_line(hit));
        for (_, line) in window.iter().filter(|(id, _)| *id > hit.entry.id) {
            text.push('\n');
            text.push_str(line);
        }
    }
    block.text = text;
    block.items.extend(neighbour_items);
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: i64, text: &str) -> EpisodicEntry {
        EpisodicEntry {
            id,
            text: text.into(),
            tags: vec![],
            importance: 0.5,
            created_at: "2026-01-02T03:04:05.000000Z".into(),
        }
    }

    fn hit(text: &str) -> EpisodicHit {
        EpisodicHit {
            entry: entry(10, text),
            score: 1.0,
            cosine: Some(0.9),
            decay: 1.0,
            passed_gate: true,
            speaker_mismatch: false,
            parts: None,
            neighbours: vec![],
        }
    }

    #[test]
    fn block_limits_fragments_and_characters() {
        let hits: Vec<_> = (0..10).map(|i| hit(&format!("fragment {i}"))).collect();
        let block = render_episodic_items(&hits, 10_000).text;
        assert_eq!(block.lines().count(), 1 + CONTEXT_LIMIT);
        assert!(block.starts_with("[Episodic Memory]\n- (2026-01-02) fragment 0"));
        let long = vec![hit(&"x".repeat(5000)), hit(&"y".repeat(5000))];
        let block = render_episodic_items(&long, 10_000).text;
        assert!(block.chars().count() <= CONTEXT_CAP);
        assert_eq!(block.matches('x').count(), CONTEXT_FRAGMENT_CHARS);
        assert_eq!(render_episodic_items(&long, 50).text, "");
    }

    #[test]
    fn neighbours_sit_beside_their_result_and_only_spend_what_is_left() {
        let mut answer = hit("Caroline: Adoption agencies!");
        answer.neighbours = vec![
            entry(9, "Melanie: What are you researching?"),
            entry(11, "Melanie: That's wonderful."),
        ];
        let other = hit("Caroline: I painted a sunrise.");
        let block = render_episodic_items(&[answer.clone(), other.clone()], 10_000);
        assert_eq!(
            block.text,
            "[Episodic Memory]\n  | Melanie: What are you researching?\n\
             - (2026-01-02) Caroline: Adoption agencies!\n  | Melanie: That's wonderful.\n\
             - (2026-01-02) Caroline: I painted a sunrise."
        );
        assert_eq!(block.items.len(), 4);
        assert!(block.items.iter().all(|i| i.included));
        assert_eq!(block.items[2].kind, "episodic_neighbour");

        // A cap that holds both results and no neighbour keeps the results.
        let results_only = render_episodic_items(&[answer.clone(), other.clone()], 10_000)
            .text
            .lines()
            .filter(|l| l.starts_with('-'))
            .map(|l| l.chars().count() + 1)
            .sum::<usize>()
            + HEADER.chars().count();
        let block = render_episodic_items(&[answer, other], results_only);
        assert_eq!(block.text.lines().count(), 3, "{}", block.text);
        assert!(block.items[2..]
            .iter()
            .all(|i| i.dropped == Some(DropReason::Cap)));
    }

    #[test]
    fn a_speaker_mismatch_renders_nothing() {
        let mut h = hit("Melanie: I ran a charity race.");
        h.speaker_mismatch = true;
        h.passed_gate = false;
        h.neighbours = vec![entry(11, "Caroline: wow")];
        let block = render_episodic_items(&[h], 10_000);
        assert_eq!(block.text, "");
        assert_eq!(block.items.len(), 1);
        assert_eq!(block.items[0].dropped, Some(DropReason::SpeakerMismatch));
    }
}
