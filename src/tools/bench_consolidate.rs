//! `kirocrew bench consolidate`: what consolidation would write, measured
//! against gold (issue 35).
//!
//! Each LoCoMo dev session (`--data DIR`: `memories.jsonl`, the turns, and
//! `observations.jsonl`, the gold facts LoCoMo's authors wrote from each
//! session) goes through the consolidator's own pipeline for both paths:
//! the prompts, one model answer, parsing, grounding, the caps. The
//! items that would reach the writers are then judged against the gold:
//!
//! - **matched**: the item says what a gold observation of its session
//!   says (claim-word F1 ≥ [`MATCH_F1`], or with `--embed-model` a cosine
//!   ≥ [`MATCH_COSINE`]);
//! - **supported**: one turn of the session holds at least half the item's
//!   content words (or, with `--embed-model`, one turn is within
//!   [`SUPPORT_COSINE`]); a judge of single turns, stricter in reach than
//!   the writer's three-turn windows;
//! - **hallucinated**: neither.
//!
//! Recall is the share of gold observations some item matched; precision
//! the share of items matched or supported; the hallucination rate the
//! rest. The same figures before grounding (`raw`) show what it removed.
//! The speaker who opens a conversation plays the user, the other the
//! assistant (each turn keeps its sender's name).
//!
//! With `--json` the last line is `{"quality": {"recall", "precision",
//! "hallucination_rate", "items", "sessions"}, "raw": {…}, "speed": {"runs",
//! "parsed", "truncated", "failed", "mean_secs"}, "backend"}`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::bail;
use clap::Args;
use serde::Deserialize;
use serde_json::{json, Value};

use kirocrew_actors::consolidator::grounding::{
    claim_stems, ground_answer, semantic_claim, Evidence,
};
use kirocrew_actors::consolidator::prompt::{system_prompt, user_prompt};
use kirocrew_actors::consolidator::{
    answer_schema, apply_caps, parse_answer, ConsolidationAnswer, ConsolidationPath,
};
use kirocrew_actors::embedder::vector::cosine;
use kirocrew_actors::llm::{
    LlmClient, LlmRequest, LocalChat, LocalChatConfig, OpenAiClient, OpenAiConfig, SharedLlm,
};
use kirocrew_actors::transcripts::{Role, Turn};

use super::bench_locomo::read_jsonl;
use super::failed_runs::FailedRuns;

/// Claim-word F1 at which an item matches a gold observation.
pub(super) const MATCH_F1: f64 = 0.4;
/// Cosine at which an item matches a gold observation (`--embed-model`).
pub(super) const MATCH_COSINE: f32 = 0.7;
/// Cosine at which one turn supports an item (`--embed-model`).
pub(super) const SUPPORT_COSINE: f32 = 0.6;

/// Options of `kirocrew bench consolidate`.
#[derive(Debug, Args)]
pub struct ConsolidateArgs {
    /// The LoCoMo folder (`memories.jsonl`, `observations.jsonl`).
    #[arg(long, default_value = "../shared/bench/locomo")]
    pub data: PathBuf,
    /// Sessions measured (in conversation order), at most.
    #[arg(long, default_value_t = 8)]
    pub sessions: usize,
    /// A local chat GGUF (the default: the shared test model).
    #[arg(long, conflicts_with = "endpoint")]
    pub model: Option<PathBuf>,
    /// An OpenAI-compatible endpoint (base URL, e.g. http://127.0.0.1:8080/v1).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// The model name sent to `--endpoint`.
    #[arg(long, default_value = "default", requires = "endpoint")]
    pub endpoint_model: String,
    /// An embedding GGUF for the judge (cosine matches and support).
    #[arg(long)]
    pub embed_model: Option<PathBuf>,
    /// llama.cpp threads for a local model.
    #[arg(long, default_value_t = 1)]
    pub threads: i32,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Deserialize)]
struct Memory {
    conv: u32,
    session: u32,
    speaker: String,
    text: String,
    #[serde(default)]
    image_caption: Option<String>,
}

#[derive(Deserialize)]
struct Observation {
    conv: u32,
    session: u32,
    text: String,
}

/// One session: its turns and its gold observations.
struct Session {
    turns: Vec<Turn>,
    gold: Vec<String>,
}

