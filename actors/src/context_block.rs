//! A rendered context block together with what happened to each candidate
//! item: included, or dropped and why. The context builder's receipt is
//! made of these (issue 13, "Context receipt"), so every block renderer
//! reports its items the same way.

use serde::Serialize;
use serde_json::Value;

/// Why a candidate did not make it into the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// It did not fit in the section's cap.
    Cap,
    /// It did not clear the relevance gate.
    RelevanceGate,
    /// The query names a speaker whose own words do not support it (an
    /// episodic result marked `speaker_mismatch`).
    SpeakerMismatch,
    /// Its group was withheld for this build.
    GroupWithheld,
    /// A higher layer states the same key/subject.
    Superseded,
    /// Over the per-block count limit.
    Limit,
}

/// One candidate of a block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockItem {
    /// Row id, key, skill name or day.
    pub id: String,
    /// `semantic`, `episodic`, `lesson`, `skill`, `history_day`, …
    pub kind: &'static str,
    /// In the rendered text.
    pub included: bool,
    /// Why not, when not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<DropReason>,
    /// Score parts, where the item was scored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<Value>,
    /// The higher-layer item that outranked it (when `dropped` is
    /// `superseded` across layers): a lesson or semantic key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
}

impl BlockItem {
    /// A candidate not yet placed.
    pub fn new(id: impl Into<String>, kind: &'static str, score: Option<Value>) -> Self {
        Self {
            id: id.into(),
            kind,
            included: false,
            dropped: None,
            score,
            superseded_by: None,
        }
    }

    /// Marks it dropped for `reason`.
    pub fn dropped(mut self, reason: DropReason) -> Self {
        self.included = false;
        self.dropped = Some(reason);
        self
    }
}

/// A block's text and its items, in candidate order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ContextBlock {
    /// The rendered block; empty when nothing was included.
    pub text: String,
    /// Every candidate considered.
    pub items: Vec<BlockItem>,
}

/// `header` followed by as many candidate lines as fit within `cap`
/// characters, in order; a line that does not fit is dropped (reason
/// `Cap`) and the scan goes on, so one oversized line cannot blank the
/// block. Candidates already dropped (`line` is `None`) are reported as
/// they are. No line fits → empty text.
pub fn fit_items(
    header: &str,
    candidates: impl IntoIterator<Item = (Option<String>, BlockItem)>,
    cap: usize,
) -> ContextBlock {
    let mut text = String::from(header);
    let mut used = header.chars().count();
    let mut items = Vec::new();
    let mut any = false;
    for (line, mut item) in candidates {
        match line {
            Some(line) if item.dropped.is_none() => {
                let len = line.chars().count() + 1;
                if used + len <= cap {
                    text.push('\n');
                    text.push_str(&line);
                    used += len;
                    any = true;
                    item.included = true;
                } else {
                    item = item.dropped(DropReason::Cap);
                }
            }
            _ => {
                if item.dropped.is_none() {
                    item = item.dropped(DropReason::Cap);
                }
            }
        }
        items.push(item);
    }
    if !any {
        text.clear();
        for item in &mut items {
            if item.included {
                item.included = false;
                item.dropped = Some(DropReason::Cap);
            }
        }
    }
    ContextBlock { text, items }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str) -> BlockItem {
        BlockItem::new(id, "test", None)
    }

    #[test]
    fn lines_that_do_not_fit_are_reported_dropped_by_cap() {
        let block = fit_items(
            "[H]",
            [
                (Some("aaaa".to_owned()), item("a")),
                (Some("b".repeat(50)), item("b")),
                (None, item("g").dropped(DropReason::RelevanceGate)),
                (Some("cc".to_owned()), item("c")),
            ],
            12,
        );
        assert_eq!(block.text, "[H]\naaaa\ncc");
        let states: Vec<(bool, Option<DropReason>)> = block
            .items
            .iter()
            .map(|i| (i.included, i.dropped))
            .collect();
        assert_eq!(
            states,
            vec![
                (true, None),
                (false, Some(DropReason::Cap)),
                (false, Some(DropReason::RelevanceGate)),
                (true, None)
            ]
        );
        let none = fit_items("[H]", [(Some("aaaa".to_owned()), item("a"))], 3);
        assert_eq!(none.text, "");
        assert_eq!(none.items[0].dropped, Some(DropReason::Cap));
    }
}
