//! The transcripts' protocol: one struct per request, each with its thin
//! handler.

use actix::prelude::*;

use super::actor::Transcripts;
use super::error::TranscriptError;
use super::file::{all_turns, file_stem, meta_path, tail_turns, transcript_path, write_meta};
use super::types::{NewTurn, PromptOrder, SessionMeta, Turn};

/// Appends a turn to its session's transcript.
#[derive(Debug, Message)]
#[rtype(result = "Result<SessionMeta, TranscriptError>")]
pub(crate) struct AppendTurn(pub NewTurn);

/// The newest `n` turns of a session, oldest first.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<Turn>, TranscriptError>")]
pub(crate) struct GetRecentTurns {
    pub key: String,
    pub n: usize,
}

/// Every session's metadata, most recently active first.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<SessionMeta>, TranscriptError>")]
pub(crate) struct ListSessions;

/// A session's turns from `offset` on, with its metadata.
#[derive(Debug, Message)]
#[rtype(result = "Result<(Vec<Turn>, Option<SessionMeta>), TranscriptError>")]
pub(crate) struct GetTurnsSince {
    pub key: String,
    pub offset: u64,
}

/// Persists the history path's consolidation marker.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), TranscriptError>")]
pub(crate) struct MarkConsolidated {
    pub key: String,
    pub upto: u64,
}

/// Claims the next user prompt of a session: answers whether it is the
/// session's first, and remembers that a prompt was answered.
#[derive(Debug, Message)]
#[rtype(result = "Result<PromptOrder, TranscriptError>")]
pub(crate) struct ClaimPrompt {
    pub key: String,
}

impl Handler<ClaimPrompt> for Transcripts {
    type Result = Result<PromptOrder, TranscriptError>;

    fn handle(&mut self, msg: ClaimPrompt, _: &mut Context<Self>) -> Self::Result {
        let stem = file_stem(&msg.key)?;
        let claimed_before = self.prompted.put(stem.clone(), ()).is_some();
        Ok(PromptOrder::of(self.sessions.get(&stem), claimed_before))
    }
}

impl Handler<AppendTurn> for Transcripts {
    type Result = Result<SessionMeta, TranscriptError>;

    fn handle(&mut self, msg: AppendTurn, _: &mut Context<Self>) -> Self::Result {
        self.append(msg.0)
    }
}

impl Handler<GetRecentTurns> for Transcripts {
    type Result = Result<Vec<Turn>, TranscriptError>;

    fn handle(&mut self, msg: GetRecentTurns, _: &mut Context<Self>) -> Self::Result {
        let stem = file_stem(&msg.key)?;
        tail_turns(&transcript_path(&self.config.dir, &stem), msg.n)
    }
}

impl Handler<ListSessions> for Transcripts {
    type Result = Result<Vec<SessionMeta>, TranscriptError>;

    fn handle(&mut self, _: ListSessions, _: &mut Context<Self>) -> Self::Result {
        let mut all: Vec<SessionMeta> = self.sessions.values().cloned().collect();
        all.sort_by(|a, b| {
            b.last_activity
                .cmp(&a.last_activity)
                .then(a.key.cmp(&b.key))
        });
        Ok(all)
    }
}

impl Handler<GetTurnsSince> for Transcripts {
    type Result = Result<(Vec<Turn>, Option<SessionMeta>), TranscriptError>;

    fn handle(&mut self, msg: GetTurnsSince, _: &mut Context<Self>) -> Self::Result {
        let stem = file_stem(&msg.key)?;
        let turns = all_turns(&transcript_path(&self.config.dir, &stem))?;
        let skip = usize::try_from(msg.offset).unwrap_or(usize::MAX);
        Ok((
            turns.into_iter().skip(skip).collect(),
            self.sessions.get(&stem).cloned(),
        ))
    }
}

impl Handler<MarkConsolidated> for Transcripts {
    type Result = Result<(), TranscriptError>;

    fn handle(&mut self, msg: MarkConsolidated, _: &mut Context<Self>) -> Self::Result {
        let stem = file_stem(&msg.key)?;
        let Some(meta) = self.sessions.get_mut(&stem) else {
            return Err(TranscriptError::InvalidKey(format!(
                "no session {:?}",
                msg.key
            )));
        };
        meta.last_consolidated = msg.upto.min(meta.turns);
        let meta = meta.clone();
        write_meta(&meta_path(&self.config.dir, &stem), &meta)
    }
}
