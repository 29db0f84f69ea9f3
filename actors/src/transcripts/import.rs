//! Importing a transcript kept elsewhere (Claude Code's JSONL, through the
//! hook adapter): every turn carries its id at the source, and an id already
//! in the session's transcript is skipped, so re-sending a whole transcript
//! on every `Stop` adds only what is new.
//!
//! The text is stored with credentials redacted (a private key pasted into
//! a chat is not kept verbatim), and a source id is at most
//! [`MAX_SOURCE_ID_CHARS`] characters (it is a record id, not a document).

use std::collections::HashSet;

use actix::prelude::*;

use super::actor::{check_turn_text, Transcripts};
use super::error::TranscriptError;
use super::file::{all_turns, file_stem, transcript_path};
use super::types::{ImportOutcome, ImportedTurn, RefusedTurn, Turn};
use crate::clock::format_ts;
use crate::security::redact_credentials;

/// Longest source id accepted, in characters.
pub(crate) const MAX_SOURCE_ID_CHARS: usize = 200;

/// How much of a refused source id its refusal repeats, in characters.
const ECHOED_ID_CHARS: usize = 64;

/// Appends the turns of `turns` whose source id the session has not seen.
#[derive(Debug, Message)]
#[rtype(result = "Result<ImportOutcome, TranscriptError>")]
pub(crate) struct ImportTurns {
    pub key: String,
    pub turns: Vec<ImportedTurn>,
}

impl Handler<ImportTurns> for Transcripts {
    type Result = Result<ImportOutcome, TranscriptError>;

    fn handle(&mut self, msg: ImportTurns, _: &mut Context<Self>) -> Self::Result {
        let stem = file_stem(&msg.key)?;
        if !self.source_ids.contains_key(&stem) {
            let path = transcript_path(&self.config.dir, &stem);
            let seen = all_turns(&path)?
                .into_iter()
                .filter_map(|t| t.source_id)
                .collect();
            self.source_ids.insert(stem.clone(), seen);
        }
        let now = format_ts(self.config.clock.now());
        let seen = self.source_ids.entry(stem.clone()).or_default();
        let (fresh, mut outcome) = select_new(seen, msg.turns, &now);
        self.store(&stem, msg.key.trim(), &fresh, &now)?;
        // Only what reached the file counts as seen.
        let seen = self.source_ids.entry(stem.clone()).or_default();
        seen.extend(fresh.iter().filter_map(|t| t.source_id.clone()));
        outcome.added = fresh.len();
        outcome.session = self.sessions.get(&stem).cloned();
        Ok(outcome)
    }
}

/// Splits an import into the turns to append (new ids, valid text, each id
/// once even if the batch repeats it) and the counts of the rest.
fn select_new(
    seen: &HashSet<String>,
    turns: Vec<ImportedTurn>,
    now: &str,
) -> (Vec<Turn>, ImportOutcome) {
    let mut outcome = ImportOutcome::default();
    let mut in_batch = HashSet::new();
    let mut fresh = Vec::new();
    for turn in turns {
        let id = turn.source_id.trim().to_owned();
        if id.chars().count() > MAX_SOURCE_ID_CHARS {
            let mut echoed: String = id.chars().take(ECHOED_ID_CHARS).collect();
            echoed.push('…');
            outcome.refused.push(RefusedTurn {
                source_id: echoed,
                reason: format!("source_id is longer than {MAX_SOURCE_ID_CHARS} characters"),
            });
            continue;
        }
        if id.is_empty() {
            outcome.refused.push(RefusedTurn {
                source_id: id,
                reason: "source_id is empty".into(),
            });
            continue;
        }
        if seen.contains(&id) || !in_batch.insert(id.clone()) {
            outcome.duplicates += 1;
            continue;
        }
        if let Err(e) = check_turn_text(&turn.text) {
            outcome.refused.push(RefusedTurn {
                source_id: id,
                reason: e.to_string(),
            });
            continue;
        }
        fresh.push(Turn {
            ts: turn.ts.unwrap_or_else(|| now.to_owned()),
            role: turn.role,
            text: redact_credentials(&turn.text),
            channel_id: None,
            sender: None,
            source_id: Some(id),
        });
    }
    (fresh, outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::Role;

    fn turn(id: &str, text: &str) -> ImportedTurn {
        ImportedTurn {
            source_id: id.into(),
            role: Role::User,
            text: text.into(),
            ts: None,
        }
    }

    #[test]
    fn only_unseen_valid_ids_are_kept_once() {
        let seen: HashSet<String> = ["a".to_string()].into();
        let (fresh, outcome) = select_new(
            &seen,
            vec![
                turn("a", "old"),
                turn("b", "new"),
                turn("b", "repeated in the batch"),
                turn("c", "   "),
                turn(" ", "no id"),
                turn("d", "bidi \u{202e} override"),
            ],
            "2026-01-01T00:00:00Z",
        );
        let ids: Vec<_> = fresh
            .iter()
            .filter_map(|t| t.source_id.as_deref())
            .collect();
        assert_eq!(ids, vec!["b"]);
        assert_eq!(fresh[0].ts, "2026-01-01T00:00:00Z");
        assert_eq!(outcome.duplicates, 2);
        let refused: Vec<_> = outcome
            .refused
            .iter()
            .map(|r| r.source_id.as_str())
            .collect();
        assert_eq!(refused, vec!["c", "", "d"]);
    }

    #[test]
    fn long_ids_are_refused_and_credentials_never_stored() {
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
        let (fresh, outcome) = select_new(
            &HashSet::new(),
            vec![
                turn(&"x".repeat(100_000), "fine"),
                turn("k", &format!("here is my key:\n{key}\nkeep it")),
            ],
            "2026-01-01T00:00:00Z",
        );
        assert_eq!(outcome.refused.len(), 1);
        assert!(outcome.refused[0].source_id.chars().count() <= ECHOED_ID_CHARS + 1);
        assert_eq!(fresh.len(), 1);
        assert!(
            !fresh[0].text.contains("b3BlbnNzaC1rZXkt"),
            "{}",
            fresh[0].text
        );
        assert!(fresh[0].text.contains("keep it"));
    }
}
