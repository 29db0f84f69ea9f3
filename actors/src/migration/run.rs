//! The migration run: reads each legacy source, writes through the store's
//! ordinary writers, and tallies the outcome (see the module doc).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::memory_files::history::parse_file_name;
use crate::memory_files::{HISTORY_DIR, PREFERENCES_FILE, PROJECTS_FILE};
use crate::vector_store::episodic::EpisodicWrite;
use crate::vector_store::{
    KeyState, RecordEvent, SemanticWrite, VectorStoreError, VectorStoreHandle,
};

use super::lessons::migrate_lesson;
use super::report::{tally, MigrationReport, Outcome};

/// Confidence of migrated preferences and projects.
pub const SEMANTIC_CONFIDENCE: f64 = 0.85;
/// Importance of migrated history and project details.
pub const EPISODIC_IMPORTANCE: f64 = 0.4;
/// The source label of every migrated row.
pub const SOURCE: &str = "migration";

/// Where the legacy content lives.
#[derive(Debug, Clone)]
pub struct LegacySources {
    /// `workspace/memory`.
    pub memory_dir: PathBuf,
    /// `lessons.jsonl`.
    pub lessons_file: PathBuf,
}

fn read(path: &Path) -> std::io::Result<String> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e),
    }
}

/// Whether there is anything to migrate: a non-blank preferences.md or
/// projects.md, a non-blank history file, or a non-blank lessons.jsonl
/// (`legacy_memory_present()`, shared with `/api/memory/stats`).
pub fn legacy_content_present(sources: &LegacySources) -> bool {
    let non_blank = |p: &Path| read(p).is_ok_and(|t| !t.trim().is_empty());
    let dir = &sources.memory_dir;
    non_blank(&dir.join(PREFERENCES_FILE))
        || non_blank(&dir.join(PROJECTS_FILE))
        || non_blank(&sources.lessons_file)
        || std::fs::read_dir(dir.join(HISTORY_DIR)).is_ok_and(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().ends_with(".md") && non_blank(&e.path()))
        })
}

/// Writes a semantic entry unless its key already has an active row.
async fn write_key(
    store: &VectorStoreHandle,
    key: &str,
    value: Value,
    confidence: f64,
) -> Result<Outcome, VectorStoreError> {
    // An active key is kept as is; a tombstoned one was deleted since an
    // earlier run and stays deleted.
    if store.key_state(key).await? != KeyState::Absent {
        return Ok(Outcome::Skipped);
    }
    let write = SemanticWrite {
        key: key.to_owned(),
        value,
        confidence,
        source: SOURCE.to_owned(),
    };
    match store.write_semantic(write).await {
        Ok(_) => Ok(Outcome::Migrated),
        // A row written between the check and the write won the ladder.
        Err(VectorStoreError::ConflictSkipped { .. }) => Ok(Outcome::Skipped),
        Err(e) if e.is_rejection() => Ok(Outcome::Rejected(e.to_string())),
        Err(e) => Err(e),
    }
}

