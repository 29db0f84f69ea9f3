//! The Markdown memory layers through `MemoryFilesHandle`, with an injected
//! clock: decay tiers at their boundaries, the five-second cache and its
//! invalidation, midnight roll-over, pruning, the full-text index
//! (stemming, irregular forms, incremental updates, corruption recovery),
//! the cited context, and rejected input.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Duration, Local, NaiveDate, TimeZone, Utc};
use kirocrew_actors::clock::{ManualClock, SharedClock};
use kirocrew_actors::memory_files::{
    ContextCaps, Layer, MemoryFilesConfig, MemoryFilesError, MemoryFilesHandle,
};
use tempfile::TempDir;

/// Noon, local time, on 2026-03-14 (a day far from any DST change).
fn local(y: i32, m: u32, d: u32, h: u32, min: u32, s: u32) -> DateTime<Utc> {
    Local
        .with_ymd_and_hms(y, m, d, h, min, s)
        .earliest()
        .expect("local time")
        .with_timezone(&Utc)
}

fn noon() -> DateTime<Utc> {
    local(2026, 3, 14, 12, 0, 0)
}

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 3, 14).unwrap()
}

fn start(home: &Path, clock: Arc<ManualClock>) -> MemoryFilesHandle {
    MemoryFilesHandle::start(MemoryFilesConfig {
        memory_dir: home.join("workspace/memory"),
        index_path: home.join("memory_index.db"),
        clock: clock as SharedClock,
        rebuild_on_start: true,
    })
}

/// Writes a day file with `n` entries `"<tag> entry k"`.
fn write_day(home: &Path, date: NaiveDate, tag: &str, n: usize) {
    let dir = home.join("workspace/memory/history");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = format!("# {date}\n");
    for k in 0..n {
        text.push_str(&format!("\n## 0{k}:00\n{tag} entry {k}\n"));
    }
    std::fs::write(dir.join(format!("{date}.md")), text).unwrap();
}

fn ago(days: i64) -> NaiveDate {
    today() - Duration::days(days)
}

#[actix_rt::test]
async fn each_tier_boundary() {
    let home = TempDir::new().unwrap();
    for (age, tag) in [
        (0, "age0"),
        (13, "age13"),
        (14, "age14"),
        (60, "age60"),
        (61, "age61"),
        (180, "age180"),
        (181, "age181"),
    ] {
        write_day(home.path(), ago(age), tag, 3);
    }
    let files = start(home.path(), ManualClock::new(noon()));
    let text = files.read_recent_history(14).await.unwrap();

    // 0 and 13: every entry with its timestamp.
    for age in [0, 13] {
        let block = format!(
            "### {}\n- [00:00] age{age} entry 0\n- [01:00] age{age} entry 1\n- [02:00] age{age} entry 2",
            ago(age)
        );
        assert!(text.contains(&block), "age {age} in full:\n{text}");
    }
    // 14 and 60: header, first entry, the rest counted.
    for age in [14, 60] {
        let block = format!(
            "### {}\n- [00:00] age{age} entry 0\n…2 more entries",
            ago(age)
        );
        assert!(text.contains(&block), "age {age} compressed:\n{text}");
        assert!(!text.contains(&format!("age{age} entry 1")));
    }
    // 61 and 180: date and count only.
    for age in [61, 180] {
        assert!(
            text.contains(&format!("#### {} (3 entries)", ago(age))),
            "{text}"
        );
        assert!(!text.contains(&format!("age{age} entry")));
    }
    // 181: not read at all.
    assert!(!text.contains(&ago(181).to_string()), "{text}");
    // Newest first.
    let pos = |needle: &str| text.find(needle).unwrap();
    assert!(pos("age0 entry") < pos("age13 entry") && pos("age13") < pos(&ago(180).to_string()));

    // A narrower full tier moves the first boundary only.
    let narrow = files.read_recent_history(1).await.unwrap();
    assert!(narrow.contains("…2 more entries"));
    assert!(narrow.contains("age0 entry 2"));
    assert!(!narrow.contains("age13 entry 1"));
    files.close().await.unwrap();
}

