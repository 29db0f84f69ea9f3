//! `kirocrew bench context`: latency of the context builder on a realistic
//! data home — 10,000 episodic memories (LoCoMo turns, repeated with
//! different dates to reach the count), 1,000 semantic rows, 200 lessons
//! 100 skills and 180 days of Markdown history — for `build_session_context` and
//! `build_message` (first message, so episodic retrieval runs), with and
//! without the query embed. Queries are distinct LoCoMo questions so the
//! embedding cache never answers for the model. With `--json` the last
//! line is `{"build_session_context": {"no_embed": {"p50_ms", "p95_ms"},
//! "embed": {...}}, "build_message": {...}}`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use chrono::{Duration as Days, Utc};
use clap::Args;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::context::{
    build_message, build_session_context, ContextSources, MessageRequest, SessionRequest,
};
use crate::home::DataHome;
use kirocrew_actors::clock::format_ts;
use kirocrew_actors::vector_store::lessons::{LessonCategory, LessonWrite};
use kirocrew_actors::vector_store::{run_backfill, VectorStoreHandle};

/// Options of `kirocrew bench context`.
#[derive(Debug, Args)]
pub struct ContextArgs {
    /// The LoCoMo folder (memories.jsonl, queries.jsonl).
    #[arg(long, default_value = "../shared/bench/locomo")]
    pub data: PathBuf,
    /// Embedding model (GGUF) for the "embed" runs; without it only the
    /// no-embed runs are measured.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Builds measured per case.
    #[arg(long, default_value_t = 200)]
    pub iterations: usize,
    /// Episodic memories in the home.
    #[arg(long, default_value_t = 10_000)]
    pub episodic: usize,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// One LoCoMo memory line.
#[derive(Deserialize)]
pub(super) struct Turn {
    text: String,
}

/// One LoCoMo question.
#[derive(Deserialize)]
pub(super) struct Question {
    pub(super) question: String,
}

/// A JSONL file of the benchmark data.
fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &std::path::Path) -> anyhow::Result<Vec<T>> {
    std::fs::read_to_string(path)
        .with_context(|| format!("reading {}", path.display()))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).context("a line of the benchmark data"))
        .collect()
}

/// What a benchmark on a seeded home starts from.
pub(super) struct BenchInputs {
    /// The LoCoMo memories.
    pub(super) turns: Vec<Turn>,
    /// The LoCoMo questions.
    pub(super) questions: Vec<Question>,
    /// The temporary data home's folder (removed when dropped).
    pub(super) dir: tempfile::TempDir,
    /// The data home in it.
    pub(super) home: DataHome,
}

/// Reads the LoCoMo data (at least `min_questions` questions), checks the
/// model path, and makes an empty temporary data home.
pub(super) fn bench_inputs(
    data: &std::path::Path,
    model: Option<&std::path::Path>,
    min_questions: usize,
) -> anyhow::Result<BenchInputs> {
    let turns: Vec<Turn> = read_jsonl(&data.join("memories.jsonl"))?;
    let questions: Vec<Question> = read_jsonl(&data.join("queries.jsonl"))?;
    if turns.is_empty() || questions.len() < min_questions {
        bail!("{} holds too little data", data.display());
    }
    if let Some(m) = model {
        if !m.is_file() {
            bail!("--model {} is not a file", m.display());
        }
    }
    let dir = tempfile::tempdir()?;
    let home = DataHome::resolve(Some(dir.path().to_path_buf()))?;
    home.ensure()?;
    Ok(BenchInputs {
        turns,
        questions,
        dir,
        home,
    })
}

