//! The quarantine lane (issue 41): writes the screen flagged on uncertain
//! evidence (`security::lane`), kept for a human instead of refused.
//!
//! Why a table of its own rather than a flag on the stored rows: nothing
//! that builds a prompt, a context block, an MCP answer or an export reads
//! this table, so a quarantined text cannot leak into one through a query
//! that forgot a filter. What it holds is the write itself (`payload`):
//! releasing an item replays it through the same writer it came from —
//! validation, conflict ladder, dedup, audit — with only the screen's
//! verdict set aside, because a person has read the text and vouched for
//! it. Dropping deletes it; both are audited in memory.db and recorded as
//! security events. Items expire after `security.quarantine_days`
//! (an audit event each); at most [`MAX_ITEMS`] are kept, the oldest going
//! first with an audit event, so a flood of flagged writes stays bounded.
//!
//! Who talks to it: every memory writer (`hold.rs`, called through
//! `refusal::enforce`), the skills actor for a flagged SKILL.md (`HoldSkill`;
//! released back through it, `replay.rs`), and the humans' surfaces through the handle: `GET
//! /api/memory/quarantine`, `POST …/{id}/release|drop`, the dashboard card,
//! `kirocrew memory quarantine list|release|drop` and the console.

pub(crate) mod db;
mod handle;
pub(crate) mod hold;
pub(crate) mod messages;
pub(crate) mod replay;
pub(crate) mod skills;
pub(crate) mod types;

pub use replay::{ReplayError, ReplayFuture, SkillReplay};
pub use types::{QuarantineItem, Released};

/// Items kept at most (the oldest are dropped beyond it, audited).
pub const MAX_ITEMS: i64 = 10_000;

/// The audit and security-event category of a quarantined write.
pub(crate) const INJECTION_QUARANTINED: &str = "injection_quarantined";