#[actix_rt::test]
async fn cache_lives_five_seconds_and_append_or_prune_invalidate_it() {
    let home = TempDir::new().unwrap();
    let clock = ManualClock::new(noon());
    let files = start(home.path(), clock.clone());
    write_day(home.path(), ago(1), "first", 1);
    let first = files.read_recent_history(14).await.unwrap();
    assert!(first.contains("first entry 0"));

    // A file changed behind the actor's back is not seen for 5 s…
    write_day(home.path(), ago(2), "sneaky", 1);
    clock.advance(Duration::milliseconds(4_999));
    assert_eq!(files.read_recent_history(14).await.unwrap(), first);
    // …a different `days` is its own cache key…
    assert!(files
        .read_recent_history(13)
        .await
        .unwrap()
        .contains("sneaky"));
    // …and after 5 s it is.
    clock.advance(Duration::seconds(5));
    let fresh = files.read_recent_history(14).await.unwrap();
    assert!(fresh.contains("sneaky entry 0"));

    // Appending is visible at once, without the clock moving.
    files.append_history("appended right now").await.unwrap();
    assert!(files
        .read_recent_history(14)
        .await
        .unwrap()
        .contains("appended right now"));

    // So is pruning.
    write_day(home.path(), ago(400), "ancient", 1);
    clock.advance(Duration::seconds(6));
    let _ = files.read_recent_history(14).await.unwrap();
    std::fs::remove_file(
        home.path()
            .join(format!("workspace/memory/history/{}.md", ago(1))),
    )
    .unwrap();
    write_day(home.path(), ago(1), "rewritten", 1);
    files.prune_history(365).await.unwrap();
    let after = files.read_recent_history(14).await.unwrap();
    assert!(
        after.contains("rewritten entry 0"),
        "prune invalidated the cache"
    );
    files.close().await.unwrap();
}

#[actix_rt::test]
async fn midnight_rolls_the_tiers_over() {
    let home = TempDir::new().unwrap();
    let clock = ManualClock::new(local(2026, 3, 14, 23, 59, 58));
    write_day(home.path(), ago(13), "edge", 2);
    let files = start(home.path(), clock.clone());
    let before = files.read_recent_history(14).await.unwrap();
    assert!(before.contains("edge entry 1"), "age 13: full");

    // Three seconds later, inside the TTL but on the next day.
    clock.advance(Duration::seconds(3));
    let after = files.read_recent_history(14).await.unwrap();
    assert!(
        !after.contains("edge entry 1"),
        "age 14: compressed\n{after}"
    );
    assert!(after.contains("…1 more entry"));

    // Today's appends land in the new day's file, stamped in local time.
    let appended = files.append_history("just after midnight").await.unwrap();
    assert_eq!(appended.file, "history/2026-03-15.md");
    assert_eq!(appended.time, "00:00");
    files.close().await.unwrap();
}

#[actix_rt::test]
async fn prune_at_364_365_366_days_and_with_non_date_files() {
    let home = TempDir::new().unwrap();
    for age in [364, 365, 366, 700] {
        write_day(home.path(), ago(age), &format!("pruneage{age}"), 1);
    }
    let dir = home.path().join("workspace/memory/history");
    for odd in [
        "notes.md",
        "1999-02-31.md",
        "2000-01-01.md.bak",
        "backup-2001-01-01.md",
    ] {
        std::fs::write(dir.join(odd), "## x\nkeep me\n").unwrap();
    }
    let files = start(home.path(), ManualClock::new(noon()));
    assert_eq!(files.search("pruneage366", 10).await.unwrap().len(), 1);

    let report = files.prune_history(365).await.unwrap();
    assert_eq!(
        report.removed,
        vec![format!("{}.md", ago(700)), format!("{}.md", ago(366))]
    );
    assert_eq!(report.kept, 2);
    assert_eq!(
        report.skipped, 3,
        "non-date .md files are counted, never touched"
    );
    for age in [364, 365] {
        assert!(dir.join(format!("{}.md", ago(age))).exists(), "{age} kept");
    }
    for odd in [
        "notes.md",
        "1999-02-31.md",
        "2000-01-01.md.bak",
        "backup-2001-01-01.md",
    ] {
        assert!(dir.join(odd).exists(), "{odd} untouched");
    }
    // The index forgot the pruned days at once.
    assert!(files.search("pruneage366", 10).await.unwrap().is_empty());
    assert_eq!(files.search("pruneage365", 10).await.unwrap().len(), 1);
    assert!(matches!(
        files.prune_history(0).await,
        Err(MemoryFilesError::InvalidKeepDays(0))
    ));
    files.close().await.unwrap();
}

