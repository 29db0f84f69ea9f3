//! The one error type of the `VectorStore` actor.
//!
//! The HTTP layer maps every variant to a status and a stable code with an
//! exhaustive match (`src/error.rs`), so adding a variant is a compile error
//! there until someone decides how clients see it.

/// Everything a `VectorStore` request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum VectorStoreError {
    /// The key's shape or length is wrong.
    #[error("invalid key: {0}")]
    InvalidKey(String),
    /// The key is well-formed but its prefix is not on the allowlist.
    #[error("key {key:?} does not start with an allowed prefix ({})", allowed.join(", "))]
    KeyNotAllowed {
        /// The rejected key.
        key: String,
        /// The prefixes this install accepts.
        allowed: Vec<String>,
    },
    /// The value is not acceptable (e.g. null).
    #[error("invalid value: {0}")]
    InvalidValue(String),
    /// The serialized value exceeds the size limit.
    #[error("value is {size} bytes serialized; the limit is {max}")]
    ValueTooLarge {
        /// Serialized size in bytes.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// Confidence is not a finite number in [0, 1], or is missing where required.
    #[error("invalid confidence: {0}")]
    InvalidConfidence(String),
    /// An automated write below the confidence gate.
    #[error(
        "confidence {confidence} is below the threshold {threshold} required for automated sources"
    )]
    BelowConfidenceThreshold {
        /// The offered confidence.
        confidence: f64,
        /// The gate.
        threshold: f64,
    },
    /// The source label is malformed.
    #[error("invalid source: {0}")]
    InvalidSource(String),
    /// The value matched an injection-screening pattern; nothing was stored.
    #[error("value rejected by injection screening (pattern: {pattern})")]
    InjectionDetected {
        /// The name of the matching pattern.
        pattern: &'static str,
    },
    /// The screen flagged the write on uncertain evidence: it is held in
    /// the quarantine for a human to release or drop, and kept out of every
    /// prompt meanwhile (`vector_store/quarantine`).
    #[error("held in quarantine for review (item {id}, rule: {rule})")]
    Quarantined {
        /// The quarantine item's id.
        id: i64,
        /// The rule (or layer) that flagged it.
        rule: &'static str,
        /// The rule's attack category, when it has one.
        category: Option<&'static str>,
    },
    /// No quarantine item with this id.
    #[error("no quarantine item with id {0}")]
    QuarantineNotFound(i64),
    /// A held item's writer refused it on release (a held skill whose name
    /// was taken meanwhile, …); the item stays held.
    #[error("release of quarantine item {id} refused: {reason}")]
    ReleaseRefused {
        /// The quarantine item.
        id: i64,
        /// The writer's reason.
        reason: String,
    },
    /// The existing row won the conflict ladder; nothing was changed.
    #[error("write to {key:?} skipped: {reason}")]
    ConflictSkipped {
        /// The key that was not overwritten.
        key: String,
        /// Why the existing row won.
        reason: String,
    },
    /// No active row with this key.
    #[error("no memory entry with key {0:?}")]
    NotFound(String),
    /// The agent tried to remove what the user stated.
    #[error("{0:?} was stated by the user; only the user can remove it (the CLI, the dashboard or the REST API)")]
    UserOwned(String),
    /// An import document is not a kirocrew export.
    #[error("invalid export document: {0}")]
    InvalidExport(String),
    /// SQLite failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// The schema could not be brought up to date.
    #[error("database migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// Episodic text outside 10–2,000 characters.
    #[error("invalid text: {0}")]
    InvalidText(String),
    /// The fragment duplicates (exactly or nearly) an active one.
    #[error("duplicate of episodic memory {id}")]
    DuplicateEpisode {
        /// The existing row.
        id: i64,
    },
    /// Preservation mode refused a write to a full store.
    #[error("episodic memory is full ({max} active entries) and this write may not evict")]
    EpisodicFull {
        /// The cap.
        max: u64,
    },
    /// No active fragment with this id.
    #[error("no episodic memory with id {0}")]
    EpisodeNotFound(i64),
    /// A lesson's rule or negative is unacceptable (empty, too long, …).
    #[error("invalid lesson: {0}")]
    InvalidLesson(String),
    /// An active lesson already says this; nothing was written.
    #[error("duplicate of lesson {key}")]
    DuplicateLesson {
        /// The lesson that already covers the rule.
        key: String,
    },
    /// A `lesson.*` key written through a semantic entry point: lessons are
    /// written only through the lesson path (its rules: 1,000-character
    /// cap, dedup, key derived from the rule).
    #[error(
        "key {key:?} is reserved for lessons; write lessons through POST /api/lessons \
         (or `kirocrew learn add`)"
    )]
    LessonKeyReserved {
        /// The refused key.
        key: String,
    },
    /// The text holds NUL or a bidirectional override character.
    #[error(transparent)]
    ControlCharacter(#[from] crate::control_chars::ForbiddenCharacter),
    /// A re-embed or model change is already running (single flight).
    #[error("a re-embed is already in progress (step: {0})")]
    ReembedBusy(&'static str),
    /// The actor is not running (stopped, restarting, or its mailbox is gone).
    #[error("memory store is unavailable: {0}")]
    Unavailable(String),
}

const SQLITE_IOERR: i32 = 10;
const SQLITE_CORRUPT: i32 = 11;
const SQLITE_CANTOPEN: i32 = 14;
const SQLITE_NOTADB: i32 = 26;

impl VectorStoreError {
    /// Whether this failure means the connection pool is unusable, so the
    /// actor should stop and let its supervisor reopen the database.
    ///
    /// Besides a closed pool and transport errors, SQLite's own I/O,
    /// can't-open, not-a-database and corruption results count: the file
    /// under the pool was lost or replaced, and only reopening can recover.
    pub fn is_fatal(&self) -> bool {
        match self {
            VectorStoreError::Database(
                sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::WorkerCrashed,
            ) => true,
            VectorStoreError::Database(sqlx::Error::Database(db)) => db
                .code()
                .and_then(|code| code.parse::<i32>().ok())
                .is_some_and(|code| {
                    // Primary result code is the low byte of the extended code.
                    matches!(
                        code & 0xff,
                        SQLITE_IOERR | SQLITE_CORRUPT | SQLITE_CANTOPEN | SQLITE_NOTADB
                    )
                }),
            _ => false,
        }
    }
}

impl VectorStoreError {
    /// Whether the request itself was refused (bad input, screening, ladder),
    /// as opposed to the store failing.
    pub fn is_rejection(&self) -> bool {
        match self {
            VectorStoreError::InvalidKey(_)
            | VectorStoreError::KeyNotAllowed { .. }
            | VectorStoreError::InvalidValue(_)
            | VectorStoreError::ValueTooLarge { .. }
            | VectorStoreError::InvalidConfidence(_)
            | VectorStoreError::BelowConfidenceThreshold { .. }
            | VectorStoreError::InvalidSource(_)
            | VectorStoreError::InjectionDetected { .. }
            | VectorStoreError::Quarantined { .. }
            | VectorStoreError::QuarantineNotFound(_)
            | VectorStoreError::ReleaseRefused { .. }
            | VectorStoreError::ConflictSkipped { .. }
            | VectorStoreError::NotFound(_)
            | VectorStoreError::UserOwned(_)
            | VectorStoreError::InvalidExport(_)
            | VectorStoreError::ReembedBusy(_)
            | VectorStoreError::InvalidText(_)
            | VectorStoreError::DuplicateEpisode { .. }
            | VectorStoreError::EpisodicFull { .. }
            | VectorStoreError::EpisodeNotFound(_)
            | VectorStoreError::InvalidLesson(_)
            | VectorStoreError::DuplicateLesson { .. }
            | VectorStoreError::LessonKeyReserved { .. }
            | VectorStoreError::ControlCharacter(_) => true,
            VectorStoreError::Database(_)
            | VectorStoreError::Migration(_)
            | VectorStoreError::Unavailable(_) => false,
        }
    }
}

impl From<actix::MailboxError> for VectorStoreError {
    fn from(e: actix::MailboxError) -> Self {
        VectorStoreError::Unavailable(e.to_string())
    }
}
