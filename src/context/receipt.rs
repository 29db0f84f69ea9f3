//! The context receipt (issue 13): what each build put in and left out.
//! Per section: the chars used (separator included, so the sections' chars
//! add up to the context length exactly) and its cap; per candidate item:
//! included or dropped and why, with score parts where scored.

use serde::Serialize;

use kirocrew_actors::context_block::BlockItem;
use kirocrew_actors::vector_store::QueryEmbedStatus;

/// One section of the context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SectionReceipt {
    /// Section name (`critical_rules`, `semantic`, `lessons`, …).
    pub name: &'static str,
    /// Its group (`conduct`, `memory`, `lessons`, `project`, `message`).
    pub group: &'static str,
    /// Chars it takes in the context, its leading separator included.
    pub chars: usize,
    /// Its cap, where it has one.
    pub cap: Option<usize>,
    /// Its candidates.
    pub items: Vec<BlockItem>,
}

/// The whole receipt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Receipt {
    /// The model window the caps were scaled to (`None` = reference).
    pub model_window: Option<u64>,
    /// The global ceiling that applied.
    pub ceiling: usize,
    /// Context length in chars (= the sum of the sections' chars).
    pub total_chars: usize,
    /// How the query embedding went (hybrid or keyword retrieval).
    pub query_embedding: QueryEmbedStatus,
    /// Groups withheld for this build.
    pub withheld_groups: Vec<&'static str>,
    /// Whether the global ceiling cut the context (last resort).
    pub truncated_at_ceiling: bool,
    /// How the thread history went in, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_history: Option<ThreadHistoryReceipt>,
    /// Whether episodic memory went in, and why (message builds, and
    /// session starts with a message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub episodic: Option<EpisodicReceipt>,
    /// Sections in context order.
    pub sections: Vec<SectionReceipt>,
}

/// Why episodic memory was or was not part of a build. Episodic memory goes
/// with the first message of a session (spec "Context Builder → Every
/// message"); a surface may say which message that is, else the daemon
/// infers it from the session's transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EpisodicReceipt {
    /// Episodic fragments are in the context.
    pub included: bool,
    /// The build counted as the session's first message.
    pub first_message: bool,
    /// Who decided that: `caller` (the request said), `inferred` (from the
    /// session's recorded turns and earlier prompts) or `session_start`.
    pub decided_by: &'static str,
    /// In words.
    pub why: String,
}

impl EpisodicReceipt {
    /// The receipt once the episodic section was (or was not) searched:
    /// `found` is the fragments included, `Err` a failed search.
    pub fn after_search(
        first_message: bool,
        decided_by: &'static str,
        order_why: &str,
        found: Result<usize, String>,
    ) -> Self {
        let (included, outcome) = match found {
            Ok(0) => (
                false,
                "but no fragment passed the relevance gate".to_owned(),
            ),
            Ok(n) => (true, format!("{n} fragment(s) passed the relevance gate")),
            Err(e) => (false, format!("but the episodic search failed: {e}")),
        };
        Self {
            included,
            first_message,
            decided_by,
            why: format!("first message ({order_why}); {outcome}"),
        }
    }

    /// The receipt of a build that did not search episodic memory.
    pub fn skipped(first_message: bool, decided_by: &'static str, why: String) -> Self {
        Self {
            included: false,
            first_message,
            decided_by,
            why,
        }
    }
}

/// How the thread history was fitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadHistoryReceipt {
    /// `verbatim` (it fitted), `compressed` (head and tail around a
    /// summary) or `truncated` (oldest messages dropped).
    pub method: &'static str,
    /// Why it was not compressed, when it was truncated: `pending`,
    /// `unavailable (…)`, `failed (…)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression: Option<String>,
}
