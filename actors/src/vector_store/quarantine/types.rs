//! What the quarantine keeps and hands out.

use serde::{Deserialize, Serialize};

/// One quarantined write, as a reviewer sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuarantineItem {
    /// Row id (what release and drop take).
    pub id: i64,
    /// `semantic` (lessons included: their key starts `lesson.`),
    /// `episodic` or `skill`.
    pub layer: String,
    /// The semantic key or the skill's name; none for an episodic
    /// fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The text as screened.
    pub text: String,
    /// The rule (or layer: `statistical`, `similarity`) that flagged it.
    pub rule: String,
    /// The rule's attack category, when it has one.
    pub category: Option<String>,
    /// The writer's source label.
    pub source: String,
    /// When it was held (RFC 3339, UTC).
    pub created_at: String,
}

/// What a release wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Released {
    /// The quarantine row released (now gone).
    pub id: i64,
    /// `semantic`, `episodic` or `skill`.
    pub layer: String,
    /// The semantic key written, or the skill's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The episodic fragment's new id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub episode_id: Option<i64>,
}

/// The write a quarantine row holds (its `payload`), replayed on release.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "layer", rename_all = "snake_case")]
pub(crate) enum Held {
    /// A semantic write (a lesson is one too).
    Semantic {
        key: String,
        value: serde_json::Value,
        confidence: f64,
        source: String,
    },
    /// An episodic fragment.
    Episodic {
        text: String,
        tags: Vec<String>,
        importance: f64,
        source: String,
        created_at: Option<chrono::DateTime<chrono::Utc>>,
        preserve: bool,
    },
    /// A SKILL.md write (issue 42): released into the skills directory by
    /// the skills actor ([`super::replay::SkillReplay`]).
    Skill {
        name: String,
        content: String,
        /// A new skill (`true`) or an overwrite of an owned one.
        create: bool,
        source: String,
    },
}

impl Held {
    /// `semantic`, `episodic` or `skill`.
    pub(crate) fn layer(&self) -> &'static str {
        match self {
            Self::Semantic { .. } => "semantic",
            Self::Episodic { .. } => "episodic",
            Self::Skill { .. } => "skill",
        }
    }

    /// The semantic key or the skill's name, if any.
    pub(crate) fn key(&self) -> Option<&str> {
        match self {
            Self::Semantic { key, .. } => Some(key),
            Self::Skill { name, .. } => Some(name),
            Self::Episodic { .. } => None,
        }
    }

    /// The writer's source label.
    pub(crate) fn source(&self) -> &str {
        match self {
            Self::Semantic { source, .. }
            | Self::Episodic { source, .. }
            | Self::Skill { source, .. } => source,
        }
    }
}
