//! `kirocrew bench hooks`: what Claude Code waits for on every prompt —
//! `kirocrew hook claude-code` answering a `UserPromptSubmit` end to end,
//! process start included (the adapter is a new process per event) — on a
//! data home seeded as `bench context` seeds it (10,000 episodic
//! memories, 1,000 semantic rows, 200 lessons, 100 skills, 180 days of
//! history), against a real `kirocrew serve` started for it. Prompts are
//! distinct LoCoMo questions. With `--json` the last line is
//! `{"user_prompt_submit": {"p50_ms", "p95_ms", "max_ms", "n"}, ...}`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use serde_json::{json, Value};

use super::bench_context::{bench_inputs, seed, stats, BenchInputs};
use crate::daemon_client::Daemon;
use crate::home::DataHome;
use kirocrew_actors::vector_store::run_backfill;

/// Options of `kirocrew bench hooks`.
#[derive(Debug, Args)]
pub struct HooksArgs {
    /// The LoCoMo folder (memories.jsonl, queries.jsonl).
    #[arg(long, default_value = "../shared/bench/locomo")]
    pub data: PathBuf,
    /// Embedding model (GGUF) for the daemon; without it retrieval is
    /// keyword-only. With one, every row is embedded before the run.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Hook events measured.
    #[arg(long, default_value_t = 100)]
    pub iterations: usize,
    /// Episodic memories in the home.
    #[arg(long, default_value_t = 10_000)]
    pub episodic: usize,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// Stops the daemon (SIGTERM, then waits) when the bench ends, however.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let _ = self.0.wait();
    }
}

fn start_daemon(home: &Path, model: Option<&Path>) -> anyhow::Result<(Served, Daemon)> {
    let exe = std::env::current_exe()?;
    let log = std::fs::File::create(home.join("bench-serve.log"))?;
    let mut command = Command::new(exe);
    command
        .arg("--home")
        .arg(home)
        .args(["serve", "--port", "0"])
        .env("KIROCREW_SKIP_MODEL_DOWNLOAD", "1")
        .env_remove("NOTIFY_SOCKET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    match model {
        Some(m) => command.env("KIROCREW_EMBED_MODEL_PATH", m),
        None => command.env("KIROCREW_EMBED_MODEL_PATH", home.join("no-model.gguf")),
    };
    let served = Served(command.spawn().context("starting kirocrew serve")?);
    let data_home = DataHome::resolve(Some(home.to_path_buf()))?;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(daemon) = Daemon::discover(&data_home, Duration::from_secs(10)) {
            if daemon.probe().is_ok() {
                return Ok((served, daemon));
            }
        }
        if Instant::now() > deadline {
            bail!(
                "kirocrew serve did not answer; see {}",
                home.join("bench-serve.log").display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One adapter run; returns its wall time and whether it answered.
fn run_hook(home: &Path, payload: &Value) -> anyhow::Result<(Duration, bool)> {
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--home")
        .arg(home)
        .args(["hook", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(payload.to_string().as_bytes())?;
    }
    let out = child.wait_with_output()?;
    let elapsed = started.elapsed();
    if !out.status.success() {
        bail!(
            "hook claude-code failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok((elapsed, !out.stdout.is_empty()))
}

/// Runs the benchmark.
pub(super) fn run(args: HooksArgs) -> anyhow::Result<ExitCode> {
    crate::telemetry::init(false, "warn");
    let BenchInputs {
        turns,
        questions,
        dir: _dir,
        home,
    } = bench_inputs(&args.data, args.model.as_deref(), 1)?;
    let seeded = Instant::now();
    let swept = actix_rt::System::new().block_on(async {
        let settings = crate::config::load(home.root(), Vec::<(String, String)>::new())?.settings;
        let local = crate::app::builders::open_local_store(&home, &settings, false).await?;
        let store = local.store.clone();
        seed(&home, &store, &turns, args.episodic).await?;
        // Embedded here, before the daemon starts, so the run measures
        // serving, not the background sweep.
        let swept = match &args.model {
            Some(model) => {
                let embedder = crate::commands::embedding::embedder_for(model).await?;
                let embedded = store.clone().with_ready_embedder(embedder).await?;
                let started = Instant::now();
                run_backfill(&embedded, false).await?;
                Some(started.elapsed())
            }
            None => None,
        };
        local.close().await?;
        anyhow::Ok(swept)
    })?;
    let mut report =
        json!({"seed_secs": seeded.elapsed().as_secs_f64(), "episodic": args.episodic});
    if let Some(swept) = swept {
        report["embed_sweep_secs"] = json!(swept.as_secs_f64());
    }
    let (served, _daemon) = start_daemon(home.root(), args.model.as_deref())?;
    let mut samples = Vec::with_capacity(args.iterations);
    let mut answered = 0;
    for i in 0..args.iterations {
        let payload = json!({
            "session_id": format!("bench-{i}"),
            "transcript_path": home.root().join("none.jsonl"),
            "cwd": home.root(),
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": questions[i % questions.len()].question,
        });
        let (took, said) = run_hook(home.root(), &payload)?;
        samples.push(took);
        answered += usize::from(said);
    }
    drop(served);
    report["user_prompt_submit"] = stats(samples);
    report["answered_with_context"] = json!(answered);
    report["retrieval"] = json!(if args.model.is_some() {
        "hybrid"
    } else {
        "keyword"
    });
    if args.json {
        println!("{report}");
    } else {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(ExitCode::SUCCESS)
}
