//! `kirocrew bench compress`: thread-history summaries on the local chat
//! model — seconds per summary and the share that come back usable.
//! Each run asks for one summary of a thread's middle exactly as the
//! context builder does (`context::summary_request`, `summarise`), on two
//! kinds of middle in turn: a varied project conversation, and the
//! repetitive one a long pasted log gives (where a small model tends to
//! loop). With `--json` the last line is `{"runs", "summaries",
//! "truncated", "failed", "mean_secs", "max_secs", "mean_chars"}`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::bail;
use clap::Args;
use serde_json::json;

use kirocrew_actors::llm::{LlmClient, LocalChat, LocalChatConfig};

use super::failed_runs::FailedRuns;

use crate::context::{summarise, summary_request, HistoryMessage};

/// Options of `kirocrew bench compress`.
#[derive(Debug, Args)]
pub struct CompressArgs {
    /// The chat GGUF.
    #[arg(
        long,
        default_value = "../shared/models/smollm2-135m-instruct-q4_1.gguf"
    )]
    pub model: PathBuf,
    /// Summaries measured.
    #[arg(long, default_value_t = 4)]
    pub runs: usize,
    /// llama.cpp threads.
    #[arg(long, default_value_t = 1)]
    pub threads: i32,
    /// The summary budget in chars (default: the 1M-window one, a quarter
    /// of the 44,550-char compressed-history cap).
    #[arg(long, default_value_t = 11_137)]
    pub budget: usize,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

const VARIED: [&str; 12] = [
    "We agreed to move the orders table from MySQL 5.7 to PostgreSQL 16 before the March release.",
    "The migration runs in three steps: schema copy with pgloader, a dual-write period, then the cut-over.",
    "Dana owns the dual-write code in services/orders/writer.rs; it must be idempotent on retries.",
    "The staging copy took 41 minutes for 380 GB, too slow for the 30-minute window we have.",
    "We will partition orders by month so the copy can run table by table in parallel.",
    "Open question: do the reporting jobs read from the replica or from the new primary during dual-write?",
    "The checksum script compares row counts and a blake3 digest per partition after each copy.",
    "Rollback plan: keep MySQL writable for 48 hours and switch the DSN back in config.toml.",
    "Foreign keys to customers are added after the copy, not before, to keep pgloader fast.",
    "The on-call rota for cut-over night is Dana, Omar and Li; the runbook is in docs/cutover.md.",
    "Sequences must be reset to max(id)+1 on every partition, or inserts fail after the switch.",
    "We decided against logical replication because the MySQL binlog format on prod is STATEMENT.",
];

/// The middle of a thread: `varied` project talk, or one sentence pasted
/// over and over (the shape of the context builder's own test).
fn middle(varied: bool) -> Vec<HistoryMessage> {
    (3..=12)
        .map(|i| {
            let role = if i % 2 == 1 { "user" } else { "assistant" };
            let text = if varied {
                (0..5)
                    .map(|k| VARIED[(i * 5 + k) % VARIED.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                let line = format!("Message {i}: we discussed the database migration step {i}. ");
                line.repeat(2_500 / line.len() + 1)
            };
            HistoryMessage {
                role: role.to_owned(),
                text,
            }
        })
        .collect()
}

/// Runs the bench.
pub(super) fn run(args: CompressArgs) -> anyhow::Result<ExitCode> {
    if !args.model.is_file() {
        bail!("--model {} is not a file", args.model.display());
    }
    if args.budget == 0 {
        bail!("--budget must be positive");
    }
    let mut config = LocalChatConfig::new(args.model.clone());
    config.n_threads = args.threads.max(1);
    let chat = LocalChat::new(config);
    if !chat.wait_ready(Duration::from_secs(300)) {
        bail!("the chat model did not load: {:?}", chat.info().error);
    }
    let mut summaries = 0usize;
    let mut failures = FailedRuns::default();
    let (mut total, mut worst, mut chars) = (0.0f64, 0.0f64, 0usize);
    for i in 0..args.runs {
        let varied = i % 2 == 0;
        let request = summary_request(&middle(varied), args.budget);
        let t = Instant::now();
        let outcome = match summarise(&chat, &request, args.budget) {
            Ok(summary) => {
                summaries += 1;
                let n = summary.chars().count();
                chars += n;
                // An excerpt, so a reader sees what came back, not only
                // how much: a looping model also fills its budget.
                let excerpt: String = summary.chars().take(160).collect();
                format!("{n} chars: {excerpt:?}")
            }
            Err(e) => failures.record(&e),
        };
        let secs = t.elapsed().as_secs_f64();
        total += secs;
        worst = worst.max(secs);
        let kind = if varied { "varied" } else { "repetitive" };
        println!("run {} {kind}: {outcome} in {secs:.1} s", i + 1);
    }
    let FailedRuns { truncated, failed } = failures;
    let runs = args.runs.max(1) as f64;
    let mean_chars = chars as f64 / summaries.max(1) as f64;
    println!(
        "{} runs: {summaries} summaries, {truncated} truncated, {failed} failed; {:.1} s each (worst {worst:.1} s), {mean_chars:.0} chars",
        args.runs,
        total / runs
    );
    if args.json {
        println!(
            "{}",
            json!({"runs": args.runs, "summaries": summaries, "truncated": truncated,
                   "failed": failed, "mean_secs": total / runs, "max_secs": worst,
                   "mean_chars": mean_chars})
        );
    }
    chat.close();
    Ok(ExitCode::SUCCESS)
}
