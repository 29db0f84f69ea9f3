//! Releasing a held skill (issue 42, item 9). The store keeps the item, but
//! the skills directory belongs to the skills actor, so the store cannot
//! write the SKILL.md itself: the skills actor attaches itself here at
//! start-up ([`crate::vector_store::VectorStoreHandle::attach_skill_replay`])
//! and a release hands it the held text. Why a trait rather than the skills
//! handle: the skills module already depends on the store (it holds its
//! flagged writes there); the store depending back on it would tie the two
//! modules in a knot. The item is removed only after the skill is written,
//! so a refused replay (the name was taken meanwhile, the skill is no
//! longer owned) leaves it held and the reviewer sees why.

use std::future::Future;
use std::pin::Pin;

/// Why a skill could not be written on release.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The skills actor refused the write (its message).
    #[error("{0}")]
    Refused(String),
    /// The skills actor is not running (shutting down).
    #[error("skills unavailable: {0}")]
    Unavailable(String),
}

/// What a replay answers.
pub type ReplayFuture = Pin<Box<dyn Future<Output = Result<(), ReplayError>>>>;

/// The writer of released skills (the skills actor's handle).
pub trait SkillReplay: Send + Sync + 'static {
    /// Writes `content` as skill `name`, past the screen (a person
    /// vouched for it); `create`: a new skill, else an overwrite of an
    /// owned one. Every other rule of the skill writer still applies.
    fn replay(&self, name: String, content: String, create: bool) -> ReplayFuture;
}
