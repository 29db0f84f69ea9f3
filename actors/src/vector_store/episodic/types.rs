//! The episodic records the store accepts and hands out, their limits, and
//! the `[Episodic Memory]` block.

use serde::{Deserialize, Serialize};

/// Shortest fragment kept, in characters.
pub const MIN_TEXT_CHARS: usize = 10;
/// Longest fragment kept, in characters.
pub const MAX_TEXT_CHARS: usize = 2000;
/// Active fragments kept; beyond, the least important, oldest are tombstoned.
pub const DEFAULT_EPISODIC_MAX: u64 = 10_000;
/// Fragments in an `[Episodic Memory]` block.
pub const CONTEXT_LIMIT: usize = 8;
/// Characters kept of each fragment in the block.
pub const CONTEXT_FRAGMENT_CHARS: usize = 1500;
/// The block's own character cap.
pub const CONTEXT_CAP: usize = 3000;

/// A fragment to store.
#[derive(Debug, Clone)]
pub struct EpisodicWrite {
    /// 10–2,000 characters.
    pub text: String,
    /// Free-form tags (sanitized on write).
    pub tags: Vec<String>,
    /// Clamped to [0, 1].
    pub importance: f64,
    /// Who wrote it.
    pub source: String,
    /// When it happened (default: now); imports and benchmarks date rows.
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Store now, embed later in the backfill sweep (bulk writers).
    pub defer_embedding: bool,
    /// Import preservation mode: a near-duplicate or a full store rejects
    /// the new item instead of evicting anything.
    pub preserve: bool,
    /// Reject near-duplicates (off only for benchmarks that ingest turns).
    pub dedup: bool,
}

impl EpisodicWrite {
    /// A fragment with default importance 0.5, deduplicated, embedded now.
    pub fn new(text: impl Into<String>, source: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            tags: Vec::new(),
            importance: 0.5,
            source: source.into(),
            created_at: None,
            defer_embedding: false,
            preserve: false,
            dedup: true,
        }
    }
}

/// One stored fragment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodicEntry {
    /// Row id.
    pub id: i64,
    /// The text.
    pub text: String,
    /// Sanitized tags.
    pub tags: Vec<String>,
    /// Importance in [0, 1].
    pub importance: f64,
    /// When it happened (RFC 3339, UTC).
    pub created_at: String,
}

/// A search result with its score parts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpisodicHit {
    /// The fragment.
    #[serde(flatten)]
    pub entry: EpisodicEntry,
    /// Final ranking score.
    pub score: f64,
    /// Raw cosine to the query, when vectors were compared.
    pub cosine: Option<f32>,
    /// exp(−0.03 × days_old) at query time.
    pub decay: f64,
    /// Whether the hit may be injected into context: its raw cosine
    /// clears the relevance gate (keyword-only hits have no cosine) and the
    /// result is not a speaker mismatch.
    pub passed_gate: bool,
    /// The query names a speaker, and the other speakers' fragments match
    /// its topic clearly better than the named speaker's: the question
    /// most likely rests on a false premise ("what did B do" when A did
    /// it), so nothing is injected (`speaker_gate.rs`).
    pub speaker_mismatch: bool,
    /// How a hybrid search scored it (`None` in vector and keyword mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<ScoreParts>,
    /// The turns written just before and after it in its episode that are
    /// not results themselves, in write order (hybrid mode, `neighbours`
    /// method): an answer travels with the question it answers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub neighbours: Vec<EpisodicEntry>,
}

/// A hybrid score's parts: score = (relevance + episode_context +
/// session + graph) × speaker_boost × importance factor × recency prior.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScoreParts {
    /// The fragment's own fused keyword + vector relevance, in [0, 1].
    pub relevance: f64,
    /// Inherited from its best episode neighbour.
    pub episode_context: f64,
    /// Its session's score times the session weight (two-stage retrieval).
    pub session: f64,
    /// Relevance spread to it over the entity graph, times the graph weight.
    pub graph: f64,
    /// 1 + the boost for being by, or naming, a speaker the query names.
    pub speaker_boost: f64,
    /// The speaker gate's margin for the whole result: the other speakers'
    /// best topic relevance minus the named speaker's (absent when the
    /// query names no speaker or nobody else speaks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speaker_margin: Option<f64>,
}

