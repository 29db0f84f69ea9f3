//! Skills shipped inside the binary, and their sync into the data home.
//!
//! Each bundled skill is compiled in (`include_str!`) and copied to
//! `skills/<name>/SKILL.md` under the data home, where it is served like
//! any other skill (listed with source `bundled`). The copy is tracked in
//! `skills/.bundled.json` by the blake3 hash of the text last installed, so
//! an upgrade never clobbers a user's edit silently:
//!
//! | on start | action |
//! |---|---|
//! | no file, never installed | install (first run) |
//! | no file, installed before | leave it removed (the user deleted it) |
//! | file equals the shipped text | nothing |
//! | file equals what was last installed (untouched) | replace with the new text (upgrade) |
//! | file differs from both (user edit, or a user skill of that name) | keep it; write the shipped text beside it as `SKILL.md.bundled` and log a warning |
//!
//! (The reference re-synced by deleting and re-copying the directory; that
//! loses edits, which this table is there to avoid.)

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::catalog::SKILL_FILE;
use super::error::{io_error, SkillError};
use crate::atomic_file::write_atomic;

/// A skill compiled into the binary.
#[derive(Debug, Clone, Copy)]
pub(super) struct BundledSkill {
    /// Its name (directory under `skills/`).
    pub name: &'static str,
    /// Its SKILL.md.
    pub content: &'static str,
}

/// The bundled skills.
pub(super) const BUNDLED: &[BundledSkill] = &[
    BundledSkill {
        name: "skill-authoring",
        content: include_str!("bundled/skill-authoring.md"),
    },
    BundledSkill {
        name: "context-budget",
        content: include_str!("bundled/context-budget.md"),
    },
];

/// The sync record's file name under `skills/` (hidden: not a skill).
pub(super) const MANIFEST_FILE: &str = ".bundled.json";
/// What a kept user edit gets beside it.
pub(super) const SHIPPED_COPY: &str = "SKILL.md.bundled";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    skills: BTreeMap<String, Record>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    hash: String,
}

/// What a sync did, per skill name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(super) struct SyncReport {
    /// Copied for the first time.
    pub installed: Vec<String>,
    /// Replaced by a newer shipped text.
    pub updated: Vec<String>,
    /// Left as the user edited them (the shipped text is beside them).
    pub kept_edits: Vec<String>,
    /// Deleted by the user and left deleted.
    pub left_removed: Vec<String>,
}

fn hash(text: &[u8]) -> String {
    blake3::hash(text).to_hex().to_string()
}

/// Syncs `skills` into `skills_dir`.
pub(super) fn sync(skills_dir: &Path, skills: &[BundledSkill]) -> Result<SyncReport, SkillError> {
    let manifest_path = skills_dir.join(MANIFEST_FILE);
    let mut manifest: Manifest = std::fs::read(&manifest_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut report = SyncReport::default();
    for skill in skills {
        let dir = skills_dir.join(skill.name);
        let file = dir.join(SKILL_FILE);
        let shipped = hash(skill.content.as_bytes());
        let record = manifest.skills.get(skill.name).cloned();
        let install = |report_list: &mut Vec<String>| -> Result<(), SkillError> {
            write_atomic(&file, skill.content.as_bytes()).map_err(io_error(&file))?;
            report_list.push(skill.name.to_owned());
            Ok(())
        };
        match std::fs::read(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if record.is_some() {
                    report.left_removed.push(skill.name.to_owned());
                    continue;
                }
                install(&mut report.installed)?;
            }
            Err(e) => return Err(io_error(&file)(e)),
            Ok(current) => {
                let current = hash(&current);
                if current == shipped {
                    // Up to date (also adopts a matching copy with no record).
                } else if record.as_ref().is_some_and(|r| r.hash == current) {
                    install(&mut report.updated)?;
                } else {
                    let copy = dir.join(SHIPPED_COPY);
                    write_atomic(&copy, skill.content.as_bytes()).map_err(io_error(&copy))?;
                    tracing::warn!(
                        skill = skill.name,
                        "bundled skill edited locally; kept your version, the shipped one is in {}",
                        copy.display()
                    );
                    report.kept_edits.push(skill.name.to_owned());
                    continue;
                }
            }
        }
        manifest
            .skills
            .insert(skill.name.to_owned(), Record { hash: shipped });
    }
    let bytes = serde_json::to_vec_pretty(&manifest).map_err(|e| SkillError::Io {
        path: manifest_path.display().to_string(),
        source: std::io::Error::other(e),
    })?;
    write_atomic(&manifest_path, &bytes).map_err(io_error(&manifest_path))?;
    Ok(report)
}

/// The names of the bundled skills.
pub(super) fn bundled_names() -> impl Iterator<Item = &'static str> {
    BUNDLED.iter().map(|s| s.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::frontmatter::{parse, ParseMode};

    #[test]
    fn shipped_skills_parse_cleanly() {
        for s in BUNDLED {
            let m = parse(s.content);
            assert_eq!(m.parsed_with, ParseMode::Yaml, "{}", s.name);
            assert_eq!(m.name.as_deref(), Some(s.name));
            assert!(m.description.is_some_and(|d| d.len() > 40), "{}", s.name);
            assert!(!m.always, "{}: a bundled skill must not be pinned", s.name);
        }
    }

    #[test]
    fn upgrade_rules() {
        let dir = tempfile::tempdir().unwrap();
        let v1 = [
            BundledSkill {
                name: "a",
                content: "v1",
            },
            BundledSkill {
                name: "b",
                content: "v1",
            },
            BundledSkill {
                name: "c",
                content: "v1",
            },
        ];
        let r = sync(dir.path(), &v1).unwrap();
        assert_eq!(r.installed, ["a", "b", "c"]);
        // The user edits b and deletes c.
        std::fs::write(dir.path().join("b/SKILL.md"), "mine").unwrap();
        std::fs::remove_dir_all(dir.path().join("c")).unwrap();
        let v2 = [
            BundledSkill {
                name: "a",
                content: "v2",
            },
            BundledSkill {
                name: "b",
                content: "v2",
            },
            BundledSkill {
                name: "c",
                content: "v2",
            },
        ];
        let r = sync(dir.path(), &v2).unwrap();
        assert_eq!(r.updated, ["a"]);
        assert_eq!(r.kept_edits, ["b"]);
        assert_eq!(r.left_removed, ["c"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a/SKILL.md")).unwrap(),
            "v2"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b/SKILL.md")).unwrap(),
            "mine"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b/SKILL.md.bundled")).unwrap(),
            "v2"
        );
        assert!(!dir.path().join("c").exists());
        // Still edited on the next start: still kept; nothing else moves.
        let r = sync(dir.path(), &v2).unwrap();
        assert_eq!(
            r,
            SyncReport {
                kept_edits: vec!["b".into()],
                left_removed: vec!["c".into()],
                ..Default::default()
            }
        );
    }
}
