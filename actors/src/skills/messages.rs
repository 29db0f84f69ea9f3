//! The skills actor's catalog protocol: listing, reading, writing,
//! searching, the inject toggle and the budget. Each request is one struct
//! with a thin handler; the logic is in the pure files beside.

use actix::prelude::*;

use super::actor::SkillLedger;
use super::budget::budget;
use super::editor::{apply_edit, set_inject_line, RewriteRefusal, SkillEdit};
use super::error::SkillError;
use super::flagged::Written;
use super::names::{check_safe, sanitize};
use super::search::{query_words, search};
use super::store;
use super::types::{
    BudgetReport, SearchHit, SkillDetail, SkillInfo, SkillSource, ToggleOutcome, ToggleRefusal,
};
use crate::vector_store::SkillWrite;

/// Every skill, by name.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<SkillInfo>, SkillError>")]
pub(crate) struct ListSkills;

/// One skill with its SKILL.md text.
#[derive(Debug, Message)]
#[rtype(result = "Result<SkillDetail, SkillError>")]
pub(crate) struct GetSkill {
    /// The skill (its key).
    pub name: String,
}

/// Creates a skill in the owned directory (the name is sanitized).
#[derive(Debug, Message)]
#[rtype(result = "Result<Written, SkillError>")]
pub(crate) struct CreateSkill {
    /// The skill (its key).
    pub name: String,
    /// The whole SKILL.md text.
    pub content: String,
    /// Who writes it (`http`, `cli`, …), for the security events.
    pub by: String,
    /// A person released it from the quarantine: not screened again.
    pub released: bool,
}

/// Overwrites an owned skill's SKILL.md.
#[derive(Debug, Message)]
#[rtype(result = "Result<Written, SkillError>")]
pub(crate) struct UpdateSkill {
    /// The skill (its key).
    pub name: String,
    /// The whole SKILL.md text.
    pub content: String,
    /// Who writes it.
    pub by: String,
    /// A person released it from the quarantine: not screened again.
    pub released: bool,
}

/// Applies a structured edit to an owned skill.
#[derive(Debug, Message)]
#[rtype(result = "Result<Written, SkillError>")]
pub(crate) struct EditSkill {
    /// The skill (its key).
    pub name: String,
    /// The fields to change.
    pub edit: SkillEdit,
    /// Who writes it.
    pub by: String,
}

/// Deletes an owned skill's directory.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), SkillError>")]
pub(crate) struct DeleteSkill {
    /// The skill (its key).
    pub name: String,
}

/// `skill_search`.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<SearchHit>, SkillError>")]
pub(crate) struct SearchSkills {
    /// The search words.
    pub query: String,
    /// At most this many hits.
    pub limit: usize,
}

/// The inject-on-trigger toggle.
#[derive(Debug, Message)]
#[rtype(result = "Result<ToggleOutcome, SkillError>")]
pub(crate) struct SetInjectOnTrigger {
    /// The skill (its key).
    pub name: String,
    /// True removes the key (inject), false writes `inject_on_trigger: false`.
    pub inject: bool,
    /// Who asked (`http`, `cli`, …), for the security event.
    pub actor: String,
}

/// The Context Budget report.
#[derive(Debug, Message)]
#[rtype(result = "Result<BudgetReport, SkillError>")]
pub(crate) struct GetBudget;

/// Forgets the discovered list (files changed behind the actor's back).
#[derive(Debug, Message)]
#[rtype(result = "Result<(), SkillError>")]
pub(crate) struct RefreshCatalog;

impl SkillLedger {
    /// The served entry of `name`, which must be in the owned directory.
    fn owned_entry(&mut self, name: &str) -> Result<(), SkillError> {
        check_safe(name)?;
        let entry = self
            .catalog
            .get(name)
            .ok_or_else(|| SkillError::NotFound(name.to_owned()))?;
        if !entry.owned || entry.source == SkillSource::Project {
            return Err(SkillError::NotOwned {
                name: name.to_owned(),
                reason: format!("it is served from {}", entry.path.display()),
            });
        }
        Ok(())
    }

