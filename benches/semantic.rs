//! Semantic memory through the `VectorStore` actor handle: writes, keyword
//! search and context rendering against a real memory.db in a temp dir.
//!
//! Run with `cargo bench --bench semantic`. Each group gets its own temp
//! dir and store; every measured call goes through `VectorStoreHandle`
//! (mailbox, validation, screening, SQLite transaction, audit event), driven
//! by one actix `SystemRunner`.

use std::cell::Cell;
use std::path::Path;
use std::time::Duration;

use actix_rt::{System, SystemRunner};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::vector_store::{SemanticWrite, StoreSettings, VectorStoreHandle};
use serde_json::{json, Value};
use tempfile::TempDir;

/// The spec's `_SEMANTIC_MEMORY_CAP` at the reference window.
const CONTEXT_CAP: usize = 12_705;

/// A first user message of a session, as the context builder passes it.
const QUERY: &str = "which editor and test runner should I use for the rust project?";

const TOOLS: &[&str] = &[
    "neovim", "helix", "vscode", "emacs", "zed", "intellij", "sublime", "kakoune",
];
const LANGS: &[&str] = &[
    "rust",
    "go",
    "python",
    "typescript",
    "kotlin",
    "elixir",
    "zig",
    "haskell",
];
const TOPICS: &[&str] = &[
    "editor",
    "shell",
    "theme",
    "font",
    "testing",
    "review",
    "deploy",
    "logging",
    "docs",
    "branching",
    "formatting",
    "linting",
    "terminal",
    "keyboard",
    "database",
    "ci",
];
const PLACES: &[&str] = &[
    "Lisbon",
    "Berlin",
    "Osaka",
    "Toronto",
    "Nairobi",
    "Melbourne",
    "Austin",
    "Tallinn",
];
const ADVERBS: &[&str] = &[
    "usually",
    "always",
    "mostly",
    "strongly",
    "sometimes",
    "rarely",
];

/// A deterministic xorshift generator, so every run stores the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// Entry `i` of a realistic store: preferences, project facts and user
/// facts, 40-200 characters each, some structured.
fn entry(i: usize, rng: &mut Rng) -> SemanticWrite {
    let topic = rng.pick(TOPICS);
    let (key, value) = match i % 4 {
        0 => (
            format!("pref.{topic}_{i}"),
            json!(format!(
                "{} prefers {} for {topic}; {} set up with {} keybindings and a dark theme",
                rng.pick(ADVERBS),
                rng.pick(TOOLS),
                rng.pick(ADVERBS),
                rng.pick(TOOLS),
            )),
        ),
        1 => (
            format!("project.svc{}.{topic}_{i}", i % 97),
            json!(format!(
                "service written in {} with {} tests run by cargo nextest in CI; {topic} owned by the platform team",
                rng.pick(LANGS),
                rng.next() % 900 + 100,
            )),
        ),
        2 => (
            format!("user.{topic}_{i}"),
            json!({
                "summary": format!("lives in {}, works mostly in {}", rng.pick(PLACES), rng.pick(LANGS)),
                "languages": [rng.pick(LANGS), rng.pick(LANGS)],
                "since": 2015 + (rng.next() % 10),
            }),
        ),
        _ => (
            format!("pref.{topic}.detail_{i}"),
            json!(format!(
                "{} runs {} before committing and reviews diffs in {}",
                rng.pick(ADVERBS),
                rng.pick(&["clippy", "rustfmt", "pytest", "eslint", "go vet"]),
                rng.pick(TOOLS),
            )),
        ),
    };
    let (confidence, source) = match i % 3 {
        0 => (1.0, "user_explicit"),
        1 => (0.9, "consolidation"),
        _ => (0.85, "import"),
    };
    SemanticWrite {
        key,
        value,
        confidence,
        source: source.to_owned(),
    }
}

/// Opens a store in `dir`.
fn open(runner: &SystemRunner, dir: &Path) -> VectorStoreHandle {
    runner
        .block_on(VectorStoreHandle::open(
            dir.join("memory.db"),
            StoreSettings::default(),
            system_clock(),
        ))
        .expect("open memory.db")
}

