//! The skills actor's three-way rule for a SKILL.md write (issue 42,
//! item 9; the screen is `screen.rs`): an allowed write goes on; a blocked
//! one is refused here with an `injection_blocked` security event; a
//! flagged one comes back to the handle as [`Written::Flagged`], which
//! holds it in memory.db's quarantine (the actor runs on its own arbiter
//! with synchronous file I/O, so it does not wait on the store itself).
//! A write a person released from the quarantine skips the screen.

use serde_json::json;

use super::actor::SkillLedger;
use super::error::SkillError;
use super::screen::screen_skill;
use super::types::SkillInfo;
use crate::security::lane::Lane;
use crate::security::redact::redact;
use crate::security::screen::Verdict;
use crate::vector_store::SkillWrite;

/// What a write handler answers the handle.
#[derive(Debug)]
pub(crate) enum Written {
    /// Written to the skills directory.
    Stored(SkillInfo),
    /// Flagged on uncertain evidence, not written: to be held.
    Flagged(Box<Flagged>),
}

/// A flagged write, as the quarantine holds it.
#[derive(Debug)]
pub(crate) struct Flagged {
    /// The write to replay on release.
    pub write: SkillWrite,
    /// What was screened (description and body).
    pub text: String,
    /// The screen's verdict.
    pub verdict: Verdict,
}

impl SkillLedger {
    /// Screens `write` (unless a person released it): `Ok(None)` to go on,
    /// `Ok(Some(_))` to hold, `Err` when blocked (recorded).
    pub(super) fn screen_write(
        &self,
        write: &SkillWrite,
        released: bool,
    ) -> Result<Option<Flagged>, SkillError> {
        if released {
            return Ok(None);
        }
        let screened = screen_skill(&write.content);
        match screened.verdict.lane() {
            Lane::Allow => Ok(None),
            Lane::Quarantine => Ok(Some(Flagged {
                write: write.clone(),
                text: screened.text,
                verdict: screened.verdict,
            })),
            Lane::Block => {
                let v = &screened.verdict;
                let rule = v.rule.unwrap_or("injection");
                tracing::warn!(skill = %write.name, rule, "skill write blocked by injection screening");
                self.security_event(
                    "injection_blocked",
                    &write.source,
                    "blocked",
                    json!({
                        "memory_type": "skill",
                        "key": write.name,
                        "rule": rule,
                        "category": v.category.map(|c| c.as_str()),
                        "layer": v.layer.map(|l| l.as_str()),
                        "matched": v.matched.as_deref().map(redact),
                        "snippet": redact(&screened.text),
                    }),
                );
                Err(SkillError::InjectionBlocked { rule })
            }
        }
    }
}