    /// A `skill_change` security event for a write of `name` (issue 42:
    /// an `always: true` skill goes into every session start, so who
    /// changed what is recorded): whether it was created, `always` and
    /// `triggers` before and after when they changed, and the BLAKE3 of the
    /// new text (not the text).
    fn record_change(&self, name: &str, before: Option<&str>, after: &str, by: &str) {
        let new = super::frontmatter::parse(after);
        let old = before.map(super::frontmatter::parse);
        let mut detail = serde_json::json!({
            "name": name,
            "change": if old.is_some() { "updated" } else { "created" },
            "always": new.always,
            "content_hash": blake3::hash(after.as_bytes()).to_hex()[..16].to_owned(),
        });
        if let Some(old) = &old {
            if old.always != new.always {
                detail["always_before"] = serde_json::json!(old.always);
            }
            if old.triggers != new.triggers {
                detail["triggers_before"] = serde_json::json!(old.triggers);
                detail["triggers"] = serde_json::json!(new.triggers);
            }
        } else if !new.triggers.is_empty() {
            detail["triggers"] = serde_json::json!(new.triggers);
        }
        self.security_event("skill_change", by, "written", detail);
    }

    fn written(&mut self, name: &str) -> Result<Written, SkillError> {
        self.invalidate();
        let entry = self
            .catalog
            .get(name)
            .ok_or_else(|| SkillError::NotFound(name.to_owned()))?;
        Ok(Written::Stored(self.info(&entry)))
    }

    fn toggle(
        &mut self,
        name: &str,
        inject: bool,
    ) -> Result<(bool, Option<ToggleRefusal>), SkillError> {
        match self.owned_entry(name) {
            Err(SkillError::NotFound(_)) => return Ok((false, Some(ToggleRefusal::NotFound))),
            Err(SkillError::NotOwned { .. }) => return Ok((false, Some(ToggleRefusal::NotOwned))),
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        let home = self.config.skills_dir.clone();
        let (_, text) = match store::read_owned(&home, name) {
            Err(SkillError::NotOwned { .. }) => return Ok((false, Some(ToggleRefusal::NotOwned))),
            other => other?,
        };
        match set_inject_line(&text, inject) {
            Err(RewriteRefusal::NoFrontmatter | RewriteRefusal::Unterminated) => {
                Ok((false, Some(ToggleRefusal::NoFrontmatter)))
            }
            Ok(None) => Ok((false, None)),
            Ok(Some(new)) => {
                store::overwrite(&home, name, &new)?;
                self.invalidate();
                Ok((true, None))
            }
        }
    }
}

impl Handler<ListSkills> for SkillLedger {
    type Result = Result<Vec<SkillInfo>, SkillError>;

    fn handle(&mut self, _: ListSkills, _: &mut Context<Self>) -> Self::Result {
        // Entries past the window read as untracked, flush or not.
        self.ledger.prune(self.config.clock.now());
        let entries = self.catalog.entries();
        Ok(entries.iter().map(|e| self.info(e)).collect())
    }
}

impl Handler<GetSkill> for SkillLedger {
    type Result = Result<SkillDetail, SkillError>;

    fn handle(&mut self, msg: GetSkill, _: &mut Context<Self>) -> Self::Result {
        check_safe(&msg.name)?;
        let entry = self
            .catalog
            .get(&msg.name)
            .ok_or_else(|| SkillError::NotFound(msg.name.clone()))?;
        let bytes = std::fs::read(&entry.path).map_err(super::error::io_error(&entry.path))?;
        let content = String::from_utf8_lossy(&bytes).into_owned();
        Ok(SkillDetail {
            info: self.info(&entry),
            content,
        })
    }
}

impl Handler<CreateSkill> for SkillLedger {
    type Result = Result<Written, SkillError>;

    fn handle(&mut self, msg: CreateSkill, _: &mut Context<Self>) -> Self::Result {
        let name = sanitize(&msg.name)?;
        if self.catalog.get(&name).is_some() {
            return Err(SkillError::AlreadyExists(name));
        }
        store::validate_content(&msg.content)?;
        let write = SkillWrite {
            name,
            content: msg.content,
            create: true,
            source: msg.by,
        };
        if let Some(flagged) = self.screen_write(&write, msg.released)? {
            return Ok(Written::Flagged(Box::new(flagged)));
        }
        store::create(&self.config.skills_dir, &write.name, &write.content)?;
        self.record_change(&write.name, None, &write.content, &write.source);
        self.written(&write.name)
    }
}

impl Handler<UpdateSkill> for SkillLedger {
    type Result = Result<Written, SkillError>;

