//! The lessons.jsonl fallback (spec: "Lessons → JSONL fallback"): where
//! lessons go when the memory store cannot be opened, and the legacy file
//! the migration reads. One JSON object per line:
//! `{"rule", "negative"?, "category", "source", "created_at"}`.
//!
//! The file keeps at most [`MAX_FILE_LESSONS`] lessons (oldest pruned) and
//! a context block shows at most [`MAX_CONTEXT_LESSONS`]: what sits on disk
//! and what reaches a prompt are different numbers. Every change rewrites
//! the file atomically (temporary file, fsync, rename), so a crash leaves
//! the old or the new list, never half of one. Unreadable lines are kept
//! out of the list with a warning, never fatal.
//!
//! Not an actor: the file is only touched by the one-shot CLI and the
//! migration, never concurrently by the daemon.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::vector_store::lessons::{
    lesson_key, render_lessons_block, validate_lesson, Lesson, LessonCategory, LessonWrite,
};

/// Lessons kept in the file.
pub const MAX_FILE_LESSONS: usize = 200;
/// Lessons injected into a context from the file.
pub const MAX_CONTEXT_LESSONS: usize = 50;

/// One line of lessons.jsonl.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileLesson {
    /// What to do.
    pub rule: String,
    /// What not to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negative: Option<String>,
    /// Category (unknown names read as knowledge).
    #[serde(default, deserialize_with = "category_or_default")]
    pub category: LessonCategory,
    /// Who wrote it.
    #[serde(default = "default_source")]
    pub source: String,
    /// When (RFC 3339); lines without one sort first.
    #[serde(default)]
    pub created_at: String,
}

fn default_source() -> String {
    "user_explicit".into()
}

fn category_or_default<'de, D: serde::Deserializer<'de>>(d: D) -> Result<LessonCategory, D::Error> {
    let name: Option<String> = Option::deserialize(d)?;
    Ok(name
        .as_deref()
        .and_then(LessonCategory::parse)
        .unwrap_or_default())
}

impl FileLesson {
    /// As the store's lesson type (keyed like a stored lesson).
    pub fn to_lesson(&self) -> Lesson {
        Lesson {
            key: lesson_key(&self.rule),
            rule: self.rule.clone(),
            negative: self.negative.clone(),
            category: self.category,
            source: self.source.clone(),
            created_at: self.created_at.clone(),
        }
    }
}

