//! The skill catalog's hot paths over 1,000 skills.
//!
//! Run with `cargo bench --bench skills`.
//!
//! - `list_skills/1000_cached`: `GET /api/skills`'s work through the actor
//!   handle within the catalog TTL (no syscall): rows with deliveries.
//! - `list_skills/1000_rediscover`: the same after the TTL ran out or a
//!   write: the tree walk, one stat per SKILL.md, parses from the cache.
//! - `list_skills/1000_cold_parse`: a new skills actor reading and parsing
//!   all 1,000 files for its first listing (a daemon's first listing, with
//!   the actor's start and stop).
//! - `triggered/1000`: a 40-word message against 1,000 skills with 3–5
//!   triggers each (~2 match) through the actor, bodies of the matches read
//!   and hits recorded (`skills.max_triggered = 3`).
//!
//! Everything is timed through the public handle, as the daemon calls it.

use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use kirocrew_actors::clock::system_clock;
use kirocrew_actors::skills::{SkillLedgerHandle, SkillsConfig};
use tempfile::TempDir;

const SKILLS: usize = 1_000;
const TOPICS: &[&str] = &[
    "deploy",
    "release",
    "rollback",
    "migration",
    "schema",
    "review",
    "latency",
    "benchmark",
    "invoice",
    "payment",
    "kubernetes",
    "terraform",
    "docker",
    "postgres",
    "redis",
    "kafka",
    "graphql",
    "oauth",
    "pdf",
    "spreadsheet",
];

fn write_skills(root: &Path) {
    for i in 0..SKILLS {
        let group = i % 10;
        let dir = root.join(format!("group-{group}/skill-{i:04}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let t = |k: usize| format!("{}{}", TOPICS[(i * 7 + k * 3) % TOPICS.len()], i % 50);
        let text = format!(
            "---\nname: skill-{i:04}\ndescription: Handles {} and {} tasks for team {group}. Use when: the user mentions {}.\ntriggers: [{}, {}, \"{} {}\", '!draft{}']\nmetadata:\n  owner: team-{group}\n  tags: [a, b]\n---\n# Skill {i}\n\n{}\n",
            t(0),
            t(1),
            t(2),
            t(0),
            t(1),
            t(2),
            t(3),
            i % 7,
            "Step: do the thing carefully.\n".repeat(40)
        );
        std::fs::write(dir.join("SKILL.md"), text).expect("write");
    }
}

fn config(home: &Path) -> SkillsConfig {
    let mut config = SkillsConfig::new(home, system_clock());
    config.max_triggered = 3;
    config.flush_delay = Duration::from_secs(3600);
    config.catalog_ttl = Duration::from_secs(3600);
    config
}

const MESSAGE: &str =
    "could you look at why the deploy12 pipeline failed again after the release13 \
    went out, the dashboard shows latency spikes and the on call person thinks it is the database \
    migration but I am not sure, please check logs and tell me what to roll back";

fn list_skills(c: &mut Criterion) {
    let tmp = TempDir::new().expect("tempdir");
    write_skills(&tmp.path().join("skills"));
    let sys = actix_rt::System::new();
    let handle = sys.block_on(async { SkillLedgerHandle::start(config(tmp.path())) });
    assert_eq!(sys.block_on(handle.list()).expect("list").len(), SKILLS);
    let mut group = c.benchmark_group("list_skills");
    group.bench_function("1000_cached", |b| {
        b.iter(|| sys.block_on(handle.list()).expect("list"))
    });
    group.bench_function("1000_rediscover", |b| {
        b.iter(|| {
            sys.block_on(handle.refresh()).expect("refresh");
            sys.block_on(handle.list()).expect("list")
        })
    });
    group.sample_size(20);
    group.bench_function("1000_cold_parse", |b| {
        b.iter(|| {
            sys.block_on(async {
                let fresh = SkillLedgerHandle::start(config(tmp.path()));
                let listed = fresh.list().await.expect("list").len();
                fresh.close().await.expect("close");
                listed
            })
        })
    });
    group.finish();
    sys.block_on(handle.close()).expect("close");
}

fn trigger_matching(c: &mut Criterion) {
    let tmp = TempDir::new().expect("tempdir");
    write_skills(&tmp.path().join("skills"));
    let sys = actix_rt::System::new();
    let handle = sys.block_on(async { SkillLedgerHandle::start(config(tmp.path())) });
    let t = sys.block_on(handle.triggered(MESSAGE)).expect("triggered");
    assert!(!t.bodies.is_empty());
    c.bench_function("triggered/1000", |b| {
        b.iter(|| sys.block_on(handle.triggered(MESSAGE)).expect("triggered"))
    });
    sys.block_on(handle.close()).expect("close");
}

criterion_group!(benches, list_skills, trigger_matching);
criterion_main!(benches);
