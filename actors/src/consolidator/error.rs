//! The consolidator's error type.

use super::schema::AnswerError;
use crate::llm::LlmError;

/// Why a consolidation did not run or did not finish. A failed run
/// advances no offset and writes nothing partial: the next trigger tries
/// the same messages again.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConsolidatorError {
    /// No transcript has this session key.
    #[error("no session {0:?}")]
    UnknownSession(String),
    /// This path of this session is already running.
    #[error("consolidation of {0:?} is already running")]
    AlreadyRunning(String),
    /// The model produced no answer (not ready, endpoint down, truncated).
    #[error("{0}")]
    Model(LlmError),
    /// The model's answer was refused (malformed, off-schema).
    #[error("{0}")]
    Answer(AnswerError),
    /// The transcripts could not be read or the marker not saved.
    #[error("transcripts: {0}")]
    Transcripts(String),
    /// The Markdown layers could not be read or written.
    #[error("memory files: {0}")]
    Files(String),
    /// The actor is not running.
    #[error("consolidator unavailable: {0}")]
    Unavailable(String),
}

impl From<actix::MailboxError> for ConsolidatorError {
    fn from(e: actix::MailboxError) -> Self {
        ConsolidatorError::Unavailable(e.to_string())
    }
}

impl From<crate::transcripts::TranscriptError> for ConsolidatorError {
    fn from(e: crate::transcripts::TranscriptError) -> Self {
        ConsolidatorError::Transcripts(e.to_string())
    }
}

impl From<crate::memory_files::MemoryFilesError> for ConsolidatorError {
    fn from(e: crate::memory_files::MemoryFilesError) -> Self {
        ConsolidatorError::Files(e.to_string())
    }
}