/// Errors of the file fallback.
#[derive(Debug, thiserror::Error)]
pub enum LessonFileError {
    /// The lesson itself is unacceptable.
    #[error("invalid lesson: {0}")]
    Invalid(String),
    /// No lesson with that key.
    #[error("no lesson with key {0:?}")]
    NotFound(String),
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// lessons.jsonl at a path.
#[derive(Debug, Clone)]
pub struct LessonFile {
    path: PathBuf,
}

impl LessonFile {
    /// The file at `path` (need not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, source: std::io::Error) -> LessonFileError {
        LessonFileError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Every readable lesson, oldest first. A missing file is empty.
    pub fn load(&self) -> Result<Vec<FileLesson>, LessonFileError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io(e)),
        };
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<FileLesson>(line) {
                Ok(l) if !l.rule.trim().is_empty() => out.push(l),
                Ok(_) => tracing::warn!(line = n + 1, "lessons.jsonl: empty rule skipped"),
                Err(e) => {
                    tracing::warn!(line = n + 1, error = %e, "lessons.jsonl: unreadable line skipped")
                }
            }
        }
        out.sort_by(|a, b| a.created_at.cmp(&b.created_at));
        Ok(out)
    }

    fn save(&self, lessons: &[FileLesson]) -> Result<(), LessonFileError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| self.io(e))?;
        for l in lessons {
            let line = serde_json::to_string(l).map_err(|e| self.io(e.into()))?;
            writeln!(tmp, "{line}").map_err(|e| self.io(e))?;
        }
        tmp.as_file().sync_all().map_err(|e| self.io(e))?;
        tmp.persist(&self.path).map_err(|e| self.io(e.error))?;
        Ok(())
    }

    /// Adds a lesson (the same rule again replaces its old line), then
    /// prunes the oldest beyond [`MAX_FILE_LESSONS`]. Returns its key.
    pub fn add(&self, write: &LessonWrite, now: &str) -> Result<String, LessonFileError> {
        let (rule, negative) = validate_lesson(write).map_err(LessonFileError::Invalid)?;
        let key = lesson_key(&rule);
        let mut lessons = self.load()?;
        lessons.retain(|l| lesson_key(&l.rule) != key);
        lessons.push(FileLesson {
            rule,
            negative,
            category: write.category,
            source: write.source.clone(),
            created_at: now.to_owned(),
        });
        let excess = lessons.len().saturating_sub(MAX_FILE_LESSONS);
        lessons.drain(..excess);
        self.save(&lessons)?;
        Ok(key)
    }

    /// Removes the lesson with `key`.
    pub fn remove(&self, key: &str) -> Result<(), LessonFileError> {
        let mut lessons = self.load()?;
        let before = lessons.len();
        lessons.retain(|l| lesson_key(&l.rule) != key);
        if lessons.len() == before {
            return Err(LessonFileError::NotFound(key.to_owned()));
        }
        self.save(&lessons)
    }

    /// The `[Learned corrections]` block from the file: the newest
    /// [`MAX_CONTEXT_LESSONS`], within `budget` characters.
    pub fn context(&self, budget: usize) -> Result<String, LessonFileError> {
        let lessons: Vec<Lesson> = self
            .load()?
            .iter()
            .rev()
            .take(MAX_CONTEXT_LESSONS)
            .map(FileLesson::to_lesson)
            .collect();
        Ok(render_lessons_block(&lessons, budget))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(i: usize) -> String {
        format!("2026-01-01T00:{:02}:{:02}.000000Z", i / 60, i % 60)
    }

    #[test]
    fn keeps_two_hundred_and_injects_fifty() {
        let dir = tempfile::tempdir().unwrap();
        let file = LessonFile::new(dir.path().join("lessons.jsonl"));
        for i in 0..205 {
            file.add(&LessonWrite::user(format!("rule {i:03}")), &ts(i))
                .unwrap();
        }
        let kept = file.load().unwrap();
        assert_eq!(kept.len(), 200);
        assert_eq!(kept[0].rule, "rule 005", "the oldest five were pruned");
        let block = file.context(1_000_000).unwrap();
        assert!(
            block.contains("(50 of 50 lessons shown, 0 omitted.)"),
            "{block}"
        );
        assert!(block.contains("- rule 204") && !block.contains("- rule 154"));
    }

    #[test]
    fn same_rule_replaces_and_remove_needs_a_known_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = LessonFile::new(dir.path().join("lessons.jsonl"));
        let key = file.add(&LessonWrite::user("use rg"), &ts(1)).unwrap();
        let mut again = LessonWrite::user("use  rg");
        again.category = LessonCategory::Tool;
        assert_eq!(file.add(&again, &ts(2)).unwrap(), key);
        let all = file.load().unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].category, LessonCategory::Tool);
        assert!(matches!(
            file.remove("lesson.nope"),
            Err(LessonFileError::NotFound(_))
        ));
        file.remove(&key).unwrap();
        assert!(file.load().unwrap().is_empty());
        assert!(file.add(&LessonWrite::user("  "), &ts(3)).is_err());
    }

    #[test]
    fn unreadable_lines_are_skipped_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lessons.jsonl");
        std::fs::write(
            &path,
            "{\"rule\":\"ok one\",\"category\":\"tool\"}\nnot json\n{\"rule\":\"\"}\n\n{\"rule\":\"ok two\",\"category\":\"weird\"}\n",
        )
        .unwrap();
        let all = LessonFile::new(&path).load().unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].category, LessonCategory::Tool);
        assert_eq!(all[1].category, LessonCategory::Knowledge);
        assert!(LessonFile::new(dir.path().join("absent.jsonl"))
            .load()
            .unwrap()
            .is_empty());
    }
}