fn sessions(args: &ConsolidateArgs) -> anyhow::Result<Vec<((u32, u32), Session)>> {
    let memories: Vec<Memory> = read_jsonl(&args.data.join("memories.jsonl"))?;
    let observations: Vec<Observation> = read_jsonl(&args.data.join("observations.jsonl"))?;
    let mut first_speaker: BTreeMap<u32, String> = BTreeMap::new();
    let mut out: BTreeMap<(u32, u32), Session> = BTreeMap::new();
    for m in memories {
        let opener = first_speaker
            .entry(m.conv)
            .or_insert_with(|| m.speaker.clone());
        let role = if *opener == m.speaker {
            Role::User
        } else {
            Role::Assistant
        };
        let text = match &m.image_caption {
            Some(caption) => format!("{} [shares a photo: {caption}]", m.text),
            None => m.text,
        };
        out.entry((m.conv, m.session))
            .or_insert_with(|| Session {
                turns: Vec::new(),
                gold: Vec::new(),
            })
            .turns
            .push(Turn {
                ts: String::new(),
                role,
                text,
                channel_id: None,
                sender: Some(m.speaker),
                source_id: None,
            });
    }
    for o in observations {
        if let Some(s) = out.get_mut(&(o.conv, o.session)) {
            s.gold.push(o.text);
        }
    }
    let out: Vec<_> = out
        .into_iter()
        .filter(|(_, s)| !s.gold.is_empty())
        .take(args.sessions)
        .collect();
    if out.is_empty() {
        bail!(
            "no session with gold observations in {}",
            args.data.display()
        );
    }
    Ok(out)
}

fn backend(args: &ConsolidateArgs) -> anyhow::Result<(SharedLlm, Option<LocalChat>, String)> {
    if let Some(url) = &args.endpoint {
        let config = OpenAiConfig::new(url, &args.endpoint_model);
        let name = format!("endpoint {url} ({})", args.endpoint_model);
        return Ok((std::sync::Arc::new(OpenAiClient::new(config)), None, name));
    }
    let path = args
        .model
        .clone()
        .unwrap_or_else(|| PathBuf::from("../shared/models/smollm2-135m-instruct-q4_1.gguf"));
    if !path.is_file() {
        bail!("--model {} is not a file", path.display());
    }
    let mut config = LocalChatConfig::new(path.clone());
    config.n_threads = args.threads.max(1);
    let chat = LocalChat::new(config);
    if !chat.wait_ready(Duration::from_secs(300)) {
        bail!("the chat model did not load: {:?}", chat.info().error);
    }
    let name = format!("local {}", path.display());
    Ok((std::sync::Arc::new(chat.clone()), Some(chat), name))
}

/// The items an answer would write, as judged text.
fn items(answer: &ConsolidationAnswer) -> Vec<String> {
    let semantic = answer.semantic.iter().map(|i| {
        format!(
            "{} {}",
            i.key.replace(['.', '_'], " "),
            semantic_claim(&i.key, &i.value)
        )
    });
    let episodic = answer.episodic.iter().map(|i| i.text.clone());
    let lessons = answer.lessons.iter().map(|i| i.rule.clone());
    semantic.chain(episodic).chain(lessons).collect()
}

/// F1 of two claims' content stems.
fn claim_f1(a: &[String], b: &[String]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let common = a.iter().filter(|s| b.contains(s)).count() as f64;
    if common == 0.0 {
        return 0.0;
    }
    let p = common / a.len() as f64;
    let r = common / b.len() as f64;
    2.0 * p * r / (p + r)
}

/// Vectors for the judge, when it has a model.
struct Judge {
    embedder: Option<(
        kirocrew_actors::embedder::EmbedderHandle,
        actix_rt::SystemRunner,
    )>,
}

impl Judge {
    fn vectors(&self, texts: &[String]) -> anyhow::Result<Option<Vec<Vec<f32>>>> {
        let Some((embedder, system)) = &self.embedder else {
            return Ok(None);
        };
        let v = system.block_on(super::bench_screening::embed_all(embedder, texts.to_vec()))?;
        Ok(Some(v))
    }
}

/// Counts for one stage (raw or written).
#[derive(Debug, Default, Clone, Copy)]
struct Quality {
    items: usize,
    matched_or_supported: usize,
    gold: usize,
    gold_matched: usize,
}

impl Quality {
    fn json(&self, sessions: usize) -> Value {
        let share = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        json!({
            "recall": share(self.gold_matched, self.gold),
            "precision": share(self.matched_or_supported, self.items),
            "hallucination_rate": share(self.items - self.matched_or_supported, self.items),
            "items": self.items,
            "sessions": sessions,
        })
    }
}

