//! `kirocrew bench embed`: embedding throughput of a GGUF model, one text
//! per call versus batches of 32, for short (~10-word) and long
//! (~2,000-character) texts. It calls the llama.cpp backend directly, so
//! the embedding cache never answers for the model.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use kirocrew_actors::embedder::{
    EmbedKind, EmbeddingBackend, LlamaConfig, LlamaCppBackend, Weights,
};

/// `kirocrew bench …`
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Embeddings per second, single calls vs batches of 32.
    Embed(EmbedArgs),
    /// Episodic retrieval recall on the LoCoMo dev split.
    Locomo(super::bench_locomo::LocomoArgs),
    /// Context builder latency on a realistic data home.
    Context(super::bench_context::ContextArgs),
    /// The memory loop end to end: LoCoMo conversations replayed through
    /// the hook adapter and the gateway, consolidated, then asked.
    Loop(super::bench_loop::LoopArgs),
    /// Local chat model consolidations per minute and parse rate.
    Consolidate(super::bench_consolidate::ConsolidateArgs),
    /// Local chat model thread-history summaries: seconds each, share usable.
    Compress(super::bench_compress::CompressArgs),
    /// `hook claude-code` latency for UserPromptSubmit, process start included.
    Hooks(super::bench_hooks::HooksArgs),
    /// Operator console round trip, audit fan-out to 50 subscribers, and
    /// the memory a stalled subscriber holds.
    Console(super::bench_console::ConsoleArgs),
    /// Injection screening recall and false positives on labelled sets,
    /// with the similarity layer's threshold curve when given a model.
    Screening(super::bench_screening::ScreeningArgs),
}

