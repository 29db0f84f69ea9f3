//! `kirocrew bench consolidate`: the local chat model on a 30-message
//! session — consolidations per minute and the share of model answers
//! that parse against the path's schema (100 % expected with the grammar).
//! Each run is one model answer for the prefs path (with the Markdown
//! documents) or the history path, alternating, parsed and capped exactly
//! as the consolidator does; the store writes are not part of the number.
//! With `--json` the last line is `{"runs", "parsed", "truncated",
//! "failed", "per_minute", "mean_secs"}`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::bail;
use clap::Args;
use serde_json::json;

use kirocrew_actors::consolidator::prompt::{system_prompt, user_prompt};
use kirocrew_actors::consolidator::{answer_schema, apply_caps, parse_answer, ConsolidationPath};
use kirocrew_actors::llm::{LlmClient, LlmRequest, LocalChat, LocalChatConfig};
use kirocrew_actors::transcripts::{Role, Turn};

use super::bench::FailedRuns;

/// Options of `kirocrew bench consolidate`.
#[derive(Debug, Args)]
pub struct ConsolidateArgs {
    /// The chat GGUF.
    #[arg(
        long,
        default_value = "../shared/models/smollm2-135m-instruct-q4_1.gguf"
    )]
    pub model: PathBuf,
    /// Model answers measured.
    #[arg(long, default_value_t = 6)]
    pub runs: usize,
    /// llama.cpp threads.
    #[arg(long, default_value_t = 1)]
    pub threads: i32,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// A 30-message session: preferences, a project, a correction.
fn session() -> Vec<Turn> {
    let lines = [
        "I prefer dark mode in every editor.",
        "Noted: dark mode.",
        "I use neovim with vim keybindings.",
        "I will suggest vim keybindings.",
        "We are building kirocrew, a Rust memory service.",
        "Got it, kirocrew in Rust.",
        "The deploy failed: you ran rm -rf build in the wrong folder.",
        "Sorry, I will check the folder first.",
        "Always run the build from the repository root.",
        "Understood, repository root from now on.",
    ];
    (0..30)
        .map(|i| Turn {
            ts: String::new(),
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            text: lines[i % lines.len()].to_owned(),
            channel_id: None,
            sender: None,
            source_id: None,
        })
        .collect()
}

/// Runs the bench.
pub(super) fn run(args: ConsolidateArgs) -> anyhow::Result<ExitCode> {
    if !args.model.is_file() {
        bail!("--model {} is not a file", args.model.display());
    }
    let mut config = LocalChatConfig::new(args.model.clone());
    config.n_threads = args.threads.max(1);
    let chat = LocalChat::new(config);
    if !chat.wait_ready(Duration::from_secs(300)) {
        bail!("the chat model did not load: {:?}", chat.info().error);
    }
    let turns = session();
    let mut parsed = 0;
    let mut failures = FailedRuns::default();
    let started = Instant::now();
    for i in 0..args.runs {
        let (path, markdown) = if i % 2 == 0 {
            (ConsolidationPath::Prefs, true)
        } else {
            (ConsolidationPath::History, false)
        };
        let documents = markdown.then_some(("", ""));
        let request = LlmRequest {
            system: system_prompt(path, markdown),
            user: user_prompt(&turns, documents, 6_000),
            schema: answer_schema(path, markdown),
            max_tokens: 1_536,
        };
        let t = Instant::now();
        let outcome = match chat.complete(&request) {
            Ok(text) => match parse_answer(&text, path, markdown) {
                Ok(mut answer) => {
                    apply_caps(&mut answer);
                    parsed += 1;
                    "parsed".to_owned()
                }
                Err(e) => {
                    failures.failed += 1;
                    format!("refused: {e}")
                }
            },
            Err(e) => failures.record(&e),
        };
        println!(
            "run {} {:?}: {outcome} in {:.1} s",
            i + 1,
            path,
            t.elapsed().as_secs_f64()
        );
    }
    let secs = started.elapsed().as_secs_f64();
    let runs = args.runs.max(1) as f64;
    let per_minute = 60.0 * runs / secs.max(1e-9);
    let FailedRuns { truncated, failed } = failures;
    println!(
        "{} runs: {parsed} parsed, {truncated} truncated, {failed} failed; {per_minute:.2} consolidations/min ({:.1} s each)",
        args.runs,
        secs / runs
    );
    if args.json {
        println!(
            "{}",
            json!({"runs": args.runs, "parsed": parsed, "truncated": truncated, "failed": failed,
                   "per_minute": per_minute, "mean_secs": secs / runs})
        );
    }
    chat.close();
    Ok(ExitCode::SUCCESS)
}