/// Runs the benchmark.
pub(super) fn run(args: ContextArgs) -> anyhow::Result<ExitCode> {
    crate::telemetry::init(false, "warn");
    let BenchInputs {
        turns,
        questions,
        dir: _dir,
        home,
    } = bench_inputs(&args.data, args.model.as_deref(), 4)?;
    let report = actix_rt::System::new().block_on(measure(&args, &home, &turns, &questions))?;
    if args.json {
        println!("{report}");
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(ExitCode::SUCCESS)
}

async fn measure(
    args: &ContextArgs,
    home: &DataHome,
    turns: &[Turn],
    questions: &[Question],
) -> anyhow::Result<Value> {
    let settings = crate::config::load(home.root(), Vec::<(String, String)>::new())?.settings;
    let local = crate::app::builders::open_local_store(home, &settings, false).await?;
    let store = local.store.clone();
    let seeded = Instant::now();
    seed(home, &store, turns, args.episodic).await?;
    let mut report = json!({"seed_secs": seeded.elapsed().as_secs_f64()});

    let keyword = crate::app::builders::local_context_sources(home, &settings, store.clone())?;
    let mut cases = json!({});
    cases["no_embed"] = run_cases(&keyword, questions, args.iterations).await;
    report["session_parts_no_embed"] = parts(&keyword, questions, args.iterations.min(100)).await;
    if let Some(model) = &args.model {
        let embedder = crate::commands::embedding::embedder_for(model).await?;
        let embedded_store = store.clone().with_ready_embedder(embedder).await?;
        let swept = Instant::now();
        let done = run_backfill(&embedded_store, false).await?;
        report["embedded_rows"] = json!(done);
        report["embed_sweep_secs"] = json!(swept.elapsed().as_secs_f64());
        let mut sources =
            crate::app::builders::local_context_sources(home, &settings, embedded_store)?;
        // The embed's own cost is what is measured: no deadline cuts it.
        sources.settings.embed_deadline = Duration::from_secs(30);
        cases["embed"] = run_cases(&sources, questions, args.iterations).await;
        let _ = sources.files.close().await;
    }
    for (build, key) in [
        ("build_session_context", "session"),
        ("build_message", "message"),
    ] {
        let mut by_mode = json!({});
        for mode in ["no_embed", "embed"] {
            if let Some(c) = cases.get(mode) {
                by_mode[mode] = c[key].clone();
            }
        }
        report[build] = by_mode;
    }
    if let Some(receipt) = cases["no_embed"].get("sample_receipt") {
        report["sample_receipt"] = receipt.clone();
    }
    // Close inside the runtime: the pools must not outlive it.
    let _ = keyword.files.close().await;
    let _ = local.close().await;
    Ok(report)
}

/// Times both builds `n` times, each with its own question.
async fn run_cases(src: &ContextSources, questions: &[Question], n: usize) -> Value {
    let mut session = Vec::with_capacity(n);
    let mut message = Vec::with_capacity(n);
    let mut sample = Value::Null;
    for i in 0..n {
        let q1 = &questions[(2 * i) % questions.len()].question;
        let q2 = &questions[(2 * i + 1) % questions.len()].question;
        let t = Instant::now();
        let built = build_session_context(
            src,
            &SessionRequest {
                session_key: format!("bench:{i}"),
                message: q1.clone(),
                ..SessionRequest::default()
            },
        )
        .await;
        session.push(t.elapsed());
        if i == 0 {
            sample = summarize(&built.receipt);
        }
        let t = Instant::now();
        let _ = build_message(
            src,
            &MessageRequest {
                session_key: format!("bench:{i}"),
                text: q2.clone(),
                first_message: Some(true),
                actor: "bench".into(),
                ..MessageRequest::default()
            },
        )
        .await;
        message.push(t.elapsed());
    }
    json!({"session": stats(session), "message": stats(message), "sample_receipt": sample})
}

/// Where a session build's time goes: each source asked alone, in turn
/// (the build asks them concurrently, so these add up to more than it).
async fn parts(src: &ContextSources, questions: &[Question], n: usize) -> Value {
    use kirocrew_actors::memory_files::ContextCaps;
    let caps = crate::context::caps::resolve_caps(None);
    let mut times: std::collections::BTreeMap<&str, Vec<Duration>> = Default::default();
    for i in 0..n {
        let q = &questions[(2 * i) % questions.len()].question;
        let none = kirocrew_actors::vector_store::QueryEmbedding::none();
        let mut time =
            |name: &'static str, t: Instant| times.entry(name).or_default().push(t.elapsed());
        let t = Instant::now();
        let _ = src.store.semantic_block(q, caps.semantic, &none).await;
        time("semantic", t);
        let t = Instant::now();
        let _ = src
            .store
            .episodic_block(q, caps.episodic_inject(), &none)
            .await;
        time("episodic", t);
        let t = Instant::now();
        let _ = src.store.lessons_block(q, caps.lessons, &none).await;
        time("lessons", t);
        let t = Instant::now();
        let _ = src
            .files
            .context(ContextCaps {
                preferences: caps.preferences,
                projects: caps.projects,
                history: caps.daily_history,
            })
            .await;
        time("markdown_layers", t);
        let t = Instant::now();
        let _ = src.skills.session_skills(caps.skills).await;
        time("skills", t);
        let t = Instant::now();
        let _ = src.transcripts.sessions().await;
        time("transcripts", t);
    }
    Value::Object(
        times
            .into_iter()
            .map(|(k, v)| (k.to_owned(), stats(v)))
            .collect(),
    )
}

fn summarize(receipt: &crate::context::Receipt) -> Value {
    let sections: Vec<Value> = receipt
        .sections
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "chars": s.chars,
                "cap": s.cap,
                "items": s.items.len(),
                "included": s.items.iter().filter(|i| i.included).count(),
            })
        })
        .collect();
    json!({"total_chars": receipt.total_chars, "ceiling": receipt.ceiling, "query_embedding": receipt.query_embedding, "sections": sections})
}

