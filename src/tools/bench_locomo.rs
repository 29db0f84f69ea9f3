//! `kirocrew bench locomo`: evidence-turn retrieval on the LoCoMo dev split
//! (../shared/bench/locomo, see its README for the data and the metrics).
//!
//! Each conversation gets its own temporary store (so a query only sees its
//! own conversation). Every turn is ingested as an episodic memory
//! `"<speaker>: <text>"` dated at its session, with near-duplicate rejection
//! off; exact repeats share one row, and turns the writer refuses (too
//! short, screened) are simply not retrievable, as in production. Queries
//! run as of their `asked_at` time through the store's normal search.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use chrono::{DateTime, NaiveDateTime, Utc};
use clap::Args;
use serde::Deserialize;
use serde_json::{json, Value};

use super::bench_locomo_gate::{speaker_curve, GateLog};
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::vector_store::episodic::{EpisodicQuery, EpisodicWrite, Methods, SearchMode};
use kirocrew_actors::vector_store::{
    run_backfill, StoreSettings, VectorStoreError, VectorStoreHandle,
};

/// Options of `kirocrew bench locomo`.
#[derive(Debug, Args)]
pub struct LocomoArgs {
    /// The benchmark folder (memories.jsonl, queries.jsonl, adversarial.jsonl).
    #[arg(long)]
    pub data: PathBuf,
    /// Embedding model (GGUF); without it only keyword mode can run.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Rankings: hybrid (the default search), vector (the reference's
    /// decayed cosine) or keyword (BM25).
    #[arg(long, value_enum, default_value = "hybrid")]
    pub mode: ModeArg,
    /// Disable MMR reranking.
    #[arg(long)]
    pub no_mmr: bool,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
    /// Retrieval-v2 methods to switch off (ablation), comma-separated:
    /// speakers, sessions, graph, neighbours.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub without: Vec<MethodArg>,
}

/// `--without` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MethodArg {
    /// Speaker boost and the speaker_mismatch gate.
    Speakers,
    /// Session scores carried by their turns.
    Sessions,
    /// Relevance spread over the entity graph.
    Graph,
    /// Episode neighbours carried with each result.
    Neighbours,
}

impl MethodArg {
    /// The method's name (`Methods::NAMES`).
    fn name(self) -> &'static str {
        match self {
            Self::Speakers => "speakers",
            Self::Sessions => "sessions",
            Self::Graph => "graph",
            Self::Neighbours => "neighbours",
        }
    }
}

/// The method names left on by `--without`.
pub(super) fn methods_without(without: &[MethodArg]) -> Vec<String> {
    Methods::NAMES
        .iter()
        .filter(|n| !without.iter().any(|w| w.name() == **n))
        .map(|n| (*n).to_owned())
        .collect()
}

/// `--mode` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ModeArg {
    /// Cosine × importance × decay.
    Vector,
    /// BM25 (the store's in-memory postings).
    Keyword,
    /// Fused BM25 + cosine, episode context, bounded recency prior (without
    /// --model: the keyword term alone).
    Hybrid,
}

#[derive(Deserialize)]
struct Turn {
    conv: u32,
    id: String,
    speaker: String,
    text: String,
    session_date: String,
}

#[derive(Deserialize)]
struct Question {
    conv: u32,
    question: String,
    category: u32,
    evidence: Vec<String>,
    asked_at: String,
}

/// The rows of a JSONL file (blank lines skipped); an error names the
/// file and the line.
pub(super) fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<Vec<T>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    // Numbered before blank lines are skipped, so the number is the line's.
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).with_context(|| format!("{} line {}", path.display(), i + 1))
        })
        .collect()
}

fn parse_time(s: &str) -> anyhow::Result<DateTime<Utc>> {
    Ok(NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S")
        .with_context(|| format!("bad time {s:?}"))?
        .and_utc())
}

#[derive(Default, Clone, Copy)]
struct Tally {
    n: u32,
    any5: u32,
    any10: u32,
    all5: u32,
    all10: u32,
}

