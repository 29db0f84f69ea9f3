//! The one error type of the `MemoryFiles` actor.
//!
//! `src/error.rs` maps every variant to an HTTP status and a stable code
//! with an exhaustive match.

/// Everything a `MemoryFiles` request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum MemoryFilesError {
    /// A history entry or layer text is empty or too long.
    #[error("invalid text: {0}")]
    InvalidText(String),
    /// The text holds NUL or a bidirectional override character.
    #[error(transparent)]
    ControlCharacter(#[from] crate::control_chars::ForbiddenCharacter),
    /// A search query has no searchable words.
    #[error("the query has no searchable words")]
    EmptyQuery,
    /// A search query is longer than the limit.
    #[error("the query is {len} characters; the limit is {max}")]
    QueryTooLong {
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// `days` beyond the 181-day window.
    #[error("days must be between 0 and 181, got {0}")]
    InvalidDays(u32),
    /// `keep_days` of zero would delete today's history.
    #[error("keep_days must be at least 1, got {0}")]
    InvalidKeepDays(u32),
    /// A memory file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The index is sound but SQLite refused the search itself (a query
    /// expression it could not run: a bug in the expression builder, never
    /// the caller's text, which is always quoted).
    #[error("memory search failed: {0}")]
    Search(sqlx::Error),
    /// memory_index.db failed even after being recreated.
    #[error("memory index unavailable: {0}")]
    Index(#[from] sqlx::Error),
    /// The actor is not running (shutting down).
    #[error("memory files unavailable: {0}")]
    Unavailable(String),
}

impl From<actix::MailboxError> for MemoryFilesError {
    fn from(e: actix::MailboxError) -> Self {
        MemoryFilesError::Unavailable(e.to_string())
    }
}