/// Stores an episodic fragment; an existing twin counts as skipped.
async fn write_fragment(
    store: &VectorStoreHandle,
    text: String,
    tags: &[&str],
    created_at: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<Outcome, VectorStoreError> {
    // Stored by an earlier run (and maybe deleted or evicted since).
    if store.episodic_text_seen(&text).await? {
        return Ok(Outcome::Skipped);
    }
    let mut write = EpisodicWrite::new(text, SOURCE);
    write.importance = EPISODIC_IMPORTANCE;
    write.tags = tags.iter().map(|t| (*t).to_owned()).collect();
    write.created_at = created_at;
    match store.write_episodic(write).await {
        Ok(_) => Ok(Outcome::Migrated),
        Err(VectorStoreError::DuplicateEpisode { .. }) => Ok(Outcome::Skipped),
        Err(e) if e.is_rejection() => Ok(Outcome::Rejected(e.to_string())),
        Err(e) => Err(e),
    }
}

/// Migrates everything under `sources` into `store`. Items the store
/// refuses are counted and reported; a store failure (database, actor
/// gone) stops the run with that error — rows already written stay, and a
/// re-run skips them.
pub async fn run_migration(
    store: &VectorStoreHandle,
    sources: &LegacySources,
) -> Result<MigrationReport, VectorStoreError> {
    let mut report = MigrationReport::default();
    let io = |path: &Path, e: std::io::Error| {
        VectorStoreError::Unavailable(format!("reading {}: {e}", path.display()))
    };
    let dir = &sources.memory_dir;

    let path = dir.join(PREFERENCES_FILE);
    let prefs = super::parse::parse_preferences(&read(&path).map_err(|e| io(&path, e))?);
    report.preferences.skipped += prefs.duplicates as u64;
    for reason in prefs.skipped {
        tally(
            &mut report,
            |r| &mut r.preferences,
            PREFERENCES_FILE,
            Outcome::Rejected(reason),
        );
    }
    for (key, value) in prefs.entries {
        let outcome = write_key(store, &key, Value::String(value), SEMANTIC_CONFIDENCE).await?;
        tally(&mut report, |r| &mut r.preferences, &key, outcome);
    }

    let path = dir.join(PROJECTS_FILE);
    for project in super::parse::parse_projects(&read(&path).map_err(|e| io(&path, e))?) {
        let outcome = write_key(
            store,
            &project.key,
            Value::String(project.summary),
            SEMANTIC_CONFIDENCE,
        )
        .await?;
        tally(&mut report, |r| &mut r.projects, &project.key, outcome);
        if let Some(details) = project.details {
            let outcome = write_fragment(store, details, &["project", "migration"], None).await?;
            tally(
                &mut report,
                |r| &mut r.project_details,
                &project.key,
                outcome,
            );
        }
    }

    let history_dir = dir.join(HISTORY_DIR);
    let mut names: Vec<String> = std::fs::read_dir(&history_dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for name in names {
        let Some(date) = parse_file_name(&name) else {
            continue;
        };
        let path = history_dir.join(&name);
        let text = read(&path).map_err(|e| io(&path, e))?;
        for fragment in super::parse::history_fragments(date, &text) {
            let label = format!("history/{name}");
            if fragment.truncated {
                report.note(format!("{label}: an entry was cut to 2000 characters"));
            }
            let outcome = write_fragment(
                store,
                fragment.text,
                &["history", "migration"],
                Some(fragment.created_at),
            )
            .await?;
            tally(&mut report, |r| &mut r.history, &label, outcome);
        }
    }

    let path = &sources.lessons_file;
    let (lessons, bad_lines) = super::parse::parse_lessons(&read(path).map_err(|e| io(path, e))?);
    for reason in bad_lines {
        tally(
            &mut report,
            |r| &mut r.lessons,
            "lessons.jsonl",
            Outcome::Rejected(reason),
        );
    }
    for lesson in lessons {
        let (key, outcome) = migrate_lesson(store, &lesson).await?;
        tally(&mut report, |r| &mut r.lessons, &key, outcome);
    }
    Ok(report)
}

/// Records the `migration` audit event with the report's counts.
pub async fn record_migration_event(
    store: &VectorStoreHandle,
    report: &MigrationReport,
    source: &str,
) -> Result<(), VectorStoreError> {
    let counts = serde_json::json!({
        "preferences": report.preferences,
        "projects": report.projects,
        "project_details": report.project_details,
        "history": report.history,
        "lessons": report.lessons,
        "migrated": report.total_migrated(),
    });
    store
        .record_event(RecordEvent {
            event_type: "migration".to_owned(),
            memory_type: "markdown".to_owned(),
            key: String::new(),
            new_value: Some(counts.to_string()),
            source: source.to_owned(),
        })
        .await
}