impl Tally {
    fn add(&mut self, found: &[HashSet<String>], evidence: &[String]) {
        let hit = |k: usize| -> (bool, bool) {
            let seen: HashSet<&String> = found.iter().take(k).flatten().collect();
            (
                evidence.iter().any(|e| seen.contains(e)),
                evidence.iter().all(|e| seen.contains(e)),
            )
        };
        let (a5, l5) = hit(5);
        let (a10, l10) = hit(10);
        self.n += 1;
        self.any5 += u32::from(a5);
        self.any10 += u32::from(a10);
        self.all5 += u32::from(l5);
        self.all10 += u32::from(l10);
    }

    fn json(&self) -> Value {
        let r = |x: u32| {
            if self.n == 0 {
                0.0
            } else {
                f64::from(x) / f64::from(self.n)
            }
        };
        json!({"any@5": r(self.any5), "any@10": r(self.any10), "all@5": r(self.all5), "all@10": r(self.all10), "n": self.n})
    }
}

/// The `p`th percentile of ascending `sorted` samples (nearest rank).
pub(super) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Runs the benchmark.
pub(super) fn run(args: LocomoArgs) -> anyhow::Result<std::process::ExitCode> {
    crate::telemetry::init(false, "warn");
    let turns: Vec<Turn> = read_jsonl(&args.data.join("memories.jsonl"))?;
    let questions: Vec<Question> = read_jsonl(&args.data.join("queries.jsonl"))?;
    let adversarial: Vec<Question> = read_jsonl(&args.data.join("adversarial.jsonl"))?;
    let mode = match args.mode {
        ModeArg::Vector => SearchMode::Vector,
        ModeArg::Keyword => SearchMode::Keyword,
        ModeArg::Hybrid => SearchMode::Hybrid,
    };
    if args.model.is_none() && mode == SearchMode::Vector {
        bail!("--mode vector needs --model PATH");
    }
    if let Some(model) = &args.model {
        if !model.is_file() {
            bail!("--model {} is not a file", model.display());
        }
    }
    let report =
        actix_rt::System::new().block_on(evaluate(&args, mode, turns, questions, adversarial))?;
    if args.json {
        println!("{report}");
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(std::process::ExitCode::SUCCESS)
}

async fn evaluate(
    args: &LocomoArgs,
    mode: SearchMode,
    turns: Vec<Turn>,
    questions: Vec<Question>,
    adversarial: Vec<Question>,
) -> anyhow::Result<Value> {
    let embedder = match &args.model {
        Some(path) => Some(crate::commands::embedding::embedder_for(path).await?),
        None => None,
    };
    let mut overall = Tally::default();
    let mut by_category: BTreeMap<u32, Tally> = BTreeMap::new();
    // The same with each result's episode neighbours credited.
    let mut windows = Tally::default();
    let mut windows_by_category: BTreeMap<u32, Tally> = BTreeMap::new();
    let (mut delivered, mut results) = (0usize, 0usize);
    let mut latencies = Vec::new();
    let (mut answerable_gate, mut adversarial_gate) = (GateLog::default(), GateLog::default());
    let methods =
        Methods::from_names(&methods_without(&args.without)).map_err(anyhow::Error::msg)?;
    let convs: Vec<u32> = turns
        .iter()
        .map(|t| t.conv)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let mut convs = convs;
    convs.sort_unstable();
    for conv in convs {
        let dir = tempfile::tempdir()?;
        let settings = StoreSettings {
            episodic_max: 1_000_000,
            ..StoreSettings::default()
        };
        let mut store =
            VectorStoreHandle::open(dir.path().join("memory.db"), settings, system_clock()).await?;
        if let Some(embedder) = &embedder {
            let status = embedder.status().await?;
            if let (Some(model), Some(dim)) = (status.backend.model_id, status.backend.dim) {
                store.reconcile_space(&model, dim).await?;
            }
            store = store.with_embedder(embedder.clone());
        }
        // row id → dialog ids stored in it
        let mut dialog_ids: HashMap<i64, HashSet<String>> = HashMap::new();
        for turn in turns.iter().filter(|t| t.conv == conv) {
            let mut write =
                EpisodicWrite::new(format!("{}: {}", turn.speaker, turn.text), "locomo");
            write.created_at = Some(parse_time(&turn.session_date)?);
            write.dedup = false;
            write.defer_embedding = true;
            match store.write_episodic(write).await {
                Ok(id) => {
                    dialog_ids.entry(id).or_default().insert(turn.id.clone());
                }
                Err(VectorStoreError::DuplicateEpisode { id }) => {
                    dialog_ids.entry(id).or_default().insert(turn.id.clone());
                }
                Err(e) if e.is_rejection() => {}
                Err(e) => return Err(e.into()),
            }
        }
        eprintln!("conv {conv}: {} rows ingested", dialog_ids.len());
        if embedder.is_some() {
            run_backfill(&store, false).await?;
        }
        for q in questions.iter().filter(|q| q.conv == conv) {
            let mut query = EpisodicQuery::new(q.question.clone(), 10);
            query.mode = mode;
            query.mmr = !args.no_mmr;
            query.methods = methods;
            query.as_of = Some(parse_time(&q.asked_at)?);
            let started = Instant::now();
            let hits = store.search_episodic(query).await?;
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            let found: Vec<HashSet<String>> = hits
                .iter()
                .map(|h| dialog_ids.get(&h.entry.id).cloned().unwrap_or_default())
                .collect();
            overall.add(&found, &q.evidence);
            by_category
                .entry(q.category)
                .or_default()
                .add(&found, &q.evidence);
            let found: Vec<HashSet<String>> = hits
                .iter()
                .map(|h| {
                    std::iter::once(&h.entry)
                        .chain(&h.neighbours)
                        .flat_map(|e| dialog_ids.get(&e.id).cloned().unwrap_or_default())
                        .collect()
                })
                .collect();
            results += hits.len();
            delivered += hits.iter().map(|h| 1 + h.neighbours.len()).sum::<usize>();
            windows.add(&found, &q.evidence);
            windows_by_category
                .entry(q.category)
                .or_default()
                .add(&found, &q.evidence);
            answerable_gate.add(&store.search_episodic(gated(q, mode, methods)?).await?);
        }
        for q in adversarial.iter().filter(|q| q.conv == conv) {
            adversarial_gate.add(&store.search_episodic(gated(q, mode, methods)?).await?);
        }
        store.close().await?;
    }
    latencies.sort_by(f64::total_cmp);
    let categories: serde_json::Map<String, Value> = by_category
        .iter()
        .map(|(c, t)| (c.to_string(), t.json()))
        .collect();
    Ok(json!({
        "mode": format!("{mode:?}").to_lowercase(),
        "mmr": !args.no_mmr,
        "overall": overall.json(),
        "by_category": categories,
        "windows": {
            "overall": windows.json(),
            "by_category": windows_by_category.iter().map(|(c, t)| (c.to_string(), t.json())).collect::<serde_json::Map<String, Value>>(),
            "rows_per_result": if results == 0 { 0.0 } else { delivered as f64 / results as f64 },
        },
        "latency_ms": {"p50": percentile(&latencies, 50.0), "p95": percentile(&latencies, 95.0)},
        "adversarial": {"admitted_rate": adversarial_gate.rate(), "n": adversarial_gate.n},
        "answerable_gated": {"admitted_rate": answerable_gate.rate(), "n": answerable_gate.n},
        "speaker_gate": speaker_curve(&answerable_gate, &adversarial_gate),
    }))
}

/// The question asked as the context builder asks it: relevance filter
/// on, 8 results.
fn gated(q: &Question, mode: SearchMode, methods: Methods) -> anyhow::Result<EpisodicQuery> {
    let mut query = EpisodicQuery::new(q.question.clone(), 8);
    query.mode = mode;
    query.methods = methods;
    query.relevance_filter = true;
    query.as_of = Some(parse_time(&q.asked_at)?);
    Ok(query)
}
