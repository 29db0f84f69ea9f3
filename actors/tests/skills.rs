//! The skills actor end to end on a temporary data home: triggers (bodies,
//! pointers, negatives, hits), `$name`, the ledger (debounce, TTL, alias
//! folding, degraded mode, crash safety), direct-read crediting, the
//! toggle's refusals, session loading and CRUD confinement.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use kirocrew_actors::clock::{ManualClock, SharedClock};
use kirocrew_actors::skills::ledger::Ledger;
use kirocrew_actors::skills::{
    SkillEdit, SkillError, SkillLedgerHandle, SkillSource, ToggleRefusal, ToolEvent,
};
use serde_json::json;

use common::{skills_config, write_skill};

fn clock() -> Arc<ManualClock> {
    ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap())
}

fn usage(home: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(home.join("skill-usage.json")).expect("ledger file"))
        .expect("valid json")
}

fn event(id: &str, tool: &str, input: serde_json::Value, status: Option<&str>) -> ToolEvent {
    ToolEvent {
        tool_call_id: id.into(),
        tool_name: tool.into(),
        kind: None,
        raw_input: Some(input),
        command: None,
        status: status.map(str::to_owned),
    }
}

#[actix_rt::test]
async fn triggers_split_bodies_and_pointers_and_only_bodies_earn_hits() {
    let home = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    write_skill(
        &skills,
        "deploy",
        "---\ndescription: Ship it\ntriggers: [deploy, release, '!dry-run']\n---\n# Deploy\nsteps",
    );
    write_skill(
        &skills,
        "ref",
        "---\ndescription: Big reference\ntriggers: [release]\ninject_on_trigger: false\n---\nhuge",
    );
    write_skill(
        &skills,
        "pinned",
        "---\nalways: true\ntriggers: [release]\n---\nrules",
    );
    let mut config = skills_config(home.path(), clock());
    config.max_triggered = 3;
    let h = SkillLedgerHandle::start(config);

    let t = h.triggered("time to release").await.unwrap();
    assert_eq!(
        t.bodies.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
        ["deploy"]
    );
    assert_eq!(t.bodies[0].body, "# Deploy\nsteps");
    assert_eq!(t.pointers.len(), 1);
    assert!(t.pointers[0].starts_with("- ref: Big reference (read "));
    assert!(t
        .hint
        .starts_with("[Relevant skills for this message]\n- ref"));
    assert!(h
        .triggered("release as a dry-run")
        .await
        .unwrap()
        .bodies
        .is_empty());
    assert_eq!(
        h.triggered("nothing relevant").await.unwrap(),
        Default::default()
    );

    h.flush().await.unwrap();
    let u = usage(home.path());
    assert_eq!(u["skills"]["deploy"]["hits"], 1);
    assert!(u["skills"].get("ref").is_none(), "a pointer is no delivery");
    assert!(u["skills"].get("pinned").is_none());
    let list = h.list().await.unwrap();
    let by = |n: &str| list.iter().find(|s| s.name == n).unwrap().clone();
    assert_eq!(by("deploy").deliveries, Some(1));
    assert_eq!(by("ref").deliveries, None, "untracked, not zero");
    assert!(!by("ref").inject_on_trigger);
    h.close().await.unwrap();
}

#[actix_rt::test]
async fn triggers_are_off_by_default_and_dollar_tokens_deliver() {
    let home = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    write_skill(&skills, "deploy", "---\ntriggers: [deploy]\n---\nbody");
    write_skill(
        &skills,
        "utils/tiny-url",
        "---\ndescription: urls\n---\nshorten",
    );
    let h = SkillLedgerHandle::start(skills_config(home.path(), clock()));
    assert!(h.triggered("deploy now").await.unwrap().bodies.is_empty());
    let bodies = h
        .dollar_skills("use $utils/tiny-url and $nope, then $deploy.")
        .await
        .unwrap();
    let names: Vec<_> = bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["utils/tiny-url", "deploy"]);
    h.flush().await.unwrap();
    assert_eq!(usage(home.path())["skills"]["utils/tiny-url"]["hits"], 1);
    h.close().await.unwrap();
}