/// p50 / p95 / max of `samples`, in ms.
pub(super) fn stats(mut samples: Vec<Duration>) -> Value {
    samples.sort();
    let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
    let at = |p: f64| {
        let i = ((p / 100.0) * (samples.len().saturating_sub(1)) as f64).round() as usize;
        samples.get(i).copied().map_or(0.0, ms)
    };
    json!({"p50_ms": at(50.0), "p95_ms": at(95.0), "max_ms": samples.last().copied().map_or(0.0, ms), "n": samples.len()})
}

/// A pronounceable word unique to `n` (syllables spell its digits).
fn pseudo_word(n: usize) -> String {
    const SYLLABLES: [&str; 10] = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pu"];
    let mut n = n * 7_919 + 104_729;
    let mut word = String::new();
    while n > 0 {
        word.push_str(SYLLABLES[n % 10]);
        n /= 10;
    }
    word
}

/// Fills the home: episodic and semantic rows through the import path (one
/// write each, no vectors; the sweep embeds them when a model is given),
/// lessons through the lesson writer, and 180 daily history files.
pub(super) async fn seed(
    home: &DataHome,
    store: &VectorStoreHandle,
    turns: &[Turn],
    episodic: usize,
) -> anyhow::Result<()> {
    let now = Utc::now();
    let episodes: Vec<Value> = (0..episodic)
        .map(|i| {
            let turn = &turns[i % turns.len()];
            let copy = i / turns.len();
            let text = if copy == 0 {
                turn.text.clone()
            } else {
                format!("(retold {copy}) {}", turn.text)
            };
            json!({
                "text": text,
                "importance": 0.3 + 0.1 * (i % 5) as f64,
                "created_at": format_ts(now - Days::minutes((episodic - i) as i64 * 20)),
            })
        })
        .collect();
    let topics = [
        "editor",
        "shell",
        "language",
        "timezone",
        "team",
        "theme",
        "city",
        "framework",
        "database",
        "cloud",
    ];
    let semantic: Vec<Value> = (0..1_000)
        .map(|i| {
            let ns = ["pref", "project", "user"][i % 3];
            let topic = topics[i % topics.len()];
            json!({
                "key": format!("{ns}.{topic}_{i}"),
                "value": format!("{topic} choice number {i} noted during session {}", i % 37),
                "confidence": 0.9,
                "source": "consolidation",
                "created_at": format_ts(now),
                "updated_at": format_ts(now),
            })
        })
        .collect();
    let document = json!({
        "format": "kirocrew-memory-export",
        "version": 2,
        "exported_at": format_ts(now),
        "semantic": semantic,
        "episodic": episodes,
    });
    store.import_json(&document.to_string()).await?;
    for i in 0..200 {
        // Words of their own per lesson, so the topic-overlap dedup keeps
        // all 200 (real lessons are about different things).
        let w = |k: usize| pseudo_word(i * 31 + k);
        let rule = format!(
            "When {} reports {} failures, run {} before {} and note the {} in {}",
            w(0),
            w(1),
            w(2),
            w(3),
            w(4),
            w(5)
        );
        let _ = store
            .write_lesson(LessonWrite {
                rule,
                negative: None,
                category: LessonCategory::Knowledge,
                source: "user_explicit".into(),
                confidence: 1.0,
            })
            .await;
    }
    for i in 0..100 {
        let name = format!("tool-{}", pseudo_word(i + 7_000));
        let dir = home.skills_dir().join(&name);
        std::fs::create_dir_all(&dir)?;
        let always = if i < 2 { "always: true\n" } else { "" };
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Helps with {} and {} tasks\ntriggers: [{}, {}]\n{always}---\n# {name}\n\n{}\n",
                pseudo_word(i),
                pseudo_word(i + 1),
                pseudo_word(i + 2),
                pseudo_word(i + 3),
                "Step by step instructions for this tool. ".repeat(20)
            ),
        )?;
    }
    let history = home.memory_dir().join("history");
    std::fs::create_dir_all(&history)?;
    for day in 0..180 {
        let date = (now - Days::days(day)).format("%Y-%m-%d");
        let body: String = (0..4)
            .map(|k| {
                let turn = &turns[(day as usize * 4 + k) % turns.len()];
                format!("- {}\n", turn.text.chars().take(200).collect::<String>())
            })
            .collect();
        std::fs::write(
            history.join(format!("{date}.md")),
            format!("# {date}\n\n{body}"),
        )?;
    }
    Ok(())
}