/// Options of `kirocrew bench embed`.
#[derive(Debug, Args)]
pub struct EmbedArgs {
    /// The GGUF model file.
    #[arg(long)]
    pub model: PathBuf,
    /// llama.cpp threads per context.
    #[arg(long, default_value_t = 1)]
    pub threads: i32,
    /// Worker contexts a batch is spread over.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Seconds to measure each case.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Which texts to measure.
    #[arg(long, value_enum, default_value_t = TextSet::All)]
    pub texts: TextSet,
    /// Weights to compute with (auto: BF16 for an F16 file when llama.cpp
    /// has AVX512-BF16 kernels).
    #[arg(long, value_enum, default_value_t = WeightsArg::Auto)]
    pub weights: WeightsArg,
    /// Token budget of one decode call when packing a batch.
    #[arg(long)]
    pub batch_tokens: Option<usize>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Text sets of `--texts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextSet {
    /// Short and long.
    All,
    /// ~10-word texts only.
    Short,
    /// ~2,000-character texts only.
    Long,
}

/// `--weights`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WeightsArg {
    /// BF16 when it pays, else as stored.
    Auto,
    /// The file as stored.
    Stored,
    /// BF16 for an F16 file, always.
    Bf16,
}

const BATCH: usize = 32;

const SUBJECTS: &[&str] = &[
    "The user",
    "Our team",
    "My manager",
    "The new intern",
    "A customer",
    "The build server",
    "Her cat",
    "The release",
];
const VERBS: &[&str] = &[
    "prefers",
    "reviewed",
    "deployed",
    "forgot",
    "scheduled",
    "rewrote",
    "tested",
    "archived",
];
const OBJECTS: &[&str] = &[
    "the dark editor theme",
    "a flaky integration test",
    "the quarterly sales report",
    "the Rust borrow checker notes",
    "a trip to Lisbon in May",
    "the database migration plan",
    "their favourite pasta recipe",
    "the onboarding checklist",
];

/// ~10-word texts, all distinct.
fn short_texts() -> Vec<String> {
    (0..BATCH)
        .map(|i| {
            format!(
                "{} {} {} on day {}.",
                SUBJECTS[i % SUBJECTS.len()],
                VERBS[(i / 2) % VERBS.len()],
                OBJECTS[(i * 3) % OBJECTS.len()],
                i + 1
            )
        })
        .collect()
}

/// ~2,000-character texts, all distinct.
fn long_texts() -> Vec<String> {
    (0..BATCH)
        .map(|i| {
            let mut text = String::new();
            let mut j = i;
            while text.len() < 2000 {
                text.push_str(&format!(
                    "{} {} {} while discussing item {}. ",
                    SUBJECTS[j % SUBJECTS.len()],
                    VERBS[(j / 3) % VERBS.len()],
                    OBJECTS[(j * 5) % OBJECTS.len()],
                    j
                ));
                j += 7;
            }
            text.truncate(2000);
            text
        })
        .collect()
}

/// Embeds `texts` repeatedly for about `budget`; returns embeddings/s.
fn measure(
    backend: &LlamaCppBackend,
    texts: &[String],
    batched: bool,
    budget: Duration,
) -> anyhow::Result<f64> {
    let started = Instant::now();
    let mut done = 0usize;
    while started.elapsed() < budget {
        if batched {
            done += backend.embed_batch(texts, EmbedKind::Document)?.len();
        } else {
            for text in texts {
                backend.embed(text, EmbedKind::Document)?;
                done += 1;
            }
        }
    }
    Ok(done as f64 / started.elapsed().as_secs_f64())
}

/// Runs a bench command.
pub(crate) fn run(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    let args = match cmd {
        BenchCommand::Embed(args) => args,
        BenchCommand::Locomo(args) => return super::bench_locomo::run(args),
        BenchCommand::Context(args) => return super::bench_context::run(args),
        BenchCommand::Consolidate(args) => return super::bench_consolidate::run(args),
        BenchCommand::Loop(args) => return super::bench_loop::run(args),
        BenchCommand::Compress(args) => return super::bench_compress::run(args),
        BenchCommand::Hooks(args) => return super::bench_hooks::run(args),
        BenchCommand::Console(args) => return super::bench_console::run(args),
        BenchCommand::Screening(args) => return super::bench_screening::run(args),
    };
    if !args.model.is_file() {
        bail!("--model {} is not a file", args.model.display());
    }
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        bail!("--seconds must be a positive number");
    }
    let mut config = LlamaConfig::new(args.model.clone());
    config.n_threads = args.threads.max(1);
    config.workers = args.workers.max(1);
    config.weights = match args.weights {
        WeightsArg::Auto => Weights::Auto,
        WeightsArg::Stored => Weights::Stored,
        WeightsArg::Bf16 => Weights::Bf16,
    };
    if let Some(tokens) = args.batch_tokens {
        config.batch_tokens = tokens.max(1);
    }
    let backend = LlamaCppBackend::new(config);
    let loading = Instant::now();
    if !backend.wait_ready(Duration::from_secs(600)) {
        let error = backend.status().error.unwrap_or_default();
        bail!("the model did not load: {error}");
    }
    let load_ms = loading.elapsed().as_secs_f64() * 1000.0;
    let budget = Duration::from_secs_f64(args.seconds);
    let short = short_texts();
    let long = long_texts();
    // Warm-up: first decodes allocate buffers.
    backend
        .embed_batch(&short, EmbedKind::Document)
        .context("warm-up")?;
    let mut results = Vec::new();
    for (kind, texts) in [("short", &short), ("long", &long)] {
        let wanted = match args.texts {
            TextSet::All => true,
            TextSet::Short => kind == "short",
            TextSet::Long => kind == "long",
        };
        if wanted {
            results.push((kind, "single", measure(&backend, texts, false, budget)?));
            results.push((kind, "batch32", measure(&backend, texts, true, budget)?));
        }
    }
    let model_id = backend.model_id();
    let weights = backend.status().weights.unwrap_or("stored");
    let cpu = kirocrew_actors::embedder::cpu_backend()
        .map(|c| c.kernels())
        .unwrap_or_default();
    backend.close();
    if args.json {
        let rates: serde_json::Map<String, serde_json::Value> = results
            .iter()
            .map(|(kind, mode, rate)| (format!("{kind}_{mode}"), json!(rate)))
            .collect();
        println!(
            "{}",
            json!({"model": model_id, "threads": args.threads, "workers": args.workers,
                   "weights": weights, "cpu_features": cpu, "load_ms": load_ms, "embeddings_per_sec": rates})
        );
    } else {
        println!(
            "model {model_id} ({weights} weights), {} thread(s) per context, {} worker(s), load {load_ms:.0} ms",
            args.threads, args.workers
        );
        println!("llama.cpp CPU kernels: {cpu}");
        println!("{:<6} {:<8} {:>12}", "texts", "mode", "emb/s");
        for (kind, mode, rate) in &results {
            println!("{kind:<6} {mode:<8} {rate:>12.1}");
        }
        for kind in ["short", "long"] {
            let rate = |m: &str| {
                results
                    .iter()
                    .find(|r| r.0 == kind && r.1 == m)
                    .map_or(0.0, |r| r.2)
            };
            if rate("single") == 0.0 {
                continue;
            }
            println!(
                "{kind}: batch/single = {:.2}x",
                rate("batch32") / rate("single")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::failed_runs::FailedRuns;

    #[test]
    fn bench_texts_have_the_promised_shape() {
        let short = short_texts();
        assert_eq!(short.len(), BATCH);
        assert!(
            short
                .iter()
                .all(|t| (8..=14).contains(&t.split_whitespace().count())),
            "{short:?}"
        );
        let long = long_texts();
        assert!(long.iter().all(|t| t.len() == 2000));
        let distinct: std::collections::HashSet<_> = long.iter().collect();
        assert_eq!(distinct.len(), BATCH);
    }

    #[test]
    fn failed_runs_tell_a_cut_answer_from_a_broken_one() {
        use kirocrew_actors::llm::LlmError;
        let mut runs = FailedRuns::default();
        assert_eq!(runs.record(&LlmError::Truncated), "truncated");
        let line = runs.record(&LlmError::Malformed("not JSON".to_owned()));
        assert!(line.starts_with("failed: "), "{line}");
        assert_eq!((runs.truncated, runs.failed), (1, 1));
    }
}
