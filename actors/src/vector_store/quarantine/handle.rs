//! Quarantine methods of [`VectorStoreHandle`]. Release and drop are for
//! people (the REST API, the dashboard, the CLI, the console); no agent
//! surface (MCP, hooks) calls them.

use std::sync::Arc;

use super::messages::{
    DropQuarantined, ExpireQuarantine, ListQuarantine, ReleaseQuarantined, SearchQuarantine,
};
use super::replay::SkillReplay;
use super::skills::{AttachSkillReplay, HeldSkill, HoldSkill, SkillWrite};
use super::types::{QuarantineItem, Released};
use crate::security::screen::Verdict;
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::handle::VectorStoreHandle;
use crate::vector_store::keyword::{is_stop_word, words};

/// Words of a query shorter than this are not matched against held items.
const MIN_WORD_CHARS: usize = 4;
/// Query words matched at most.
const MAX_WORDS: usize = 8;

impl VectorStoreHandle {
    /// The newest `limit` quarantined items, newest first, and the total.
    pub async fn list_quarantine(
        &self,
        limit: u32,
    ) -> Result<(Vec<QuarantineItem>, i64), VectorStoreError> {
        self.ask(ListQuarantine { limit }).await
    }

    /// Held items that share words with `query`: a search answers with
    /// them marked, never as trusted results.
    pub async fn search_quarantine(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<Vec<QuarantineItem>, VectorStoreError> {
        let mut picked: Vec<String> = Vec::new();
        for w in words(query).filter(|w| w.chars().count() >= MIN_WORD_CHARS && !is_stop_word(w)) {
            if !picked.contains(&w) && picked.len() < MAX_WORDS {
                picked.push(w);
            }
        }
        self.ask(SearchQuarantine {
            words: picked,
            limit,
        })
        .await
    }

    /// Releases item `id`: its write is replayed through its writer with
    /// the screen's verdict set aside (validation, ladder and audit still
    /// apply); the item is removed once the write is stored.
    pub async fn release_quarantined(
        &self,
        id: i64,
        by: &str,
    ) -> Result<Released, VectorStoreError> {
        let by = by.to_owned();
        self.ask(ReleaseQuarantined { id, by }).await
    }

    /// Drops item `id` for good.
    pub async fn drop_quarantined(
        &self,
        id: i64,
        by: &str,
    ) -> Result<QuarantineItem, VectorStoreError> {
        let by = by.to_owned();
        self.ask(DropQuarantined { id, by }).await
    }

    /// Removes items held longer than `days` days (an audit event each);
    /// returns how many.
    pub async fn expire_quarantine(&self, days: u32) -> Result<usize, VectorStoreError> {
        self.ask(ExpireQuarantine { days }).await
    }

    /// Holds a flagged SKILL.md write (`text`: what was screened) for a
    /// person to release or drop.
    pub async fn hold_skill(
        &self,
        skill: SkillWrite,
        text: String,
        verdict: Verdict,
    ) -> Result<HeldSkill, VectorStoreError> {
        self.ask(HoldSkill {
            skill,
            text,
            verdict,
        })
        .await
    }

    /// Attaches the writer that releases held skills (the skills actor).
    pub async fn attach_skill_replay(
        &self,
        writer: Arc<dyn SkillReplay>,
    ) -> Result<(), VectorStoreError> {
        self.ask(AttachSkillReplay(writer)).await
    }
}
