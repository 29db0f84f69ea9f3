//! The `Transcripts` actor: the sessions directory and the metadata of
//! every session in it (loaded once at start, kept in memory, written
//! through). Its handle is in `handle.rs`.

use std::collections::{HashMap, HashSet};

use actix::prelude::*;

use super::error::TranscriptError;
use super::file::{
    append_turn, file_stem, meta_path, read_meta, transcript_path, write_meta, MAX_TURN_CHARS,
};
use super::types::{NewTurn, Role, SessionMeta, TranscriptsConfig, Turn};
use crate::clock::format_ts;

/// The actor. Start it with `TranscriptsHandle::start`.
pub(crate) struct Transcripts {
    pub(super) config: TranscriptsConfig,
    /// Session metadata by file stem.
    pub(super) sessions: HashMap<String, SessionMeta>,
    /// Source ids already imported, by file stem; read from the transcript
    /// on a session's first import, then kept current.
    pub(super) source_ids: HashMap<String, HashSet<String>>,
    /// Sessions (file stems) whose first prompt was already claimed. Kept
    /// in memory, bounded: a prompt answered but not yet recorded (Claude
    /// Code sends its transcript when the turn ends) still makes the next
    /// one a later prompt, and after a restart the recorded turns tell.
    pub(super) prompted: lru::LruCache<String, ()>,
}

/// Sessions whose claimed first prompt is remembered.
const PROMPTED_SESSIONS: std::num::NonZeroUsize = match std::num::NonZeroUsize::new(8192) {
    Some(n) => n,
    None => unreachable!(),
};

impl Actor for Transcripts {
    type Context = Context<Self>;
}

impl Transcripts {
    /// Reads every `*.meta.json` of the directory.
    pub(super) fn load(config: TranscriptsConfig) -> Self {
        let mut sessions = HashMap::new();
        if let Ok(entries) = std::fs::read_dir(&config.dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(stem) = name.strip_suffix(".meta.json") {
                    if let Some(meta) = read_meta(&entry.path()) {
                        sessions.insert(stem.to_owned(), meta);
                    }
                }
            }
        }
        Self {
            config,
            sessions,
            source_ids: HashMap::new(),
            prompted: lru::LruCache::new(PROMPTED_SESSIONS),
        }
    }

    /// Validates and appends a turn, then updates the metadata.
    pub(super) fn append(&mut self, turn: NewTurn) -> Result<SessionMeta, TranscriptError> {
        let stem = file_stem(&turn.session_key)?;
        check_turn_text(&turn.text)?;
        let now = format_ts(self.config.clock.now());
        let stored = Turn {
            ts: now.clone(),
            role: turn.role,
            text: turn.text,
            channel_id: turn.channel_id,
            sender: turn.sender,
            source_id: None,
        };
        self.store(&stem, turn.session_key.trim(), &[stored], &now)?;
        let meta = self.sessions.get_mut(&stem).ok_or_else(|| {
            TranscriptError::Io("session metadata vanished after an append".into())
        })?;
        if turn.user.is_some() {
            meta.user = turn.user;
            let meta = meta.clone();
            write_meta(&meta_path(&self.config.dir, &stem), &meta)?;
        }
        Ok(meta.clone())
    }

    /// Appends already-validated turns to the transcript of `stem` and
    /// writes its metadata through (one place for the file layout, the
    /// directory's mode and the counters; appends and imports share it).
    pub(super) fn store(
        &mut self,
        stem: &str,
        key: &str,
        turns: &[Turn],
        now: &str,
    ) -> Result<(), TranscriptError> {
        if turns.is_empty() {
            return Ok(());
        }
        // Private like the rest of the data home: transcripts are chats.
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(&self.config.dir)?;
        let path = transcript_path(&self.config.dir, stem);
        for turn in turns {
            append_turn(&path, turn)?;
        }
        let meta = self
            .sessions
            .entry(stem.to_owned())
            .or_insert_with(|| SessionMeta {
                key: key.to_owned(),
                created_at: now.to_owned(),
                user_turns: Some(0),
                ..SessionMeta::default()
            });
        meta.last_activity = now.to_owned();
        meta.turns += turns.len() as u64;
        if let Some(users) = meta.user_turns.as_mut() {
            *users += turns.iter().filter(|t| t.role == Role::User).count() as u64;
        }
        let meta = meta.clone();
        write_meta(&meta_path(&self.config.dir, stem), &meta)
    }
}

/// The rules every stored turn's text obeys: non-blank, at most
/// [`MAX_TURN_CHARS`], no control characters a prompt could hide behind.
pub(super) fn check_turn_text(text: &str) -> Result<(), TranscriptError> {
    if text.trim().is_empty() || text.chars().count() > MAX_TURN_CHARS {
        return Err(TranscriptError::InvalidTurn(format!(
            "text must be 1-{MAX_TURN_CHARS} characters"
        )));
    }
    if let Err(c) = crate::control_chars::check_text("text", text) {
        return Err(TranscriptError::InvalidTurn(c.to_string()));
    }
    Ok(())
}