/// A fresh store holding `n` realistic entries.
fn populated(runner: &SystemRunner, n: usize) -> (TempDir, VectorStoreHandle) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(runner, dir.path());
    runner.block_on(async {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for i in 0..n {
            store
                .write_semantic(entry(i, &mut rng))
                .await
                .expect("populate");
        }
        let active = store.stats().await.expect("stats").semantic.active;
        assert_eq!(active, n as i64);
    });
    (dir, store)
}

fn close(runner: &SystemRunner, store: VectorStoreHandle, dir: TempDir) {
    runner.block_on(store.close()).expect("close");
    drop(dir);
}

fn writes(c: &mut Criterion, runner: &SystemRunner) {
    let mut group = c.benchmark_group("semantic_write");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));

    let (dir, store) = populated(runner, 1_000);

    let counter = Cell::new(0_u64);
    group.bench_function("new_key", |b| {
        b.iter(|| {
            let n = counter.get();
            counter.set(n + 1);
            let write = SemanticWrite {
                key: format!("pref.bench_new_{n}"),
                value: json!(format!("prefers helix for editing, attempt {n}")),
                confidence: 0.9,
                source: "consolidation".to_owned(),
            };
            runner.block_on(store.write_semantic(write)).expect("write")
        })
    });

    runner
        .block_on(store.write_semantic(SemanticWrite {
            key: "pref.bench_hot".to_owned(),
            value: json!("prefers neovim"),
            confidence: 0.9,
            source: "consolidation".to_owned(),
        }))
        .expect("seed hot key");
    let flip = Cell::new(false);
    let values: [Value; 2] = [
        json!("prefers neovim with a light theme"),
        json!({"editor": "helix", "theme": "dark", "keymap": "default"}),
    ];
    group.bench_function("overwrite", |b| {
        b.iter(|| {
            let i = usize::from(flip.get());
            flip.set(!flip.get());
            let write = SemanticWrite {
                key: "pref.bench_hot".to_owned(),
                value: values[i].clone(),
                confidence: 0.9,
                source: "consolidation".to_owned(),
            };
            runner
                .block_on(store.write_semantic(write))
                .expect("overwrite")
        })
    });
    group.finish();
    close(runner, store, dir);
}

fn search(c: &mut Criterion, runner: &SystemRunner) {
    let mut group = c.benchmark_group("search_semantic");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for n in [1_000, 10_000] {
        let (dir, store) = populated(runner, n);
        let hits = runner
            .block_on(store.search_semantic(QUERY, 10))
            .expect("search");
        assert_eq!(hits.len(), 10, "the query matches the data");
        group.bench_with_input(BenchmarkId::new("keyword", n), &n, |b, _| {
            b.iter(|| {
                runner
                    .block_on(store.search_semantic(QUERY, 10))
                    .expect("search")
            })
        });
        close(runner, store, dir);
    }
    group.finish();
}

fn context(c: &mut Criterion, runner: &SystemRunner) {
    let mut group = c.benchmark_group("semantic_context");
    group
        .sample_size(20)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let n = 1_000;
    let (dir, store) = populated(runner, n);
    let block = runner
        .block_on(store.semantic_context(QUERY, CONTEXT_CAP))
        .expect("context");
    assert!(!block.is_empty() && block.chars().count() <= CONTEXT_CAP);
    group.bench_with_input(BenchmarkId::new("cap_12705", n), &n, |b, _| {
        b.iter(|| {
            runner
                .block_on(store.semantic_context(QUERY, CONTEXT_CAP))
                .expect("context")
        })
    });
    group.finish();
    close(runner, store, dir);
}

fn semantic(c: &mut Criterion) {
    let runner = System::new();
    writes(c, &runner);
    search(c, &runner);
    context(c, &runner);
}

criterion_group!(benches, semantic);
criterion_main!(benches);