/// Judges `items` of one session against its gold and turns.
fn judge(judge: &Judge, items: &[String], session: &Session) -> anyhow::Result<Quality> {
    let item_stems: Vec<Vec<String>> = items.iter().map(|i| claim_stems(i)).collect();
    let gold_stems: Vec<Vec<String>> = session.gold.iter().map(|g| claim_stems(g)).collect();
    let turn_texts: Vec<String> = session.turns.iter().map(|t| t.text.clone()).collect();
    let vectors = match judge.vectors(items)? {
        Some(iv) => Some((
            iv,
            judge.vectors(&session.gold)?.unwrap_or_default(),
            judge.vectors(&turn_texts)?.unwrap_or_default(),
        )),
        None => None,
    };
    let mut q = Quality {
        items: items.len(),
        gold: session.gold.len(),
        ..Quality::default()
    };
    let mut gold_hit = vec![false; session.gold.len()];
    for (i, stems) in item_stems.iter().enumerate() {
        let mut ok = false;
        for (g, gs) in gold_stems.iter().enumerate() {
            let by_vector = vectors
                .as_ref()
                .is_some_and(|(iv, gv, _)| cosine(&iv[i], &gv[g]) >= MATCH_COSINE);
            if claim_f1(stems, gs) >= MATCH_F1 || by_vector {
                gold_hit[g] = true;
                ok = true;
            }
        }
        if !ok {
            ok = match &vectors {
                Some((iv, _, tv)) => tv.iter().any(|t| cosine(&iv[i], t) >= SUPPORT_COSINE),
                None => session.turns.iter().any(|t| {
                    let turn = Evidence::new([t.text.as_str()], []);
                    let s = turn.support(&items[i]);
                    s.total > 0 && s.ratio() >= 0.5
                }),
            };
        }
        q.matched_or_supported += usize::from(ok);
    }
    q.gold_matched = gold_hit.iter().filter(|h| **h).count();
    Ok(q)
}

fn add(a: &mut Quality, b: Quality) {
    a.items += b.items;
    a.matched_or_supported += b.matched_or_supported;
    a.gold += b.gold;
    a.gold_matched += b.gold_matched;
}

/// Runs the bench.
pub(super) fn run(args: ConsolidateArgs) -> anyhow::Result<ExitCode> {
    let sessions = sessions(&args)?;
    let (llm, local, name) = backend(&args)?;
    let judge_model = match &args.embed_model {
        Some(path) => {
            let system = actix_rt::System::new();
            let embedder = system.block_on(crate::commands::embedding::embedder_for(path))?;
            Some((embedder, system))
        }
        None => None,
    };
    let judge_with = Judge {
        embedder: judge_model,
    };
    let (mut raw, mut written) = (Quality::default(), Quality::default());
    let mut failures = FailedRuns::default();
    let (mut runs, mut parsed) = (0usize, 0usize);
    let started = Instant::now();
    for ((conv, number), session) in &sessions {
        let evidence = Evidence::from_turns(&session.turns, &[]);
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for path in [ConsolidationPath::History, ConsolidationPath::Prefs] {
            let request = LlmRequest {
                system: system_prompt(path, false),
                user: user_prompt(&session.turns, None, 6_000),
                schema: answer_schema(path, false),
                max_tokens: 1_536,
            };
            runs += 1;
            let t = Instant::now();
            let outcome = match llm.complete(&request) {
                Ok(text) => match parse_answer(&text, path, false) {
                    Ok(mut answer) => {
                        parsed += 1;
                        before.extend(items(&answer));
                        let dropped = ground_answer(&mut answer, &evidence, None);
                        apply_caps(&mut answer);
                        after.extend(items(&answer));
                        format!("parsed, {} ungrounded dropped", dropped.len())
                    }
                    Err(e) => {
                        failures.failed += 1;
                        format!("refused: {e}")
                    }
                },
                Err(e) => failures.record(&e),
            };
            println!(
                "conv {conv} session {number} {path:?}: {outcome} in {:.1} s",
                t.elapsed().as_secs_f64()
            );
        }
        add(&mut raw, judge(&judge_with, &before, session)?);
        add(&mut written, judge(&judge_with, &after, session)?);
    }
    let secs = started.elapsed().as_secs_f64();
    let n = sessions.len();
    let FailedRuns { truncated, failed } = failures;
    let report = json!({
        "quality": written.json(n),
        "raw": raw.json(n),
        "speed": {"runs": runs, "parsed": parsed, "truncated": truncated, "failed": failed,
                  "mean_secs": secs / runs.max(1) as f64},
        "backend": name,
    });
    println!(
        "{n} sessions, {runs} runs ({parsed} parsed, {truncated} truncated, {failed} failed), {:.1} s each",
        secs / runs.max(1) as f64
    );
    for (stage, q) in [
        ("written", &report["quality"]),
        ("before grounding", &report["raw"]),
    ] {
        println!(
            "{stage}: {} items, recall {:.3}, precision {:.3}, hallucination rate {:.3}",
            q["items"],
            q["recall"].as_f64().unwrap_or(0.0),
            q["precision"].as_f64().unwrap_or(0.0),
            q["hallucination_rate"].as_f64().unwrap_or(0.0)
        );
    }
    if args.json {
        println!("{report}");
    }
    if let Some(chat) = local {
        chat.close();
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_f1_is_symmetric_and_bounded() {
        let a = claim_stems("Caroline went to an LGBTQ support group.");
        let b = claim_stems("Caroline attended an LGBTQ support group recently.");
        let f = claim_f1(&a, &b);
        assert!((claim_f1(&b, &a) - f).abs() < 1e-9);
        assert!(f > MATCH_F1 && f < 1.0, "{f}");
        assert!(claim_f1(&a, &[]).abs() < 1e-12);
        assert!((claim_f1(&a, &a) - 1.0).abs() < 1e-9);
    }
}
