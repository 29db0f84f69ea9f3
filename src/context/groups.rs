//! Switchable context groups (spec "Switchable context groups"): `memory`,
//! `lessons` and `project` can be withheld for one build (a sub-agent);
//! `conduct` never can. Default all on, and "not given" is the same value
//! as "all on", so both build byte-identical context.

use serde::Serialize;

/// Which switchable groups a build includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContextGroups {
    /// Preferences, projects, recent history, semantic, episodic, recent
    /// session context.
    pub memory: bool,
    /// Learned corrections. (The spec's table also lists a `[USER PROFILE]`
    /// here; kirocrew has no block by that name: the user's facts,
    /// `user.*`, are in `[Semantic Memory]` in the memory group, and a
    /// second copy would spend the budget twice. So the scope note does
    /// not promise one.)
    pub lessons: bool,
    /// Documentation pointer, steering, project directory.
    pub project: bool,
}

impl Default for ContextGroups {
    fn default() -> Self {
        Self::ALL
    }
}

/// A group name that is not switchable or does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    /// `conduct` was named.
    #[error("the conduct group cannot be switched off (rules, date, identity and the skills index are always sent)")]
    Conduct,
    /// Not a group.
    #[error("unknown context group {0:?} (memory, lessons, project)")]
    Unknown(String),
}

impl ContextGroups {
    /// Every group on.
    pub const ALL: Self = Self {
        memory: true,
        lessons: true,
        project: true,
    };

    /// The groups named in `included` (`None` = all).
    pub fn from_names(included: Option<&[String]>) -> Result<Self, GroupError> {
        let Some(names) = included else {
            return Ok(Self::ALL);
        };
        let mut g = Self {
            memory: false,
            lessons: false,
            project: false,
        };
        for name in names {
            match name.trim() {
                "memory" => g.memory = true,
                "lessons" => g.lessons = true,
                "project" => g.project = true,
                // Naming conduct as included is harmless: it always is.
                "conduct" => {}
                other => return Err(GroupError::Unknown(other.to_owned())),
            }
        }
        Ok(g)
    }

    /// The withheld groups, in a fixed order.
    pub fn withheld(&self) -> Vec<&'static str> {
        [
            ("memory", self.memory),
            ("lessons", self.lessons),
            ("project", self.project),
        ]
        .into_iter()
        .filter(|(_, on)| !on)
        .map(|(name, _)| name)
        .collect()
    }

    /// `[CONTEXT SCOPE]`: names what was withheld so the agent reports the
    /// gap instead of inventing what it cannot see. Empty when nothing was.
    pub fn scope_section(&self) -> String {
        let withheld = self.withheld();
        if withheld.is_empty() {
            return String::new();
        }
        let what: Vec<&str> = withheld
            .iter()
            .map(|g| match *g {
                "memory" => "memory (preferences, projects, recent history, semantic and episodic memory, recent session context)",
                "lessons" => "lessons (learned corrections)",
                _ => "project (documentation pointer, steering, project directory)",
            })
            .collect();
        format!(
            "[CONTEXT SCOPE]\nWithheld from this session by the caller: {}.\nIf the task needs any of it, say that it was not provided instead of guessing.",
            what.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_and_all_named_are_the_same_value() {
        let all: Vec<String> = ["memory", "lessons", "project"].map(String::from).to_vec();
        assert_eq!(ContextGroups::from_names(None).unwrap(), ContextGroups::ALL);
        assert_eq!(
            ContextGroups::from_names(Some(&all)).unwrap(),
            ContextGroups::ALL
        );
        assert_eq!(ContextGroups::ALL.scope_section(), "");
    }

    #[test]
    fn withheld_groups_are_named_and_conduct_cannot_be_withheld() {
        let only_memory = ContextGroups::from_names(Some(&["memory".to_owned()])).unwrap();
        assert_eq!(only_memory.withheld(), vec!["lessons", "project"]);
        let scope = only_memory.scope_section();
        assert!(scope.starts_with("[CONTEXT SCOPE]\n"));
        assert!(scope.contains("lessons (") && scope.contains("project ("));
        assert!(!scope.contains("memory ("));
        // Only what a build can hold is named (no user profile block).
        assert!(!scope.contains("profile"), "{scope}");
        assert!(matches!(
            ContextGroups::from_names(Some(&["skills".to_owned()])),
            Err(GroupError::Unknown(_))
        ));
        let none = ContextGroups::from_names(Some(&[])).unwrap();
        assert_eq!(none.withheld().len(), 3);
        let _ = GroupError::Conduct.to_string();
    }
}
