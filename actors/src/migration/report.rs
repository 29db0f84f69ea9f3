//! What a migration run did: counts per source, notes, and how one write
//! ended.

use serde::Serialize;

/// Rejection messages kept in a report (the counts are always complete).
const MAX_MESSAGES: usize = 50;

/// Counts for one kind of item.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Newly stored.
    pub migrated: u64,
    /// Already present (or a repeated key in the file): left alone.
    pub skipped: u64,
    /// Refused by validation or screening, or unparseable.
    pub rejected: u64,
}

/// What a migration did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MigrationReport {
    /// preferences.md bullets.
    pub preferences: Counts,
    /// projects.md projects (semantic).
    pub projects: Counts,
    /// projects.md details (episodic).
    pub project_details: Counts,
    /// history entries (episodic).
    pub history: Counts,
    /// lessons.jsonl lines.
    pub lessons: Counts,
    /// Why items were rejected (at most 50 messages).
    pub messages: Vec<String>,
}

impl MigrationReport {
    /// Rows newly stored.
    pub fn total_migrated(&self) -> u64 {
        [
            self.preferences,
            self.projects,
            self.project_details,
            self.history,
            self.lessons,
        ]
        .iter()
        .map(|c| c.migrated)
        .sum()
    }

    pub(super) fn note(&mut self, message: String) {
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push(message);
        }
    }
}

/// How one write ended, for the counts.
pub(super) enum Outcome {
    Migrated,
    Skipped,
    Rejected(String),
}

pub(super) fn tally(
    report: &mut MigrationReport,
    pick: fn(&mut MigrationReport) -> &mut Counts,
    what: &str,
    outcome: Outcome,
) {
    match outcome {
        Outcome::Migrated => pick(report).migrated += 1,
        Outcome::Skipped => pick(report).skipped += 1,
        Outcome::Rejected(reason) => {
            pick(report).rejected += 1;
            report.note(format!("{what}: {reason}"));
        }
    }
}