#[actix_rt::test]
async fn ledger_debounces_then_writes_once_per_burst() {
    let home = tempfile::tempdir().unwrap();
    write_skill(&home.path().join("skills"), "a", "---\n---\nx");
    let mut config = skills_config(home.path(), clock());
    config.flush_delay = Duration::from_millis(200);
    let h = SkillLedgerHandle::start(config);
    for _ in 0..5 {
        h.record_use(&["a".into()]).await.unwrap();
    }
    assert!(
        !home.path().join("skill-usage.json").exists(),
        "debounced: nothing written yet"
    );
    // The debounce fires on its own; wait for its one write.
    for _ in 0..200 {
        if home.path().join("skill-usage.json").exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(usage(home.path())["skills"]["a"]["hits"], 5);
    assert!(!h.flush().await.unwrap(), "the burst was written in one go");
    h.close().await.unwrap();
}

#[actix_rt::test]
async fn ttl_drops_idle_entries_and_budget_folds_aliases() {
    let home = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    write_skill(&skills, "real", "---\nname: Real One\n---\n0123456789");
    std::os::unix::fs::symlink(skills.join("real"), skills.join("alias")).unwrap();
    write_skill(&skills, "cold", "---\n---\nc");
    let c = clock();
    let h = SkillLedgerHandle::start(skills_config(home.path(), c.clone() as SharedClock));
    h.record_use(&["real".into(), "alias".into(), "alias".into(), "gone".into()])
        .await
        .unwrap();
    let b = h.budget().await.unwrap();
    assert_eq!(
        b.rows.len(),
        2,
        "alias folded, orphan dropped: {:?}",
        b.rows
    );
    let real = &b.rows[0];
    assert_eq!(
        (real.key.as_str(), real.name.as_str()),
        ("real", "Real One")
    );
    assert_eq!(real.deliveries, Some(3));
    assert_eq!(real.chars, real.size_bytes * 3);
    assert_eq!(real.folded_from, Some(vec!["alias".to_owned()]));
    assert_eq!(real.idle_days, Some(0));
    assert_eq!(b.rows[1].deliveries, None);
    assert_eq!(b.total_chars, real.chars);

    // A read through the alias is credited to the canonical key.
    let ev = event(
        "t1",
        "Read",
        json!({"path": skills.join("alias/SKILL.md")}),
        Some("completed"),
    );
    assert_eq!(h.observe_tool_event(ev).await.unwrap().credited, ["real"]);

    c.advance(chrono::Duration::days(31));
    let b = h.budget().await.unwrap();
    assert!(b.rows.iter().all(|r| r.deliveries.is_none()), "30-day TTL");
    assert_eq!(b.total_chars, 0);
    h.flush().await.unwrap();
    assert_eq!(usage(home.path())["skills"], json!({}));
    h.close().await.unwrap();
}

#[actix_rt::test]
async fn a_corrupt_ledger_degrades_without_breaking_loading() {
    let home = tempfile::tempdir().unwrap();
    write_skill(
        &home.path().join("skills"),
        "a",
        "---\ndescription: A\n---\nbody",
    );
    std::fs::write(home.path().join("skill-usage.json"), "{broken").unwrap();
    let mut config = skills_config(home.path(), clock());
    config.lazy_load = true;
    let h = SkillLedgerHandle::start(config);
    let s = h.session_skills(10_000).await.unwrap();
    assert_eq!(s.listed, ["a"]);
    assert!(!s.ledger_ranked);
    assert_eq!(
        h.dollar_skills("$a").await.unwrap().len(),
        1,
        "delivery still works"
    );
    h.flush().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(home.path().join("skill-usage.json")).unwrap(),
        "{broken"
    );
    h.close().await.unwrap();
}

