//! The skills actor's side of the quarantine (issue 42, item 9): holding a
//! flagged SKILL.md, and attaching the writer that releases one
//! (`replay.rs`). The hold is the same as every memory writer's
//! (`hold.rs`): a row, an `injection_quarantined` audit event in the same
//! transaction, a security event.

use std::sync::Arc;

use actix::prelude::*;

use super::hold::hold;
use super::replay::SkillReplay;
use super::types::Held;
use crate::security::screen::Verdict;
use crate::vector_store::actor::VectorStore;
use crate::vector_store::error::VectorStoreError;

/// Where a flagged SKILL.md is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldSkill {
    /// The quarantine item's id.
    pub id: i64,
    /// The rule that flagged it.
    pub rule: &'static str,
    /// The rule's attack category, when it has one.
    pub category: Option<&'static str>,
}

/// Holds a SKILL.md write the screen flagged on uncertain evidence (an
/// identical held write answers its existing item).
#[derive(Debug, Message)]
#[rtype(result = "Result<HeldSkill, VectorStoreError>")]
pub(crate) struct HoldSkill {
    /// The write to replay on release.
    pub skill: SkillWrite,
    /// What was screened (the description and body), shown to the reviewer.
    pub text: String,
    /// The screen's verdict (its lane is `quarantine`).
    pub verdict: Verdict,
}

/// A SKILL.md write, as the quarantine holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillWrite {
    /// The skill (its sanitized key).
    pub name: String,
    /// The whole SKILL.md text.
    pub content: String,
    /// A new skill, or an overwrite of an owned one.
    pub create: bool,
    /// Who wrote it (`http`, `cli`, …).
    pub source: String,
}

/// Attaches the writer of released skills.
#[derive(Message)]
#[rtype(result = "Result<(), VectorStoreError>")]
pub(crate) struct AttachSkillReplay(pub Arc<dyn SkillReplay>);

impl Handler<HoldSkill> for VectorStore {
    type Result = AtomicResponse<Self, Result<HeldSkill, VectorStoreError>>;

    fn handle(&mut self, msg: HoldSkill, _: &mut Context<Self>) -> Self::Result {
        let screening = self.screening();
        self.atomic(move |pool, settings, now| async move {
            let held = Held::Skill {
                name: msg.skill.name,
                content: msg.skill.content,
                create: msg.skill.create,
                source: msg.skill.source,
            };
            let max = settings.max_events;
            match hold(&pool, &msg.verdict, held, &msg.text, &screening, &now, max).await {
                VectorStoreError::Quarantined { id, rule, category } => {
                    Ok(HeldSkill { id, rule, category })
                }
                failure => Err(failure),
            }
        })
    }
}

impl Handler<AttachSkillReplay> for VectorStore {
    type Result = Result<(), VectorStoreError>;

    fn handle(&mut self, msg: AttachSkillReplay, _: &mut Context<Self>) -> Self::Result {
        self.skill_replay = Some(msg.0);
        Ok(())
    }
}
