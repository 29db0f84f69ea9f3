//! `kirocrew bench loop`: the number the product exists for (issue 35).
//! When an agent asks, does the right memory reach its prompt?
//!
//! Each LoCoMo conversation gets a fresh daemon (a temporary home, the
//! real [`crate::startup::Application`], `--model` as its embedding model)
//! and is replayed session by session through the public surfaces:
//! the opening speaker's turns as Claude Code hook events (`UserPromptSubmit`,
//! then `Stop` importing the grown transcript, through the same
//! [`handle_event`] the `hook claude-code` command runs), the other
//! speaker's as gateway messages (`POST /api/sessions/{key}/messages`,
//! role assistant). After each session a forced consolidation runs
//! (`POST /api/memory/consolidation/{key}/run`) and the bench waits for it:
//!
//! - `--backend observations`: the daemon's endpoint is a loopback
//!   stand-in for a strong model that answers from the session's gold
//!   observations ([`super::bench_loop_gold`]), so the loop is measured
//!   apart from model quality;
//! - `--backend local`: the local chat model (`--chat-model`, by default
//!   the shared test model).
//!
//! Then every question whose evidence lies in the replayed sessions is
//! asked as the first prompt of a new session, through the hook adapter
//! (the headline figures) and through the gateway. The context handed
//! over is judged by [`super::bench_loop_score`]: does it hold an evidence
//! turn or an item derived from one?
//!
//! With `--json` the last line is `{"overall": {"evidence_in_context",
//! "questions", "context_chars_p50", "context_chars_max", "latency_ms":
//! {"p50", "p95"}}, "by_category": {…}, "by_surface": {…}, "replay": {…},
//! "backend"}`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use super::bench_daemon::BenchDaemon;
use super::bench_locomo::{methods_without, MethodArg};
use super::bench_loop_client::{consolidate, encode, wait_for_embedder, RUN_DEADLINE};
use super::bench_loop_data::{conversations, Conversation, Turn};
use super::bench_loop_gold::{GoldEndpoint, GoldSession};
use super::bench_loop_report::{print_report, report, Replay};
use super::bench_loop_score::{
    derive, holds_evidence, probe, Sample, TracedObservation, TracedTurn,
};
use crate::claude_code::{handle_event, HookEvent, HookInput};
use crate::config::ClaudeCodeSettings;
use crate::daemon_client::Daemon;
use crate::home::DataHome;
use kirocrew_actors::sensitive_paths::SensitivePaths;

/// The shared test chat model, `--backend local`'s default.
const DEFAULT_CHAT_MODEL: &str = "../shared/models/smollm2-135m-instruct-q4_1.gguf";

/// Options of `kirocrew bench loop`.
#[derive(Debug, Args)]
pub struct LoopArgs {
    /// The LoCoMo folder (memories, queries, observations).
    #[arg(long, default_value = "../shared/bench/locomo")]
    pub data: PathBuf,
    /// The embedding GGUF the daemon runs with.
    #[arg(long)]
    pub model: PathBuf,
    /// What consolidates: gold observations (a strong-model stand-in) or
    /// the local chat model.
    #[arg(long, value_enum, default_value = "observations")]
    pub backend: LoopBackend,
    /// The chat GGUF of `--backend local`.
    #[arg(long)]
    pub chat_model: Option<PathBuf>,
    /// llama.cpp threads of the local chat model.
    #[arg(long, default_value_t = 2)]
    pub chat_threads: u32,
    /// Conversations replayed (in order), at most.
    #[arg(long)]
    pub conversations: Option<usize>,
    /// Sessions replayed per conversation (in order), at most; only
    /// questions whose evidence lies in them are asked.
    #[arg(long)]
    pub sessions: Option<usize>,
    /// Print this many missed questions (hook adapter) with their
    /// evidence and the context they got, for a look at why.
    #[arg(long, default_value_t = 0)]
    pub show_misses: usize,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
    /// Episodic retrieval-v2 methods the daemon runs without (ablation),
    /// comma-separated: speakers, sessions, graph, neighbours.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub without: Vec<MethodArg>,
}

/// `--backend` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LoopBackend {
    /// A loopback endpoint answering from the session's gold observations.
    Observations,
    /// The local chat model.
    Local,
}