#[actix_rt::test]
async fn direct_reads_are_credited_on_completion_once() {
    let home = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    write_skill(&skills, "a", "---\n---\na");
    write_skill(&skills, "b", "---\n---\nb");
    let h = SkillLedgerHandle::start(skills_config(home.path(), clock()));
    let cmd = json!({"command": "head -50 skills/a/SKILL.md | grep x"});
    // Phase one: the call is seen, nothing recorded.
    let o = h
        .observe_tool_event(event("c1", "execute_bash", cmd.clone(), Some("pending")))
        .await
        .unwrap();
    assert_eq!(
        (o.candidates.clone(), o.credited.is_empty()),
        (vec!["a".to_owned()], true)
    );
    // Phase two: the update without input completes it.
    let done = ToolEvent {
        raw_input: None,
        ..event("c1", "execute_bash", json!({}), Some("completed"))
    };
    assert_eq!(
        h.observe_tool_event(done.clone()).await.unwrap().credited,
        ["a"]
    );
    assert!(h.observe_tool_event(done).await.unwrap().duplicate);
    // Not a read of the skill; a failed read; a mere mention.
    let o = h
        .observe_tool_event(event(
            "c2",
            "bash",
            json!({"command": "cat a.txt && rm skills/b/SKILL.md"}),
            Some("completed"),
        ))
        .await
        .unwrap();
    assert!(o.credited.is_empty());
    h.observe_tool_event(event(
        "c3",
        "Read",
        json!({"file_path": skills.join("b/SKILL.md")}),
        None,
    ))
    .await
    .unwrap();
    let o = h
        .observe_tool_event(event("c3", "Read", json!({}), Some("failed")))
        .await
        .unwrap();
    assert!(o.credited.is_empty());
    let o = h
        .observe_tool_event(event(
            "c4",
            "Edit",
            json!({"file_path": skills.join("b/SKILL.md")}),
            Some("completed"),
        ))
        .await
        .unwrap();
    assert!(o.credited.is_empty());
    assert!(matches!(
        h.observe_tool_event(event("", "Read", json!({}), None))
            .await,
        Err(SkillError::InvalidToolEvent(_))
    ));
    assert!(matches!(
        h.observe_tool_event(event("c5", "Read", json!({}), Some("bogus")))
            .await,
        Err(SkillError::InvalidToolEvent(_))
    ));
    h.flush().await.unwrap();
    let u = usage(home.path());
    assert_eq!(u["skills"]["a"]["hits"], 1);
    assert!(u["skills"].get("b").is_none());
    h.close().await.unwrap();
}

#[actix_rt::test]
async fn toggle_outcomes_and_ownership() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    write_skill(
        &skills,
        "mine",
        "---\nname: mine\ndescription: |\n  inject_on_trigger: documented\n---\nbody",
    );
    write_skill(&skills, "bare", "no frontmatter");
    write_skill(
        &project.path().join("skills"),
        "proj",
        "---\nname: p\n---\n",
    );
    write_skill(extra.path(), "ext", "---\nname: e\n---\n");
    let mut config = skills_config(home.path(), clock());
    config.project_dir = Some(project.path().to_path_buf());
    config.extra_paths = vec![extra.path().to_path_buf()];
    let h = SkillLedgerHandle::start(config);

    let o = h
        .set_inject_on_trigger("mine", false, "test")
        .await
        .unwrap();
    assert!(o.ok && o.changed);
    let text = std::fs::read_to_string(skills.join("mine/SKILL.md")).unwrap();
    assert!(
        text.contains("  inject_on_trigger: documented\ninject_on_trigger: false\n"),
        "{text}"
    );
    assert!(
        !h.list()
            .await
            .unwrap()
            .iter()
            .find(|s| s.name == "mine")
            .unwrap()
            .inject_on_trigger
    );
    let o = h
        .set_inject_on_trigger("mine", false, "test")
        .await
        .unwrap();
    assert!(o.ok && !o.changed);
    assert!(
        h.set_inject_on_trigger("mine", true, "test")
            .await
            .unwrap()
            .changed
    );
    assert_eq!(
        std::fs::read_to_string(skills.join("mine/SKILL.md")).unwrap(),
        "---\nname: mine\ndescription: |\n  inject_on_trigger: documented\n---\nbody"
    );

    for (name, why) in [
        ("bare", ToggleRefusal::NoFrontmatter),
        ("proj", ToggleRefusal::NotOwned),
        ("ext", ToggleRefusal::NotOwned),
        ("missing", ToggleRefusal::NotFound),
    ] {
        let o = h.set_inject_on_trigger(name, false, "test").await.unwrap();
        assert_eq!((o.ok, o.refused), (false, Some(why)), "{name}");
    }
    let list = h.list().await.unwrap();
    let ext = list.iter().find(|s| s.name == "ext").unwrap();
    assert_eq!((ext.source, ext.owned), (SkillSource::Kirocrew, false));
    assert_eq!(
        list.iter().find(|s| s.name == "proj").unwrap().source,
        SkillSource::Project
    );
    h.close().await.unwrap();
}

