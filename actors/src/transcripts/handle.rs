//! [`TranscriptsHandle`]: the transcripts' cloneable, actix-free interface.

use actix::prelude::*;

use super::actor::Transcripts;
use super::error::TranscriptError;
use super::import::ImportTurns;
use super::messages::{
    AppendTurn, ClaimPrompt, GetRecentTurns, GetTurnsSince, ListSessions, MarkConsolidated,
};
use super::types::{
    ImportOutcome, ImportedTurn, NewTurn, PromptOrder, SessionMeta, TranscriptsConfig, Turn,
};
use crate::ask::ask;

/// A cloneable reference to the running transcripts actor.
#[derive(Clone)]
pub struct TranscriptsHandle {
    addr: Addr<Transcripts>,
}

impl std::fmt::Debug for TranscriptsHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptsHandle")
            .field("connected", &self.addr.connected())
            .finish()
    }
}

impl TranscriptsHandle {
    /// Loads the sessions' metadata and starts. Must run inside an actix
    /// `System`.
    pub fn start(config: TranscriptsConfig) -> Self {
        Self {
            addr: Transcripts::load(config).start(),
        }
    }

    /// Appends a turn; answers the session's updated metadata.
    pub async fn append(&self, turn: NewTurn) -> Result<SessionMeta, TranscriptError> {
        ask(&self.addr, AppendTurn(turn)).await
    }

    /// Claims the next user prompt of `key`: whether it is the session's
    /// first (no user turn recorded and no earlier prompt claimed), and why.
    /// Used when a surface does not say (the hook adapter never knows).
    pub async fn claim_prompt(&self, key: &str) -> Result<PromptOrder, TranscriptError> {
        ask(
            &self.addr,
            ClaimPrompt {
                key: key.to_owned(),
            },
        )
        .await
    }

    /// Imports turns kept elsewhere, each id at most once per session.
    pub async fn import(
        &self,
        key: &str,
        turns: Vec<ImportedTurn>,
    ) -> Result<ImportOutcome, TranscriptError> {
        ask(
            &self.addr,
            ImportTurns {
                key: key.to_owned(),
                turns,
            },
        )
        .await
    }

    /// The newest `n` turns of `key`, oldest first (none for an unknown
    /// session).
    pub async fn recent(&self, key: &str, n: usize) -> Result<Vec<Turn>, TranscriptError> {
        ask(
            &self.addr,
            GetRecentTurns {
                key: key.to_owned(),
                n,
            },
        )
        .await
    }

    /// Every session, most recently active first.
    pub async fn sessions(&self) -> Result<Vec<SessionMeta>, TranscriptError> {
        ask(&self.addr, ListSessions).await
    }

    /// The turns of `key` from `offset` on, and its metadata.
    pub async fn turns_since(
        &self,
        key: &str,
        offset: u64,
    ) -> Result<(Vec<Turn>, Option<SessionMeta>), TranscriptError> {
        ask(
            &self.addr,
            GetTurnsSince {
                key: key.to_owned(),
                offset,
            },
        )
        .await
    }

    /// Persists the history path's marker (`upto` turns consolidated).
    pub async fn mark_consolidated(&self, key: &str, upto: u64) -> Result<(), TranscriptError> {
        ask(
            &self.addr,
            MarkConsolidated {
                key: key.to_owned(),
                upto,
            },
        )
        .await
    }
}