/// The retrieval-v2 methods a hybrid search applies: all on by default;
/// `kirocrew bench locomo --without …` switches them off one at a time to
/// measure each one's gain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Methods {
    /// Speaker boost and the `speaker_mismatch` gate.
    pub speakers: bool,
    /// Session scores carried by their turns.
    pub sessions: bool,
    /// Relevance spread over the entity graph.
    pub graph: bool,
    /// Each result carries its episode neighbours (±1 turn).
    pub neighbours: bool,
}

impl Methods {
    /// The methods' names, as configuration and the benchmark spell them.
    pub const NAMES: [&'static str; 4] = ["speakers", "sessions", "graph", "neighbours"];

    /// The methods named in `names` on, the others off; an unknown name
    /// is an error naming it.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self, String> {
        let mut m = Self {
            speakers: false,
            sessions: false,
            graph: false,
            neighbours: false,
        };
        for name in names {
            match name.as_ref() {
                "speakers" => m.speakers = true,
                "sessions" => m.sessions = true,
                "graph" => m.graph = true,
                "neighbours" => m.neighbours = true,
                other => {
                    return Err(format!(
                        "unknown method {other:?}; known: {}",
                        Self::NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(m)
    }

    /// The methods on in both.
    pub fn and(self, other: Self) -> Self {
        Self {
            speakers: self.speakers && other.speakers,
            sessions: self.sessions && other.sessions,
            graph: self.graph && other.graph,
            neighbours: self.neighbours && other.neighbours,
        }
    }
}

impl Default for Methods {
    fn default() -> Self {
        Self {
            speakers: true,
            sessions: true,
            graph: true,
            neighbours: true,
        }
    }
}

/// Which retrieval produced a context block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Retrieval {
    /// Keyword and vector evidence (a model in the store's space embedded
    /// the query).
    Hybrid,
    /// Keyword evidence alone: no model, not ready, cooling down, or one
    /// of another space.
    Keyword,
}

/// The `[Episodic Memory]` block and how it was retrieved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EpisodicContext {
    /// The block (empty when nothing relevant was found).
    pub block: String,
    /// Which retrieval ran.
    pub retrieval: Retrieval,
}

/// Which rankings a search uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// The reference: cosine × importance × decay (keyword fallback
    /// without a query vector).
    Vector,
    /// BM25 only.
    Keyword,
    /// The default: fused BM25 + cosine relevance with episode context and
    /// a bounded recency prior (see `rank.rs`); it wins on LoCoMo.
    #[default]
    Hybrid,
}

/// Search parameters.
#[derive(Debug, Clone)]
pub struct EpisodicQuery {
    /// Free text.
    pub text: String,
    /// At most this many results (after MMR).
    pub limit: usize,
    /// Drop candidates under the relevance gate before ranking.
    pub relevance_filter: bool,
    /// Rerank for diversity.
    pub mmr: bool,
    /// Rankings to use.
    pub mode: SearchMode,
    /// "Now" for decay (default: the store's clock).
    pub as_of: Option<chrono::DateTime<chrono::Utc>>,
    /// Hybrid mode's retrieval-v2 methods.
    pub methods: Methods,
}

impl EpisodicQuery {
    /// Defaults: hybrid mode, MMR on, no gate.
    pub fn new(text: impl Into<String>, limit: usize) -> Self {
        Self {
            text: text.into(),
            limit,
            relevance_filter: false,
            mmr: true,
            mode: SearchMode::Hybrid,
            as_of: None,
            methods: Methods::default(),
        }
    }
}

/// The text's content hash: blake3 of the trimmed text with whitespace
/// runs folded, so re-sent copies that differ only in spacing match.
pub(crate) fn content_hash(text: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    blake3::hash(folded.as_bytes()).to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_parse_by_name_and_combine() {
        assert_eq!(Methods::from_names(&Methods::NAMES), Ok(Methods::default()));
        let only = Methods::from_names(&["graph"]).unwrap();
        assert!(only.graph && !only.speakers && !only.sessions && !only.neighbours);
        assert!(Methods::from_names(&["psychic"])
            .unwrap_err()
            .contains("psychic"));
        let both = Methods::default().and(only);
        assert_eq!(both, only);
    }

    #[test]
    fn hashes_ignore_spacing_only() {
        assert_eq!(content_hash("a  b\n c"), content_hash("a b c"));
        assert_ne!(content_hash("a b c"), content_hash("a b d"));
    }
}