/// Runs the bench.
pub(super) fn run(args: LoopArgs) -> anyhow::Result<ExitCode> {
    crate::telemetry::init(false, "warn");
    if !args.model.is_file() {
        bail!("--model {} is not a file", args.model.display());
    }
    let conversations = conversations(&args.data, args.conversations, args.sessions)?;
    let endpoint = match args.backend {
        LoopBackend::Observations => {
            let sessions = conversations
                .iter()
                .flat_map(|c| {
                    c.sessions.iter().map(|(number, turns)| {
                        let texts: Vec<String> = turns.iter().map(Turn::spoken).collect();
                        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                        let gold = c
                            .observations
                            .iter()
                            .filter(|o| o.session == *number)
                            .map(|o| o.text.clone())
                            .collect();
                        GoldSession::new(&texts, gold)
                    })
                })
                .collect();
            Some(GoldEndpoint::start(sessions)?)
        }
        LoopBackend::Local => None,
    };
    let backend = match (&endpoint, args.backend) {
        (Some(e), _) => format!("observations (gold stand-in at {})", e.base_url()),
        (None, _) => format!(
            "local {}",
            args.chat_model
                .as_deref()
                .unwrap_or(Path::new(DEFAULT_CHAT_MODEL))
                .display()
        ),
    };
    let mut samples = Vec::new();
    let mut replay = Replay::default();
    let started = Instant::now();
    for c in &conversations {
        run_conversation(c, &args, endpoint.as_ref(), &mut replay, &mut samples)
            .with_context(|| format!("conversation {}", c.conv))?;
    }
    if let Some(e) = endpoint {
        e.stop();
    }
    let report = report(&samples, &replay, &backend, started.elapsed());
    print_report(&report);
    if args.json {
        println!("{report}");
    }
    Ok(ExitCode::SUCCESS)
}

fn run_conversation(
    c: &Conversation,
    args: &LoopArgs,
    endpoint: Option<&GoldEndpoint>,
    replay: &mut Replay,
    samples: &mut Vec<Sample>,
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("creating a temporary home")?;
    let home = DataHome::resolve(Some(dir.path().to_path_buf()))?;
    let mut settings = crate::config::load(dir.path(), Vec::new())?.settings;
    settings.memory.migrated = true;
    settings.memory.embed_model_path = args.model.display().to_string();
    settings.consolidation.enabled = true;
    settings.consolidation.chat_model_download = false;
    match endpoint {
        Some(e) => {
            settings.consolidation.llm_base_url = e.base_url().to_owned();
            settings.consolidation.llm_model = "gold-observations".into();
        }
        None => {
            let model = args
                .chat_model
                .clone()
                .unwrap_or_else(|| PathBuf::from(DEFAULT_CHAT_MODEL));
            if !model.is_file() {
                bail!("--chat-model {} is not a file", model.display());
            }
            settings.consolidation.chat_model_path = model.display().to_string();
            settings.consolidation.chat_threads = args.chat_threads.max(1);
        }
    }
    let adapter = Adapter {
        settings: settings.claude_code.clone(),
        policy: home.sensitive_paths(),
    };
    settings.memory.episodic_methods = methods_without(&args.without);
    let daemon = BenchDaemon::start(home, settings)?;
    let client = Daemon::at(
        daemon.address(),
        Some(daemon.token().to_owned()),
        String::new(),
        RUN_DEADLINE,
    );
    let outcome = replay_and_ask(
        c,
        &client,
        &adapter,
        dir.path(),
        args.show_misses,
        replay,
        samples,
    );
    daemon.stop()?;
    outcome
}

/// What the hook adapter is run with: the `claude_code` settings and the
/// sensitive-path policy of the bench's data home.
struct Adapter {
    settings: ClaudeCodeSettings,
    policy: SensitivePaths,
}

