//! Skill writes on disk (spec: "CRUD operations (via SkillsLoader)"):
//! create, overwrite, delete, all confined to the skills directory the data
//! home owns. Every path goes through [`resolve_inside`] (no `..`, no
//! absolute path, no symlink leading out), files are replaced atomically,
//! and the text is checked like every stored text (NUL and bidirectional
//! overrides refused, size capped).

use std::path::{Path, PathBuf};

use super::catalog::{MAX_SKILL_BYTES, SKILL_FILE};
use super::error::{io_error, SkillError};
use super::names::resolve_inside;
use crate::atomic_file::write_atomic;

/// The SKILL.md a new skill starts from when no content is given.
pub fn template(name: &str, description: Option<&str>) -> String {
    let leaf = name.rsplit('/').next().unwrap_or(name);
    let description = description
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .unwrap_or("What this skill does, and when to use it.");
    format!(
        "---\nname: {}\ndescription: {}\n---\n# {leaf}\n\nSteps the agent should follow.\n",
        super::editor::yaml_string(leaf),
        super::editor::yaml_string(description)
    )
}

/// Refuses empty, oversized or control-character-carrying content.
pub fn validate_content(text: &str) -> Result<(), SkillError> {
    if text.trim().is_empty() {
        return Err(SkillError::InvalidContent("the content is empty".into()));
    }
    if text.len() as u64 > MAX_SKILL_BYTES {
        return Err(SkillError::InvalidContent(format!(
            "the content is {} bytes; the limit is {MAX_SKILL_BYTES}",
            text.len()
        )));
    }
    crate::control_chars::check_text("content", text)
        .map_err(|e| SkillError::InvalidContent(e.to_string()))
}

/// The SKILL.md of `name` under `home`, checked to resolve inside it.
pub fn owned_file(home: &Path, name: &str) -> Result<PathBuf, SkillError> {
    let file = resolve_inside(home, &format!("{name}/{SKILL_FILE}"))?;
    if !file.is_file() {
        return Err(SkillError::NotFound(name.to_owned()));
    }
    Ok(file)
}

/// Creates `name` (already sanitized) with `content`.
pub fn create(home: &Path, name: &str, content: &str) -> Result<PathBuf, SkillError> {
    validate_content(content)?;
    let file = resolve_inside(home, &format!("{name}/{SKILL_FILE}"))?;
    if file.symlink_metadata().is_ok() {
        return Err(SkillError::AlreadyExists(name.to_owned()));
    }
    write_atomic(&file, content.as_bytes()).map_err(io_error(&file))?;
    Ok(file)
}

/// Overwrites an owned skill's SKILL.md.
pub fn overwrite(home: &Path, name: &str, content: &str) -> Result<PathBuf, SkillError> {
    validate_content(content)?;
    let file = owned_file(home, name)?;
    // Write through a link inside the root to its real file, so the link
    // (an alias) stays a link.
    let target = file.canonicalize().map_err(io_error(&file))?;
    write_atomic(&target, content.as_bytes()).map_err(io_error(&target))?;
    Ok(file)
}

/// Reads an owned skill's SKILL.md.
pub fn read_owned(home: &Path, name: &str) -> Result<(PathBuf, String), SkillError> {
    let file = owned_file(home, name)?;
    let text = std::fs::read_to_string(&file).map_err(io_error(&file))?;
    Ok((file, text))
}

/// Deletes `name`'s directory (a linked alias: only the link). Refused
/// while other skills nest inside it.
pub fn delete(home: &Path, name: &str, nested: &[String]) -> Result<(), SkillError> {
    if !nested.is_empty() {
        return Err(SkillError::HasNestedSkills {
            name: name.to_owned(),
            nested: nested.join(", "),
        });
    }
    owned_file(home, name)?;
    let dir = resolve_inside(home, name)?;
    let meta = dir.symlink_metadata().map_err(io_error(&dir))?;
    if meta.file_type().is_symlink() {
        std::fs::remove_file(&dir).map_err(io_error(&dir))
    } else {
        std::fs::remove_dir_all(&dir).map_err(io_error(&dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse() {
        let t = template("utils/tiny-url", Some("Shorten: links"));
        let m = super::super::frontmatter::parse(&t);
        assert_eq!(m.name.as_deref(), Some("tiny-url"));
        assert_eq!(m.description.as_deref(), Some("Shorten: links"));
        assert!(template("a", None).contains("# a\n"));
    }

    #[test]
    fn crud_confined_to_the_root() {
        let home = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = home.path();
        create(root, "a/b", "---\nname: b\n---\nbody").unwrap();
        assert!(matches!(
            create(root, "a/b", "x"),
            Err(SkillError::AlreadyExists(_))
        ));
        assert!(matches!(
            create(root, "c", "  \n"),
            Err(SkillError::InvalidContent(_))
        ));
        assert!(matches!(
            create(root, "c", "bidi \u{202E}"),
            Err(SkillError::InvalidContent(_))
        ));
        assert!(matches!(
            create(root, "../x", "x"),
            Err(SkillError::InvalidName { .. })
        ));
        overwrite(root, "a/b", "new").unwrap();
        assert_eq!(read_owned(root, "a/b").unwrap().1, "new");
        assert!(matches!(
            overwrite(root, "nope", "x"),
            Err(SkillError::NotFound(_))
        ));
        // A symlink out of the root is neither written through nor deleted.
        std::fs::create_dir_all(outside.path().join("evil")).unwrap();
        std::fs::write(outside.path().join("evil/SKILL.md"), "theirs").unwrap();
        std::os::unix::fs::symlink(outside.path().join("evil"), root.join("evil")).unwrap();
        assert!(matches!(
            overwrite(root, "evil", "x"),
            Err(SkillError::NotOwned { .. })
        ));
        assert!(matches!(
            delete(root, "evil", &[]),
            Err(SkillError::NotOwned { .. })
        ));
        assert!(matches!(
            create(root, "evil/inner", "x"),
            Err(SkillError::NotOwned { .. })
        ));
        assert_eq!(
            std::fs::read_to_string(outside.path().join("evil/SKILL.md")).unwrap(),
            "theirs"
        );
        // An alias link inside the root: writes land in the real file,
        // deleting removes only the link.
        std::os::unix::fs::symlink(root.join("a/b"), root.join("alias")).unwrap();
        overwrite(root, "alias", "via alias").unwrap();
        assert!(root
            .join("alias")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(root.join("a/b/SKILL.md")).unwrap(),
            "via alias"
        );
        delete(root, "alias", &[]).unwrap();
        assert!(root.join("a/b/SKILL.md").exists());
        assert!(matches!(
            delete(root, "a", &["a/b".into()]),
            Err(SkillError::HasNestedSkills { .. })
        ));
        delete(root, "a/b", &[]).unwrap();
        assert!(!root.join("a/b").exists());
    }
}
