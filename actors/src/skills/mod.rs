//! # Skills: the catalog and the usage ledger
//!
//! The `SkillLedger` actor owns `skill-usage.json` (the per-skill delivery
//! tally) and, beside it, the skill catalog: SKILL.md discovery across the
//! project, data-home and extra roots, and the frontmatter cache. Every
//! write (create, update, structured edit, delete, inject toggle) goes
//! through it and invalidates the catalog. Talked to by the HTTP routes
//! (`src/http/skills.rs`), the CLI (`kirocrew skills …`) and, later, the
//! context builder — always through [`SkillLedgerHandle`].
//!
//! Spec section: "Skills (`skills.py`)" (frontmatter grammar, nested
//! skills, source precedence and bundled skills, always-on / on-demand /
//! lazy-load, the usage ledger, `skill_search`, direct reads, trigger
//! matching with `inject_on_trigger`, the toggle, `list_skills` fields, the
//! Context Budget endpoint, the structured editor's preservation rule,
//! CRUD), and the injection screen of every write (issue 42: `screen.rs`,
//! `flagged.rs`; a flagged write is held in memory.db's quarantine).
//! Registry discovery and auto-created skills are not here.
//!
//! Layout: pure logic in [`frontmatter`] + [`lenient`] + [`keys`]
//! (reading SKILL.md), [`editor`] (structured edits and the toggle's line
//! edit), [`names`] (sanitizing, path safety), [`triggers`], [`crediting`]
//! (which tool calls read which skill), [`search`], [`budget`] (alias
//! folding), [`context`] (index, lazy top-K, `$name`), [`ledger`];
//! file-system work in [`catalog`], [`store`] and [`bundled`] (atomic writes: [`crate::atomic_file`]);
//! the actor in `actor.rs`, `messages.rs` and `context_messages.rs`.

mod actor;
mod budget;
mod bundled;
pub(crate) mod catalog;
mod context;
mod context_messages;
mod crediting;
mod editor;
mod error;
mod flagged;
pub mod frontmatter;
mod handle;
mod keys;
pub mod ledger;
mod lenient;
mod messages;
mod names;
mod screen;
mod search;
pub mod store;
pub(crate) mod triggers;
mod types;

pub use actor::SkillsConfig;
pub use editor::SkillEdit;
pub use error::SkillError;
pub use frontmatter::{FrontmatterState, ParseMode, SkillMeta};
pub use handle::SkillLedgerHandle;
pub use types::{
    BudgetReport, BudgetRow, CatalogEntry, MessageSkills, SearchHit, SessionSkills, SkillBody,
    SkillDetail, SkillInfo, SkillSource, ToggleOutcome, ToggleRefusal, ToolEvent, ToolEventOutcome,
    TriggeredSkills,
};