#[actix_rt::test]
async fn crud_sanitizes_confines_and_invalidates() {
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let h = SkillLedgerHandle::start(skills_config(home.path(), clock()));
    let made = h
        .create(
            "Utils/Tiny_URL",
            "---\ndescription: short\n---\nbody",
            "test",
        )
        .await
        .unwrap();
    assert_eq!(made.name, "utils/tiny-url");
    assert!(made.owned);
    assert_eq!(
        h.list().await.unwrap().len(),
        1,
        "the write invalidated the cache"
    );
    assert!(matches!(
        h.create("utils/tiny-url", "x", "test").await,
        Err(SkillError::AlreadyExists(_))
    ));
    for bad in ["../x", "a/../../b", "%2e%2e/x", "/etc/x", "a\\b"] {
        assert!(
            matches!(
                h.create(bad, "x", "test").await,
                Err(SkillError::InvalidName { .. })
            ),
            "{bad}"
        );
        assert!(
            matches!(h.get(bad).await, Err(SkillError::InvalidName { .. })),
            "{bad}"
        );
    }
    std::os::unix::fs::symlink(outside.path(), home.path().join("skills/out")).unwrap();
    assert!(matches!(
        h.create("out/evil", "x", "test").await,
        Err(SkillError::NotOwned { .. })
    ));
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());

    let edit = SkillEdit {
        triggers: Some(vec!["shorten".into()]),
        ..SkillEdit::default()
    };
    let edited = h.edit("utils/tiny-url", edit, "test").await.unwrap();
    assert_eq!(edited.triggers, ["shorten"]);
    assert_eq!(edited.description.as_deref(), Some("short"));
    h.update("utils/tiny-url", "---\ndescription: new\n---\n", "test")
        .await
        .unwrap();
    assert_eq!(
        h.get("utils/tiny-url")
            .await
            .unwrap()
            .info
            .description
            .as_deref(),
        Some("new")
    );
    h.delete("utils/tiny-url").await.unwrap();
    assert!(matches!(
        h.get("utils/tiny-url").await,
        Err(SkillError::NotFound(_))
    ));
    h.close().await.unwrap();
}

#[actix_rt::test]
async fn session_skills_full_and_lazy() {
    let home = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    write_skill(&skills, "pin", "---\nalways: true\n---\nALWAYS RULES");
    for i in 0..20 {
        write_skill(
            &skills,
            &format!("s{i:02}"),
            &format!("---\ndescription: skill number {i}\n---\nb"),
        );
    }
    let h = SkillLedgerHandle::start(skills_config(home.path(), clock()));
    let s = h.session_skills(300).await.unwrap();
    assert_eq!(s.always.len(), 1);
    assert_eq!(s.always[0].body, "ALWAYS RULES");
    assert_eq!(
        s.listed.len(),
        20,
        "lazy_load off: the full index, budget ignored"
    );
    h.close().await.unwrap();

    let mut config = skills_config(home.path(), clock());
    config.lazy_load = true;
    let h = SkillLedgerHandle::start(config);
    h.record_use(&["s17".into()]).await.unwrap();
    let s = h.session_skills(600).await.unwrap();
    assert!(s.ledger_ranked);
    assert_eq!(s.listed[0], "s17", "the used skill ranks first");
    assert!(s.omitted > 0 && s.listed.len() + s.omitted == 20);
    assert!(s.index.contains("skill_search"));
    h.close().await.unwrap();
}

#[actix_rt::test]
async fn search_records_nothing() {
    let home = tempfile::tempdir().unwrap();
    write_skill(
        &home.path().join("skills"),
        "pdf",
        "---\ndescription: Fill PDF forms\n---\nuse qpdf",
    );
    let h = SkillLedgerHandle::start(skills_config(home.path(), clock()));
    assert_eq!(h.search("pdf", 10).await.unwrap()[0].matched_in, "metadata");
    assert_eq!(h.search("qpdf", 10).await.unwrap()[0].matched_in, "body");
    assert!(!h.flush().await.unwrap());
    assert!(!home.path().join("skill-usage.json").exists());
    h.close().await.unwrap();
}

