//! [`SkillLedgerHandle`]: the only way the rest of kirocrew talks to the
//! skills actor. Cloneable, `Send`, free of actix types.

use std::path::{Path, PathBuf};

use actix::prelude::*;

use super::actor::{SkillLedger, SkillsConfig};
use super::context_messages::*;
use super::editor::SkillEdit;
use super::error::SkillError;
use super::flagged::{Flagged, Written};
use super::messages::*;
use super::types::{
    BudgetReport, MessageSkills, SearchHit, SessionSkills, SkillBody, SkillDetail, SkillInfo,
    ToggleOutcome, ToolEvent, ToolEventOutcome, TriggeredSkills,
};
use crate::ask::ask;
use crate::vector_store::{HeldSkill, ReplayError, ReplayFuture, SkillReplay, VectorStoreHandle};

/// A cloneable reference to the running skills actor.
#[derive(Clone)]
pub struct SkillLedgerHandle {
    addr: Addr<SkillLedger>,
    arbiter: ArbiterHandle,
    skills_dir: PathBuf,
    /// Where flagged writes are held (`SkillsConfig::quarantine`).
    quarantine: Option<VectorStoreHandle>,
}

impl std::fmt::Debug for SkillLedgerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillLedgerHandle")
            .field("skills_dir", &self.skills_dir)
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl SkillLedgerHandle {
    /// Starts the actor on its own arbiter thread (it loads the ledger and,
    /// if configured, syncs the bundled skills). Must run inside an actix
    /// `System`.
    pub fn start(config: SkillsConfig) -> Self {
        let arbiter = Arbiter::new().handle();
        let skills_dir = config.skills_dir.clone();
        let quarantine = config.quarantine.clone();
        let addr = SkillLedger::start_in_arbiter(&arbiter, move |_| SkillLedger::new(config));
        Self {
            addr,
            arbiter,
            skills_dir,
            quarantine,
        }
    }

    /// Sends a write; a flagged one is held in the quarantine and answered
    /// as [`SkillError::Quarantined`] (`flagged.rs`).
    async fn write<M>(&self, msg: M) -> Result<SkillInfo, SkillError>
    where
        M: Message<Result = Result<Written, SkillError>> + Send + 'static,
        SkillLedger: Handler<M>,
    {
        match self.ask(msg).await? {
            Written::Stored(info) => Ok(info),
            Written::Flagged(flagged) => Err(self.hold(*flagged).await),
        }
    }

    async fn hold(&self, flagged: Flagged) -> SkillError {
        let rule = flagged.verdict.rule.unwrap_or("injection");
        let Some(store) = &self.quarantine else {
            return SkillError::ReviewUnavailable { rule };
        };
        match store
            .hold_skill(flagged.write, flagged.text, flagged.verdict)
            .await
        {
            Ok(HeldSkill { id, rule, category }) => SkillError::Quarantined { id, rule, category },
            Err(e) => SkillError::Unavailable(format!("the quarantine could not hold it: {e}")),
        }
    }

    async fn ask<M, T>(&self, msg: M) -> Result<T, SkillError>
    where
        M: Message<Result = Result<T, SkillError>> + Send + 'static,
        T: Send + 'static,
        SkillLedger: Handler<M>,
    {
        ask(&self.addr, msg).await
    }

    /// The owned skills directory.
    pub fn skills_dir(&self) -> &Path {
        &self.skills_dir
    }

    /// Every skill (`list_skills`), by name.
    pub async fn list(&self) -> Result<Vec<SkillInfo>, SkillError> {
        self.ask(ListSkills).await
    }

    /// One skill with its SKILL.md text.
    pub async fn get(&self, name: &str) -> Result<SkillDetail, SkillError> {
        self.ask(GetSkill {
            name: name.to_owned(),
        })
        .await
    }

    /// Creates a skill on behalf of `by` (`http`, `cli`, …); `name` is
    /// sanitized (lowercase, hyphens, slashes). The description and body
    /// are screened: a flagged skill is held for review
    /// ([`SkillError::Quarantined`]), a blocked one refused.
    pub async fn create(
        &self,
        name: &str,
        content: &str,
        by: &str,
    ) -> Result<SkillInfo, SkillError> {
        self.write(CreateSkill {
            name: name.to_owned(),
            content: content.to_owned(),
            by: by.to_owned(),
            released: false,
        })
        .await
    }

    /// Overwrites an owned skill's SKILL.md (screened like `create`).
    pub async fn update(
        &self,
        name: &str,
        content: &str,
        by: &str,
    ) -> Result<SkillInfo, SkillError> {
        self.write(UpdateSkill {
            name: name.to_owned(),
            content: content.to_owned(),
            by: by.to_owned(),
            released: false,
        })
        .await
    }

    /// Applies a structured edit (every unmodelled key kept byte for byte;
    /// the result screened like `create`).
    pub async fn edit(
        &self,
        name: &str,
        edit: SkillEdit,
        by: &str,
    ) -> Result<SkillInfo, SkillError> {
        self.write(EditSkill {
            name: name.to_owned(),
            edit,
            by: by.to_owned(),
        })
        .await
    }

    /// Deletes an owned skill's directory.
    pub async fn delete(&self, name: &str) -> Result<(), SkillError> {
        self.ask(DeleteSkill {
            name: name.to_owned(),
        })
        .await
    }

    /// `skill_search`: metadata first, bodies on a miss; records nothing.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, SkillError> {
        self.ask(SearchSkills {
            query: query.to_owned(),
            limit,
        })
        .await
    }

    /// The inject-on-trigger toggle, on behalf of `actor` (audited).
    pub async fn set_inject_on_trigger(
        &self,
        name: &str,
        inject: bool,
        actor: &str,
    ) -> Result<ToggleOutcome, SkillError> {
        self.ask(SetInjectOnTrigger {
            name: name.to_owned(),
            inject,
            actor: actor.to_owned(),
        })
        .await
    }

    /// The Context Budget report.
    pub async fn budget(&self) -> Result<BudgetReport, SkillError> {
        self.ask(GetBudget).await
    }

    /// Rediscovers on the next use.
    pub async fn refresh(&self) -> Result<(), SkillError> {
        self.ask(RefreshCatalog).await
    }

    /// The skills section of a new session (`budget` applies under
    /// `skills.lazy_load`).
    pub async fn session_skills(&self, budget: usize) -> Result<SessionSkills, SkillError> {
        self.ask(GetSessionSkills { budget }).await
    }

    /// Bodies for the `$name` tokens of `message` (each earns a hit).
    pub async fn dollar_skills(&self, message: &str) -> Result<Vec<SkillBody>, SkillError> {
        self.ask(ResolveDollarSkills {
            message: message.to_owned(),
        })
        .await
    }

    /// One skill's body by exact name; the delivery earns a hit, as a
    /// `$name` token's does. [`SkillError::NotFound`] for an unknown name.
    pub async fn deliver(&self, name: &str) -> Result<SkillBody, SkillError> {
        self.ask(DeliverSkill {
            name: name.to_owned(),
        })
        .await
    }

    /// Trigger matches for `message` (bodies earn hits; pointers do not).
    pub async fn triggered(&self, message: &str) -> Result<TriggeredSkills, SkillError> {
        self.ask(MatchTriggers {
            message: message.to_owned(),
        })
        .await
    }

    /// What a message's `$name` tokens and triggers yield, recording
    /// nothing: the caller records what it delivers with [`Self::record_use`].
    pub async fn message_skills(&self, message: &str) -> Result<MessageSkills, SkillError> {
        self.ask(GetMessageSkills {
            message: message.to_owned(),
        })
        .await
    }

    /// Counts deliveries the caller made itself.
    pub async fn record_use(&self, names: &[String]) -> Result<usize, SkillError> {
        self.ask(RecordSkillUse {
            names: names.to_vec(),
        })
        .await
    }

    /// One gateway tool-call event: resolves candidates, credits them on
    /// `completed` (once per `tool_call_id`).
    pub async fn observe_tool_event(
        &self,
        event: ToolEvent,
    ) -> Result<ToolEventOutcome, SkillError> {
        self.ask(ObserveToolEvent { event }).await
    }

    /// Writes the ledger now (normally debounced); true if it wrote.
    pub async fn flush(&self) -> Result<bool, SkillError> {
        self.ask(FlushLedger).await
    }

    /// Flushes the ledger and stops the actor's thread.
    pub async fn close(&self) -> Result<(), SkillError> {
        let res = self.ask(CloseSkills).await;
        self.arbiter.stop();
        res
    }
}

/// Releases held skills (`vector_store/quarantine/replay.rs`): the held
/// text is written past the screen, every other rule still applies.
impl SkillReplay for SkillLedgerHandle {
    fn replay(&self, name: String, content: String, create: bool) -> ReplayFuture {
        let me = self.clone();
        Box::pin(async move {
            let by = "quarantine_release".to_owned();
            let written = if create {
                let msg = CreateSkill {
                    name,
                    content,
                    by,
                    released: true,
                };
                me.write(msg).await
            } else {
                let msg = UpdateSkill {
                    name,
                    content,
                    by,
                    released: true,
                };
                me.write(msg).await
            };
            match written {
                Ok(_) => Ok(()),
                Err(SkillError::Unavailable(why)) => Err(ReplayError::Unavailable(why)),
                Err(refused) => Err(ReplayError::Refused(refused.to_string())),
            }
        })
    }
}
