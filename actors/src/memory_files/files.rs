//! [`MemoryDir`]: the Markdown memory layers on disk (spec: "Memory",
//! "Decaying Memory", "History Pruning") and the decaying-history cache.
//!
//! Plain synchronous code with no actix in it, so the `MemoryFiles` actor
//! stays thin and the history bench can drive it directly.
//!
//! - `preferences.md`, `projects.md`: replaced wholesale, atomically
//!   (temporary file in the same directory, fsync, rename).
//! - `history/YYYY-MM-DD.md`: append-only, one `## HH:MM` entry per append,
//!   dated and timed in the local time zone.
//! - [`MemoryDir::read_recent_history`]: the 181-day decay walk, cached for
//!   five seconds keyed on `(days, today)`; append and prune invalidate it.

use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Local, NaiveDate, Utc};
use serde::Serialize;

use super::disk::{
    io_err, markdown_names, read_text, HISTORY_DIR, PREFERENCES_FILE, PROJECTS_FILE,
};
use super::docs::{history_docs, split_sections, Doc};
use super::error::MemoryFilesError;
use super::history::{self, Tier};
use crate::clock::SharedClock;
use crate::control_chars::check_text;

/// How long an assembled history string is reused (`_HISTORY_CACHE_TTL_SECS`).
pub const HISTORY_CACHE_TTL: chrono::Duration = chrono::Duration::seconds(5);
/// Longest history entry accepted, in characters.
pub const MAX_ENTRY_CHARS: usize = 20_000;
/// Largest preferences/projects text accepted, in bytes.
pub const MAX_LAYER_BYTES: usize = 1 << 20;
/// The two wholesale-replaced layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// preferences.md
    Preferences,
    /// projects.md
    Projects,
}

impl Layer {
    /// The layer's file name.
    pub fn file_name(self) -> &'static str {
        match self {
            Layer::Preferences => PREFERENCES_FILE,
            Layer::Projects => PROJECTS_FILE,
        }
    }
}

/// What [`MemoryDir::append_history`] wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AppendedEntry {
    /// `history/YYYY-MM-DD.md`
    pub file: String,
    /// The local date.
    pub date: NaiveDate,
    /// The local time heading (`HH:MM`).
    pub time: String,
    /// The section as indexed.
    #[serde(skip)]
    pub doc: Doc,
}

/// What a prune did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PruneReport {
    /// Files deleted (names, oldest first).
    pub removed: Vec<String>,
    /// Dated files left.
    pub kept: usize,
    /// Files whose names are not dates (never touched).
    pub skipped: usize,
}

#[derive(Debug, Clone)]
struct CachedHistory {
    days: u32,
    today: NaiveDate,
    built: DateTime<Utc>,
    text: String,
}

/// The memory directory (`workspace/memory`).
pub struct MemoryDir {
    root: PathBuf,
    clock: SharedClock,
    cache: Option<CachedHistory>,
}

impl std::fmt::Debug for MemoryDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryDir")
            .field("root", &self.root)
            .finish()
    }
}