/// The child half of the crash test: flushes the ledger in a loop until
/// killed. Runs only when the parent sets `KIROCREW_LEDGER_CRASH_DIR`.
#[test]
#[ignore = "child process of ledger_survives_kill_during_flush"]
fn crash_child_flush_loop() {
    let Some(dir) = std::env::var_os("KIROCREW_LEDGER_CRASH_DIR") else {
        return;
    };
    let path = Path::new(&dir).join("skill-usage.json");
    let now = Utc::now();
    let mut ledger = Ledger::load(&path, now);
    for i in 0..10_000_000u64 {
        // A few hundred keys, so each write takes a moment.
        ledger.record(&format!("skill-{}", i % 300), now);
        ledger.flush(now).expect("flush");
    }
}

#[test]
fn ledger_survives_kill_during_flush() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skill-usage.json");
    let exe = std::env::current_exe().unwrap();
    for round in 0..3 {
        let mut child = std::process::Command::new(&exe)
            .args([
                "--exact",
                "crash_child_flush_loop",
                "--ignored",
                "--test-threads=1",
            ])
            .env("KIROCREW_LEDGER_CRASH_DIR", dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Let it write at least a few times past what the last round left.
        let start = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        let mut seen = 0;
        for _ in 0..600 {
            let now = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
            if now.is_some() && now != start {
                seen += 1;
                if seen > 3 {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        child.kill().unwrap(); // SIGKILL, mid-write or not
        child.wait().unwrap();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let v: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("round {round}: torn ledger file: {e}"));
        assert!(
            v["skills"].as_object().is_some_and(|m| !m.is_empty()),
            "round {round}"
        );
        let reloaded = Ledger::load(&path, Utc::now());
        assert!(reloaded.degraded_reason().is_none(), "round {round}");
    }
}

#[actix_rt::test]
async fn toggles_and_trigger_matches_are_security_events() {
    use kirocrew_actors::security_log::{SecurityLogConfig, SecurityLogHandle};
    let home = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    write_skill(&skills, "a", "---\ntriggers: [deploy]\n---\nbody");
    write_skill(
        &skills,
        "b",
        "---\ntriggers: [deploy]\ninject_on_trigger: false\n---\nbody",
    );
    write_skill(&skills, "bare", "no frontmatter");
    let log = SecurityLogHandle::start(SecurityLogConfig {
        path: home.path().join("security-events.jsonl"),
        max_bytes: 1 << 20,
        keep: 1,
        clock: clock(),
    });
    let mut config = skills_config(home.path(), clock());
    config.max_triggered = 5;
    config.security_log = Some(log.clone());
    let h = SkillLedgerHandle::start(config);

    h.set_inject_on_trigger("a", false, "http").await.unwrap();
    h.set_inject_on_trigger("bare", false, "http")
        .await
        .unwrap();
    h.set_inject_on_trigger("missing", true, "http")
        .await
        .unwrap();
    let toggles = log.recent(10, Some("skill_toggle")).await.unwrap();
    let outcomes: Vec<&str> = toggles.iter().map(|r| r.event.outcome.as_str()).collect();
    assert_eq!(
        outcomes,
        ["refused", "refused", "ok"],
        "newest first, rejections included"
    );
    assert_eq!(toggles[0].event.detail["reason"], "not_found");
    assert_eq!(toggles[1].event.detail["reason"], "no_frontmatter");
    assert_eq!(toggles[2].event.detail["skill"], "a");

    h.triggered("nothing here").await.unwrap();
    assert!(
        log.recent(10, Some("skill_trigger"))
            .await
            .unwrap()
            .is_empty(),
        "no match, no event"
    );
    let t = h.triggered("deploy it").await.unwrap();
    assert_eq!(t.pointers.len(), 2, "a is pointer-only now too");
    let matches = log.recent(10, Some("skill_trigger")).await.unwrap();
    assert_eq!(matches.len(), 1, "one event for the whole matched set");
    assert_eq!(
        matches[0].event.detail["skills"].as_array().unwrap().len(),
        2
    );
    h.close().await.unwrap();
}