    fn handle(&mut self, msg: UpdateSkill, _: &mut Context<Self>) -> Self::Result {
        self.owned_entry(&msg.name)?;
        store::validate_content(&msg.content)?;
        let write = SkillWrite {
            name: msg.name,
            content: msg.content,
            create: false,
            source: msg.by,
        };
        if let Some(flagged) = self.screen_write(&write, msg.released)? {
            return Ok(Written::Flagged(Box::new(flagged)));
        }
        let before = store::read_owned(&self.config.skills_dir, &write.name).ok();
        store::overwrite(&self.config.skills_dir, &write.name, &write.content)?;
        let before = before.as_ref().map(|(_, t)| t.as_str());
        self.record_change(&write.name, before, &write.content, &write.source);
        self.written(&write.name)
    }
}

impl Handler<EditSkill> for SkillLedger {
    type Result = Result<Written, SkillError>;

    fn handle(&mut self, msg: EditSkill, _: &mut Context<Self>) -> Self::Result {
        self.owned_entry(&msg.name)?;
        let (_, text) = store::read_owned(&self.config.skills_dir, &msg.name)?;
        let new = apply_edit(&text, &msg.edit)
            .map_err(|_| SkillError::UnterminatedFrontmatter(msg.name.clone()))?;
        store::validate_content(&new)?;
        let write = SkillWrite {
            name: msg.name,
            content: new,
            create: false,
            source: msg.by,
        };
        if let Some(flagged) = self.screen_write(&write, false)? {
            return Ok(Written::Flagged(Box::new(flagged)));
        }
        store::overwrite(&self.config.skills_dir, &write.name, &write.content)?;
        self.record_change(&write.name, Some(&text), &write.content, &write.source);
        self.written(&write.name)
    }
}

impl Handler<DeleteSkill> for SkillLedger {
    type Result = Result<(), SkillError>;

    fn handle(&mut self, msg: DeleteSkill, _: &mut Context<Self>) -> Self::Result {
        self.owned_entry(&msg.name)?;
        let prefix = format!("{}/", msg.name);
        let nested: Vec<String> = self
            .catalog
            .entries()
            .iter()
            .filter(|e| e.name.starts_with(&prefix))
            .map(|e| e.name.clone())
            .collect();
        store::delete(&self.config.skills_dir, &msg.name, &nested)?;
        self.invalidate();
        Ok(())
    }
}

impl Handler<SearchSkills> for SkillLedger {
    type Result = Result<Vec<SearchHit>, SkillError>;

    fn handle(&mut self, msg: SearchSkills, _: &mut Context<Self>) -> Self::Result {
        let words = query_words(&msg.query)?;
        let entries = self.catalog.entries();
        Ok(search(&entries, &words, msg.limit, |p| {
            std::fs::read_to_string(p).ok()
        }))
    }
}

impl Handler<SetInjectOnTrigger> for SkillLedger {
    type Result = Result<ToggleOutcome, SkillError>;

    fn handle(&mut self, msg: SetInjectOnTrigger, _: &mut Context<Self>) -> Self::Result {
        let result = self.toggle(&msg.name, msg.inject);
        let outcome = match &result {
            Ok((true, _)) => "ok",
            Ok((false, None)) => "unchanged",
            Ok((false, Some(_))) | Err(_) => "refused",
        };
        let reason = match &result {
            Ok((_, Some(r))) => serde_json::to_value(r).unwrap_or_default(),
            Err(e) => e.to_string().into(),
            Ok((_, None)) => serde_json::Value::Null,
        };
        // Every outcome, rejections included: "who made this skill
        // advisory, and when" must be answerable.
        self.security_event(
            "skill_toggle",
            &msg.actor,
            outcome,
            serde_json::json!({"skill": msg.name, "inject_on_trigger": msg.inject, "reason": reason}),
        );
        let (changed, refused) = result?;
        Ok(ToggleOutcome {
            name: msg.name,
            inject: msg.inject,
            ok: refused.is_none(),
            changed,
            refused,
        })
    }
}

impl Handler<GetBudget> for SkillLedger {
    type Result = Result<BudgetReport, SkillError>;

    fn handle(&mut self, _: GetBudget, _: &mut Context<Self>) -> Self::Result {
        let now = self.config.clock.now();
        self.ledger.prune(now);
        let (entries, real) = self.real_paths();
        Ok(budget(&entries, &real, self.ledger.entries(), now))
    }
}

impl Handler<RefreshCatalog> for SkillLedger {
    type Result = Result<(), SkillError>;

    fn handle(&mut self, _: RefreshCatalog, _: &mut Context<Self>) -> Self::Result {
        self.invalidate();
        Ok(())
    }
}
