//! Skill names and path safety.
//!
//! A skill's name is its directory's path relative to the skills root
//! (`utils/tiny-url`). A name that reaches the file system must be a plain
//! relative path inside the root: no `..` or `.` segment, no `\`, no
//! leading `/`, no NUL, no percent escape (a `%2e%2e` that some layer
//! decodes later is refused up front). `POST /api/skills` additionally
//! *sanitizes* the name it is given to lowercase letters, digits, hyphens
//! and slashes (spec: "POST sanitizes name to lowercase + hyphens +
//! slashes"), after refusing the unsafe shapes above rather than rewriting
//! them into something else.
//!
//! Symlinks are checked at the write boundary ([`resolve_inside`]): the
//! deepest existing ancestor of a target is canonicalized and must stay
//! under the canonical root, so a symlinked directory pointing outside the
//! root is never written through.

use std::path::{Component, Path, PathBuf};

use super::error::SkillError;

/// Longest accepted name, in bytes.
pub(super) const MAX_NAME_LEN: usize = 200;
/// Deepest accepted nesting.
pub(super) const MAX_NAME_DEPTH: usize = 8;

fn invalid(name: &str, reason: impl Into<String>) -> SkillError {
    SkillError::InvalidName {
        name: name.to_owned(),
        reason: reason.into(),
    }
}

/// Refuses names that could leave the root, whatever else they contain.
pub(super) fn check_safe(name: &str) -> Result<(), SkillError> {
    if name.is_empty() {
        return Err(invalid(name, "the name is empty"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(invalid(name, format!("longer than {MAX_NAME_LEN} bytes")));
    }
    if name.contains('\\') {
        return Err(invalid(name, "backslashes are not allowed"));
    }
    if name.contains('%') {
        return Err(invalid(name, "percent escapes are not allowed"));
    }
    if name.chars().any(char::is_control) {
        return Err(invalid(name, "control characters are not allowed"));
    }
    if name.starts_with('/') || Path::new(name).is_absolute() {
        return Err(invalid(name, "absolute paths are not allowed"));
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() > MAX_NAME_DEPTH {
        return Err(invalid(
            name,
            format!("deeper than {MAX_NAME_DEPTH} levels"),
        ));
    }
    for seg in &segments {
        match *seg {
            "" => return Err(invalid(name, "empty path segment")),
            "." | ".." => return Err(invalid(name, "'.' and '..' segments are not allowed")),
            s if s.starts_with('.') => {
                return Err(invalid(name, "hidden (dot) directories are not skills"))
            }
            "-" => return Err(invalid(name, "'-' is reserved")),
            _ => {}
        }
    }
    if Path::new(name)
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(invalid(name, "not a plain relative path"));
    }
    Ok(())
}

/// The name `POST /api/skills` stores: unsafe shapes refused, then
/// lowercased, with spaces, `_` and `.` turned into hyphens, other
/// characters dropped, hyphen runs collapsed and trimmed per segment.
pub(super) fn sanitize(raw: &str) -> Result<String, SkillError> {
    let trimmed = raw.trim().trim_end_matches('/');
    check_safe(trimmed)?;
    let mut segments = Vec::new();
    for seg in trimmed.split('/') {
        let mut s = String::with_capacity(seg.len());
        for c in seg.chars().flat_map(char::to_lowercase) {
            let c = match c {
                'a'..='z' | '0'..='9' => c,
                '-' | '_' | '.' | ' ' | '\t' => '-',
                _ => continue,
            };
            if !(c == '-' && s.ends_with('-')) {
                s.push(c);
            }
        }
        let s = s.trim_matches('-').to_owned();
        if s.is_empty() {
            return Err(invalid(
                raw,
                format!("segment {seg:?} has no letters or digits"),
            ));
        }
        segments.push(s);
    }
    Ok(segments.join("/"))
}

/// `root/name` after checking that no existing part of it resolves outside
/// `root` (symlinks included). `root` need not exist yet.
pub(super) fn resolve_inside(root: &Path, name: &str) -> Result<PathBuf, SkillError> {
    check_safe(name)?;
    let target = root.join(name);
    let Ok(canonical_root) = root.canonicalize() else {
        // No root yet: nothing under it can be a symlink.
        return Ok(target);
    };
    let mut probe = target.clone();
    loop {
        if probe.symlink_metadata().is_ok() {
            let resolved = probe.canonicalize().map_err(|_| SkillError::NotOwned {
                name: name.to_owned(),
                reason: format!("{} is a dangling link", probe.display()),
            })?;
            if !resolved.starts_with(&canonical_root) {
                return Err(SkillError::NotOwned {
                    name: name.to_owned(),
                    reason: format!("{} resolves outside the skills directory", probe.display()),
                });
            }
            return Ok(target);
        }
        if !probe.pop() || probe.as_os_str().is_empty() {
            return Ok(target);
        }
    }
}

/// Whether `path` lies under `root` by path comparison alone (no syscall;
/// the listing's `owned`).
pub(super) fn lexically_under(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizing() {
        assert_eq!(sanitize("My Skill").unwrap(), "my-skill");
        assert_eq!(sanitize("Utils/Tiny_URL").unwrap(), "utils/tiny-url");
        assert_eq!(sanitize(" a--b!! ").unwrap(), "a-b");
        assert_eq!(sanitize("lead/trail/").unwrap(), "lead/trail");
        assert!(
            sanitize("/abs/x").is_err(),
            "absolute paths are refused, not rewritten"
        );
        assert_eq!(sanitize("v1.2").unwrap(), "v1-2");
        for bad in [
            "",
            "../x",
            "a/../../b",
            "%2e%2e/x",
            "a\\b",
            "a//b",
            "!!!",
            ".hidden",
            "-",
            "a/./b",
        ] {
            assert!(sanitize(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn safety() {
        assert!(check_safe("utils/tiny-url").is_ok());
        assert!(check_safe("Mixed_Case").is_ok());
        for bad in [
            "/etc/passwd",
            "..",
            "a/..",
            "x/%2E%2E",
            "a\0b",
            "a\\..\\b",
            "a/-/b",
        ] {
            assert!(check_safe(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn symlinks_leaving_the_root_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("real")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        std::os::unix::fs::symlink(root.path().join("real"), root.path().join("alias")).unwrap();
        assert!(resolve_inside(root.path(), "real/new").is_ok());
        assert!(resolve_inside(root.path(), "alias").is_ok());
        assert!(matches!(
            resolve_inside(root.path(), "out/x"),
            Err(SkillError::NotOwned { .. })
        ));
        assert!(matches!(
            resolve_inside(root.path(), "out"),
            Err(SkillError::NotOwned { .. })
        ));
        assert!(resolve_inside(root.path(), "brand/new").is_ok());
    }
}