#[actix_rt::test]
async fn stemming_finds_running_ran_and_runs() {
    let home = TempDir::new().unwrap();
    let files = start(home.path(), ManualClock::new(noon()));
    files
        .append_history("Yesterday we ran the migration twice.")
        .await
        .unwrap();
    files
        .append_history("The nightly job runs the benchmarks.")
        .await
        .unwrap();
    files
        .append_history("Unrelated note about coffee.")
        .await
        .unwrap();

    let hits = files.search("running", 10).await.unwrap();
    let snippets: Vec<&str> = hits.iter().map(|h| h.snippet.as_str()).collect();
    assert_eq!(hits.len(), 2, "{snippets:?}");
    assert!(snippets.iter().any(|s| s.contains("ran")));
    assert!(snippets.iter().any(|s| s.contains("[runs]")));
    for hit in &hits {
        assert_eq!(hit.file, "history/2026-03-14.md");
        assert!(hit.section.starts_with("2026-03-14 "), "{}", hit.section);
    }
    // And the other way round: "ran" finds "running".
    files
        .append_history("Running out of disk again.")
        .await
        .unwrap();
    let hits = files.search("ran", 10).await.unwrap();
    assert_eq!(hits.len(), 3);
    // Unicode words are searchable.
    files
        .append_history("Réunion à Zürich über das Café")
        .await
        .unwrap();
    assert_eq!(files.search("zürich café", 10).await.unwrap().len(), 1);
    files.close().await.unwrap();
}

#[actix_rt::test]
async fn incremental_updates_and_full_rebuilds() {
    let home = TempDir::new().unwrap();
    let files = start(home.path(), ManualClock::new(noon()));
    files
        .replace_layer(
            Layer::Preferences,
            "# Preferences\n\n## Editor\n- editor: helix\n",
        )
        .await
        .unwrap();
    let hits = files.search("helix", 5).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].file, "preferences.md");
    assert_eq!(hits[0].section, "Editor");

    // Wholesale replacement drops the old sections from the index.
    files
        .replace_layer(Layer::Preferences, "## Editor\n- editor: zed\n")
        .await
        .unwrap();
    assert!(files.search("helix", 5).await.unwrap().is_empty());
    assert_eq!(files.search("zed", 5).await.unwrap().len(), 1);
    assert_eq!(
        files.layer(Layer::Preferences).await.unwrap(),
        "## Editor\n- editor: zed\n"
    );

    // A file edited outside the actor shows up after a rebuild.
    std::fs::write(
        home.path().join("workspace/memory/projects.md"),
        "## kirocrew\nActor service in Rust.\n",
    )
    .unwrap();
    assert!(files.search("actor", 5).await.unwrap().is_empty());
    let report = files.rebuild_index().await.unwrap();
    assert_eq!(report.sections, 2);
    assert_eq!(
        files.search("actor", 5).await.unwrap()[0].section,
        "kirocrew"
    );
    files.close().await.unwrap();
}

#[actix_rt::test]
async fn a_corrupt_index_is_rebuilt_not_fatal() {
    let home = TempDir::new().unwrap();
    write_day(home.path(), ago(3), "durable", 2);
    let index = home.path().join("memory_index.db");

    // Garbage over the file before start-up.
    std::fs::write(&index, vec![0xAB; 64 * 1024]).unwrap();
    let files = start(home.path(), ManualClock::new(noon()));
    assert_eq!(files.search("durable", 10).await.unwrap().len(), 2);
    files.close().await.unwrap();

    // Garbage over the file (and its WAL) while the actor has it open. Not
    // the -shm: SQLite maps the WAL index, and shrinking a mapped file
    // makes the next access a SIGBUS.
    let files = start(home.path(), ManualClock::new(noon()));
    assert_eq!(files.search("durable", 10).await.unwrap().len(), 2);
    for suffix in ["", "-wal"] {
        let path = format!("{}{suffix}", index.display());
        if Path::new(&path).exists() {
            std::fs::write(&path, b"this is not a database at all, not even close").unwrap();
        }
    }
    files.rebuild_index().await.unwrap();
    assert_eq!(files.search("durable", 10).await.unwrap().len(), 2);
    files.append_history("after the damage").await.unwrap();
    assert_eq!(files.search("damage", 10).await.unwrap().len(), 1);
    files.close().await.unwrap();

    // A one-shot reader (no rebuild on start) also heals a damaged file.
    std::fs::write(&index, b"garbage").unwrap();
    let reader = MemoryFilesHandle::start(MemoryFilesConfig {
        memory_dir: home.path().join("workspace/memory"),
        index_path: index.clone(),
        clock: ManualClock::new(noon()) as SharedClock,
        rebuild_on_start: false,
    });
    assert_eq!(reader.search("durable", 10).await.unwrap().len(), 2);
    reader.close().await.unwrap();
}