fn replay_and_ask(
    c: &Conversation,
    client: &Daemon,
    adapter: &Adapter,
    dir: &Path,
    show_misses: usize,
    replay: &mut Replay,
    samples: &mut Vec<Sample>,
) -> anyhow::Result<()> {
    wait_for_embedder(client)?;
    let opener = c
        .sessions
        .values()
        .flatten()
        .next()
        .map(|t| t.speaker.clone())
        .unwrap_or_default();
    for (number, turns) in &c.sessions {
        let session_id = format!("locomo-{}-s{number}", c.conv);
        replay_session(&session_id, turns, &opener, client, adapter, dir, replay)?;
        let key = format!("claude-code:{session_id}");
        let t = Instant::now();
        match consolidate(client, &key) {
            Ok(()) => replay.run_secs.push(t.elapsed().as_secs_f64()),
            Err(e) => replay.run_errors.push(format!("{key}: {e:#}")),
        }
        replay.runs += 1;
    }
    let events = client.get_json("/api/memory/events?limit=10000")?;
    for e in events["events"].as_array().into_iter().flatten() {
        let kind = e["event_type"].as_str().unwrap_or("?").to_owned();
        *replay.events.entry(kind).or_default() += 1;
    }
    // What the daemon stored, traced to the turns it came from.
    let export = client.get_json("/api/memory/export")?;
    let mut items: Vec<String> = Vec::new();
    for e in export["episodic"].as_array().into_iter().flatten() {
        items.extend(e["text"].as_str().map(str::to_owned));
        replay.episodic += 1;
    }
    for s in export["semantic"].as_array().into_iter().flatten() {
        let value = match &s["value"] {
            Value::String(v) => v.clone(),
            other => other.to_string(),
        };
        items.push(value);
        replay.semantic += 1;
    }
    let all_turns: Vec<&Turn> = c.sessions.values().flatten().collect();
    // Items name the speaker and may describe the photo a turn shared.
    let said: Vec<String> = all_turns
        .iter()
        .map(|t| format!("{}: {}", t.speaker, t.spoken()))
        .collect();
    let traced_turns: Vec<TracedTurn<'_>> = all_turns
        .iter()
        .zip(&said)
        .map(|(t, said)| TracedTurn {
            id: &t.id,
            text: said,
        })
        .collect();
    let traced_obs: Vec<TracedObservation<'_>> = c
        .observations
        .iter()
        .map(|o| TracedObservation {
            text: &o.text,
            evidence: &o.evidence,
        })
        .collect();
    let derived = derive(&items, &traced_turns, &traced_obs);
    replay.traced += derived.len();
    let turn_probes: BTreeMap<String, String> = all_turns
        .iter()
        .map(|t| (t.id.clone(), probe(&t.text)))
        .collect();

    for (i, q) in c.questions.iter().enumerate() {
        let session_id = format!("question-{}-{i}", c.conv);
        let input = HookInput {
            session_id: session_id.clone(),
            transcript_path: None,
            cwd: None,
            event: HookEvent::UserPromptSubmit {
                prompt: q.question.clone(),
            },
        };
        let t = Instant::now();
        let outcome = handle_event(&input, Ok(client), &adapter.settings, &adapter.policy);
        let latency_ms = t.elapsed().as_secs_f64() * 1000.0;
        if let Some(w) = outcome.warning {
            bail!("the hook adapter failed on {:?}: {w}", q.question);
        }
        let context = outcome
            .stdout
            .as_ref()
            .and_then(|v| v["hookSpecificOutput"]["additionalContext"].as_str())
            .unwrap_or_default()
            .to_owned();
        let hit = holds_evidence(&context, &q.evidence, &turn_probes, &derived);
        replay.reachable += usize::from(
            derived
                .iter()
                .any(|d| q.evidence.iter().any(|id| d.evidence.contains(id))),
        );
        replay.questions += 1;
        if !hit && replay.misses_shown < show_misses {
            replay.misses_shown += 1;
            let said: Vec<String> = q
                .evidence
                .iter()
                .filter_map(|id| all_turns.iter().find(|t| &t.id == id))
                .map(|t| format!("{} {}: {}", t.id, t.speaker, t.text))
                .collect();
            println!(
                "MISS {:?} ({})\n  evidence: {}\n  context:\n{context}\n",
                q.question,
                q.category_name,
                said.join("\n            ")
            );
        }
        samples.push(Sample {
            category: q.category_name.clone(),
            surface: "claude_code",
            hit,
            chars: context.chars().count(),
            latency_ms,
        });

        let key = encode(&format!("gateway:{session_id}"));
        let t = Instant::now();
        let built = client.post_json(
            &format!("/api/sessions/{key}/messages"),
            &json!({"role": "user", "text": q.question, "record": false}),
        )?;
        let latency_ms = t.elapsed().as_secs_f64() * 1000.0;
        let context = built["context"].as_str().unwrap_or_default();
        samples.push(Sample {
            category: q.category_name.clone(),
            surface: "gateway",
            hit: holds_evidence(context, &q.evidence, &turn_probes, &derived),
            chars: context.chars().count(),
            latency_ms,
        });
    }
    Ok(())
}

/// Replays one session: the opener's turns through the hook adapter
/// (prompt, then `Stop` importing the grown transcript), the other
/// speaker's through the gateway.
fn replay_session(
    session_id: &str,
    turns: &[Turn],
    opener: &str,
    client: &Daemon,
    adapter: &Adapter,
    dir: &Path,
    replay: &mut Replay,
) -> anyhow::Result<()> {
    let transcript_path = dir.join(format!("{session_id}.jsonl"));
    let mut transcript = std::fs::File::create(&transcript_path)?;
    let key = encode(&format!("claude-code:{session_id}"));
    for turn in turns {
        let text = turn.spoken();
        if turn.speaker != opener {
            let t = Instant::now();
            client.post_json(
                &format!("/api/sessions/{key}/messages"),
                &json!({"role": "assistant", "text": text, "sender": turn.speaker}),
            )?;
            replay.gateway_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            continue;
        }
        let hook = |event| HookInput {
            session_id: session_id.to_owned(),
            transcript_path: Some(transcript_path.clone()),
            cwd: None,
            event,
        };
        let t = Instant::now();
        let prompt = handle_event(
            &hook(HookEvent::UserPromptSubmit {
                prompt: text.clone(),
            }),
            Ok(client),
            &adapter.settings,
            &adapter.policy,
        );
        replay.hook_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        // Claude Code writes the prompt to the transcript, answers, then
        // fires Stop.
        let line = json!({
            "type": "user", "uuid": format!("{session_id}-{}", turn.id), "sessionId": session_id,
            "timestamp": format!("{}Z", turn.session_date),
            "message": {"role": "user", "content": text},
        });
        writeln!(transcript, "{line}")?;
        transcript.flush()?;
        let stop = handle_event(
            &hook(HookEvent::Stop),
            Ok(client),
            &adapter.settings,
            &adapter.policy,
        );
        replay.hook_warnings += usize::from(prompt.warning.is_some() || stop.warning.is_some());
        if let Some(w) = stop.warning {
            bail!("Stop did not import {session_id}: {w}");
        }
    }
    Ok(())
}
