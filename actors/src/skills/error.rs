//! The one error type of the skills subsystem (catalog, ledger, writes).
//!
//! `src/error.rs` maps every variant to an HTTP status and a stable code
//! with an exhaustive match.

/// Everything a skills request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// The skill name is empty, too long, or not a safe relative path
    /// (`..`, `\`, an absolute path, a percent escape).
    #[error("invalid skill name {name:?}: {reason}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// Why it is refused.
        reason: String,
    },
    /// No skill has this name.
    #[error("no skill named {0:?}")]
    NotFound(String),
    /// `POST` for a name that already exists.
    #[error("a skill named {0:?} already exists")]
    AlreadyExists(String),
    /// The path leaves the owned skills directory (a symlink pointing
    /// outside it), or the skill lives in a directory kirocrew does not own
    /// (project or extra path).
    #[error("skill {name:?} is not in the skills directory kirocrew owns: {reason}")]
    NotOwned {
        /// The skill.
        name: String,
        /// What was found.
        reason: String,
    },
    /// Deleting a directory that holds other skills.
    #[error("skill {name:?} contains nested skills ({nested}); remove those first")]
    HasNestedSkills {
        /// The skill.
        name: String,
        /// The nested skills, comma-separated.
        nested: String,
    },
    /// The content is empty, too large, or carries a forbidden character.
    #[error("invalid skill content: {0}")]
    InvalidContent(String),
    /// A structured edit on a file whose frontmatter is unterminated.
    #[error("skill {0:?} has an unterminated frontmatter block; edit the raw content instead")]
    UnterminatedFrontmatter(String),
    /// A search query with no words, or too long.
    #[error("invalid query: {0}")]
    InvalidQuery(String),
    /// A tool event without an id, or with an unknown status.
    #[error("invalid tool event: {0}")]
    InvalidToolEvent(String),
    /// A skill file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The screen found high-precision evidence of an injection in the
    /// description or body (issue 42, item 9); nothing was written.
    #[error("skill refused: injection screening matched rule {rule:?}")]
    InjectionBlocked {
        /// The blocking rule.
        rule: &'static str,
    },
    /// The screen flagged the description or body on uncertain evidence:
    /// the write is held in the quarantine (layer `skill`) for a person to
    /// release or drop; nothing was written to the skills directory.
    #[error("skill held in quarantine for review (item {id}, rule: {rule})")]
    Quarantined {
        /// The quarantine item's id.
        id: i64,
        /// The rule that flagged it.
        rule: &'static str,
        /// The rule's attack category, when it has one.
        category: Option<&'static str>,
    },
    /// The screen flagged the write on uncertain evidence but no
    /// quarantine is attached to hold it (a tool started without
    /// memory.db); nothing was written.
    #[error("skill flagged by injection screening (rule {rule:?}) and no quarantine is attached to hold it for review")]
    ReviewUnavailable {
        /// The rule that flagged it.
        rule: &'static str,
    },
    /// The actor is not running (shutting down).
    #[error("skills unavailable: {0}")]
    Unavailable(String),
}

impl From<actix::MailboxError> for SkillError {
    fn from(e: actix::MailboxError) -> Self {
        SkillError::Unavailable(e.to_string())
    }
}

/// Wraps an I/O error with the path it concerns.
pub(crate) fn io_error(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> SkillError + '_ {
    move |source| SkillError::Io {
        path: path.display().to_string(),
        source,
    }
}