impl MemoryDir {
    /// The memory directory at `root`; nothing is created yet.
    pub fn new(root: PathBuf, clock: SharedClock) -> Self {
        Self {
            root,
            clock,
            cache: None,
        }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The history folder.
    pub fn history_dir(&self) -> PathBuf {
        self.root.join(HISTORY_DIR)
    }

    /// Creates the directory and its history folder.
    pub fn ensure(&self) -> Result<(), MemoryFilesError> {
        let dir = self.history_dir();
        fs::create_dir_all(&dir).map_err(io_err(&dir))
    }

    /// Now, in the local time zone.
    pub fn local_now(&self) -> DateTime<Local> {
        self.clock.now().with_timezone(&Local)
    }

    /// Today's local date.
    pub fn today(&self) -> NaiveDate {
        self.local_now().date_naive()
    }

    /// Drops the cached history string.
    pub fn invalidate_history_cache(&mut self) {
        self.cache = None;
    }

    /// The decayed history of the last 181 days, newest first: ages below
    /// `days` in full, below 61 compressed, below 181 as counts. Reused for
    /// five seconds while `(days, today)` is unchanged.
    pub fn read_recent_history(&mut self, days: u32) -> Result<String, MemoryFilesError> {
        if i64::from(days) > history::WINDOW_DAYS {
            return Err(MemoryFilesError::InvalidDays(days));
        }
        let now = self.clock.now();
        let today = self.today();
        if let Some(c) = &self.cache {
            let age = now - c.built;
            if c.days == days
                && c.today == today
                && age >= chrono::Duration::zero()
                && age < HISTORY_CACHE_TTL
            {
                return Ok(c.text.clone());
            }
        }
        let text = self.read_recent_history_uncached(days, today)?;
        self.cache = Some(CachedHistory {
            days,
            today,
            built: now,
            text: text.clone(),
        });
        Ok(text)
    }

    fn read_recent_history_uncached(
        &self,
        days: u32,
        today: NaiveDate,
    ) -> Result<String, MemoryFilesError> {
        let dir = self.history_dir();
        // One directory listing instead of 181 stats.
        let present: HashSet<String> = markdown_names(&dir).into_iter().collect();
        let mut blocks = Vec::new();
        for age in 0..history::WINDOW_DAYS {
            let date = today - chrono::Duration::days(age);
            let name = history::file_name(date);
            if !present.contains(&name) {
                continue;
            }
            let tier = history::tier_for(age, days);
            if tier == Tier::Outside {
                continue;
            }
            // One unreadable day must not cost the whole history block.
            let text = match read_text(&dir.join(&name)) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "history file skipped");
                    continue;
                }
            };
            let entries = history::parse_entries(&text);
            if let Some(block) = history::render_day(date, &entries, tier) {
                blocks.push(block);
            }
        }
        Ok(blocks.join("\n"))
    }

    /// Appends `text` to today's file under a `## HH:MM` heading (local
    /// time), creating the file with its `# date` title.
    pub fn append_history(&mut self, text: &str) -> Result<AppendedEntry, MemoryFilesError> {
        let text = text.trim();
        check_text("text", text)?;
        let chars = text.chars().count();
        if chars == 0 || chars > MAX_ENTRY_CHARS {
            return Err(MemoryFilesError::InvalidText(format!(
                "a history entry must have 1 to {MAX_ENTRY_CHARS} characters, got {chars}"
            )));
        }
        self.ensure()?;
        let now = self.local_now();
        let date = now.date_naive();
        let time = now.format("%H:%M").to_string();
        let name = history::file_name(date);
        let path = self.history_dir().join(&name);
        let mut chunk = String::new();
        let exists = path.exists();
        if !exists {
            chunk.push_str(&history::day_title(date));
        }
        chunk.push_str(&history::format_entry(&time, text));
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        file.write_all(chunk.as_bytes()).map_err(io_err(&path))?;
        file.sync_data().map_err(io_err(&path))?;
        self.invalidate_history_cache();
        let rel = format!("{HISTORY_DIR}/{name}");
        let doc = history_docs(&rel, date, &chunk)
            .pop()
            .unwrap_or_else(|| Doc {
                file: rel.clone(),
                section: format!("{date} {time}"),
                content: text.to_owned(),
            });
        Ok(AppendedEntry {
            file: rel,
            date,
            time,
            doc,
        })
    }

    /// Deletes dated history files older than `keep_days` (see
    /// [`history::prune_selection`]); other files are left alone.
    pub fn prune_history(&mut self, keep_days: u32) -> Result<PruneReport, MemoryFilesError> {
        if keep_days == 0 {
            return Err(MemoryFilesError::InvalidKeepDays(keep_days));
        }
        let dir = self.history_dir();
        let names = markdown_names(&dir);
        let doomed =
            history::prune_selection(names.iter().map(String::as_str), self.today(), keep_days);
        let mut report = PruneReport::default();
        for name in &doomed {
            let path = dir.join(name);
            match fs::remove_file(&path) {
                Ok(()) => report.removed.push(name.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&path)(e)),
            }
        }
        let dated = names
            .iter()
            .filter(|n| history::parse_file_name(n).is_some())
            .count();
        report.kept = dated - report.removed.len();
        report.skipped = names.len() - dated;
        self.invalidate_history_cache();
        Ok(report)
    }

    /// The text of a layer ("" when the file does not exist).
    pub fn read_layer(&self, layer: Layer) -> Result<String, MemoryFilesError> {
        Ok(read_text(&self.root.join(layer.file_name()))?.unwrap_or_default())
    }

    /// Replaces a layer's file atomically; returns its new sections.
    pub fn replace_layer(
        &mut self,
        layer: Layer,
        text: &str,
    ) -> Result<Vec<Doc>, MemoryFilesError> {
        if text.len() > MAX_LAYER_BYTES {
            return Err(MemoryFilesError::InvalidText(format!(
                "{} may hold at most {MAX_LAYER_BYTES} bytes, got {}",
                layer.file_name(),
                text.len()
            )));
        }
        check_text("text", text)?;
        self.ensure()?;
        let path = self.root.join(layer.file_name());
        crate::atomic_file::replace_atomic(&path, text.as_bytes()).map_err(io_err(&path))?;
        Ok(split_sections(layer.file_name(), text))
    }
}