#[actix_rt::test]
async fn context_sections_are_cited_and_capped() {
    let home = TempDir::new().unwrap();
    let files = start(home.path(), ManualClock::new(noon()));
    files
        .replace_layer(Layer::Preferences, &"- tone: terse\n".repeat(1000))
        .await
        .unwrap();
    files.append_history("Shipped the release.").await.unwrap();
    let ctx = files.context(ContextCaps::default()).await.unwrap();
    let titles: Vec<_> = ctx.sections.iter().map(|s| s.title).collect();
    assert_eq!(
        titles,
        vec!["Preferences", "Recent History"],
        "empty projects.md is skipped"
    );
    assert!(ctx.sections[0]
        .source
        .ends_with("workspace/memory/preferences.md"));
    assert!(ctx.sections[0].text.chars().count() <= 4_290 + 20);
    assert!(ctx.sections[0].text.ends_with("…[truncated]"));
    assert!(ctx.sections[1]
        .source
        .ends_with("workspace/memory/history/"));
    let rendered = ctx.render();
    assert!(rendered.contains("## Recent History\n(source: "));
    assert!(rendered.contains("Shipped the release."));

    let small = files
        .context(ContextCaps {
            preferences: 100,
            projects: 100,
            history: 10,
        })
        .await
        .unwrap();
    assert!(small.sections[0].text.chars().count() <= 100 + 20);
    files.close().await.unwrap();
}

#[actix_rt::test]
async fn bad_input_is_rejected_without_touching_files() {
    let home = TempDir::new().unwrap();
    let files = start(home.path(), ManualClock::new(noon()));
    files.append_history("the only entry").await.unwrap();
    let path = home.path().join("workspace/memory/history/2026-03-14.md");
    let before = std::fs::read(&path).unwrap();

    assert!(matches!(
        files.append_history("   \n ").await,
        Err(MemoryFilesError::InvalidText(_))
    ));
    assert!(matches!(
        files.append_history(&"x".repeat(20_001)).await,
        Err(MemoryFilesError::InvalidText(_))
    ));
    // NUL and bidi overrides would reach a prompt through the context.
    for text in ["note\0hidden", "price \u{202E}001$", "a \u{2066}b\u{2069}"] {
        assert!(matches!(
            files.append_history(text).await,
            Err(MemoryFilesError::ControlCharacter(_))
        ));
    }
    assert!(matches!(
        files
            .replace_layer(Layer::Preferences, "- likes\u{202D} tea")
            .await,
        Err(MemoryFilesError::ControlCharacter(_))
    ));
    assert!(!home.path().join("workspace/memory/preferences.md").exists());
    assert!(matches!(
        files.search("  ?! ", 5).await,
        Err(MemoryFilesError::EmptyQuery)
    ));
    assert!(matches!(
        files.search(&"a".repeat(1001), 5).await,
        Err(MemoryFilesError::QueryTooLong { .. })
    ));
    // FTS5 syntax is never interpreted: its words are searched as words
    // ("or" is a stop word), and nothing is an error.
    let hits = files.search("entry\" OR NEAR(* -x", 5).await.unwrap();
    assert!(
        hits.iter().all(|h| h.snippet.contains("[entry]")),
        "{hits:?}"
    );
    assert!(files.search("\"NEAR(\" AND -", 5).await.unwrap().is_empty());
    assert_eq!(files.search("ONLY entry", 5).await.unwrap().len(), 1);
    assert!(matches!(
        files.read_recent_history(182).await,
        Err(MemoryFilesError::InvalidDays(182))
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    files.close().await.unwrap();
}
