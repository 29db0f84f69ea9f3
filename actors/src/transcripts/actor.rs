//! The `Transcripts` actor: the sessions directory and the metadata of
//! every session in it (loaded once at start, kept in memory, written
//! through). Its handle is in `handle.rs`.

use std::collections::HashMap;

use actix::prelude::*;

use super::error::TranscriptError;
use super::file::{
    append_turn, file_stem, meta_path, read_meta, transcript_path, write_meta, MAX_TURN_CHARS,
};
use super::types::{NewTurn, SessionMeta, TranscriptsConfig, Turn};
use crate::clock::format_ts;

/// The actor. Start it with `TranscriptsHandle::start`.
pub(crate) struct Transcripts {
    pub(super) config: TranscriptsConfig,
    /// Session metadata by file stem.
    pub(super) sessions: HashMap<String, SessionMeta>,
}

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
        Self { config, sessions }
    }

    /// Validates and appends a turn, then updates the metadata.
    pub(super) fn append(&mut self, turn: NewTurn) -> Result<SessionMeta, TranscriptError> {
        let stem = file_stem(&turn.session_key)?;
        let chars = turn.text.chars().count();
        if turn.text.trim().is_empty() || chars > MAX_TURN_CHARS {
            return Err(TranscriptError::InvalidTurn(format!(
                "text must be 1-{MAX_TURN_CHARS} characters"
            )));
        }
        if let Err(c) = crate::control_chars::check_text("text", &turn.text) {
            return Err(TranscriptError::InvalidTurn(c.to_string()));
        }
        // Private like the rest of the data home: transcripts are chats.
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(&self.config.dir)?;
        let now = format_ts(self.config.clock.now());
        let stored = Turn {
            ts: now.clone(),
            role: turn.role,
            text: turn.text,
            channel_id: turn.channel_id,
            sender: turn.sender,
        };
        append_turn(&transcript_path(&self.config.dir, &stem), &stored)?;
        let meta = self
            .sessions
            .entry(stem.clone())
            .or_insert_with(|| SessionMeta {
                key: turn.session_key.trim().to_owned(),
                created_at: now.clone(),
                ..SessionMeta::default()
            });
        meta.last_activity = now;
        meta.turns += 1;
        if turn.user.is_some() {
            meta.user = turn.user;
        }
        let meta = meta.clone();
        write_meta(&meta_path(&self.config.dir, &stem), &meta)?;
        Ok(meta)
    }
}
