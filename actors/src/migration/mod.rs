//! Migration of the legacy Markdown memory (and lessons.jsonl) into
//! memory.db (spec: "Migration (`migrate_from_markdown`)", "Lessons →
//! Migration").
//!
//! Everything goes through the store's ordinary write paths, so validation,
//! injection screening, the conflict ladder, embedding and audit apply as
//! for any writer:
//!
//! | source | becomes | confidence / importance |
//! |---|---|---|
//! | preferences.md `key: value` bullets | semantic `pref.*` (see [`parse`]) | 0.85, source `migration` |
//! | projects.md sections / bullets | semantic `project.<name>` + episodic details | 0.85 / 0.4 |
//! | history/YYYY-MM-DD.md entries | episodic fragments dated by file and time | 0.4 |
//! | lessons.jsonl lines | lessons, through `write_lesson` (dedup ladder) | 0.9 |
//!
//! Idempotent: a key that already has a row is skipped (whoever wrote an
//! active one, `user_explicit` included, keeps it; a tombstoned one was
//! deleted since an earlier run and stays deleted), and so is an episodic
//! fragment whose text was ever stored (active, deleted or evicted), so a
//! second run changes nothing and never resurrects what was removed. Values are injection-screened here before the store
//! screens them again, so a refused legacy line is reported in the
//! migration's counts instead of adding an `injection_blocked` event on
//! every run. The legacy files are only read, never changed.
//!
//! The caller (the daemon's boot task, `POST /api/memory/migrate`,
//! `kirocrew memory migrate`) sets `memory.migrated` and records the
//! `migration` audit event ([`record_migration_event`]).

mod lessons;
pub mod parse;
mod report;
mod run;

pub use report::{Counts, MigrationReport};
pub use run::{
    legacy_content_present, record_migration_event, run_migration, LegacySources,
    EPISODIC_IMPORTANCE, SEMANTIC_CONFIDENCE, SOURCE,
};
