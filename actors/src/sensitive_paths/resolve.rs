//! Turning a caller's path into the file it really names: `~` expanded
//! against an injected home directory, made absolute, every symbolic link
//! followed and every `..` applied to what it really follows — so
//! `~/../root/.ssh/id_rsa`, `notes/../../.ssh/id_rsa` and a link into
//! `~/.ssh` are all checked as the file they reach.
//!
//! `std::fs::canonicalize` does this only for paths that exist; a path the
//! caller is about to create (a channel history file) must be checked too,
//! so [`resolve`] canonicalizes the longest existing prefix, follows
//! dangling links by hand (bounded, like the kernel's 40), and applies the
//! rest lexically (a component that does not exist cannot be a link).

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Links followed before a path counts as a loop (Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// `path` with a leading `~` or `~/` replaced by `home`. `~user` forms are
/// left as they are (a relative path named `~user`): the service never
/// reads another user's home on purpose.
pub(crate) fn expand_tilde(path: &Path, home: &Path) -> PathBuf {
    let mut components = path.components();
    match components.next() {
        Some(Component::Normal(first)) if first == OsStr::new("~") => {
            home.join(components.as_path())
        }
        _ => path.to_path_buf(),
    }
}

/// `path` made absolute against `cwd` and normalized lexically: `.`
/// dropped, `..` pops (never above `/`). No filesystem access. Used for the
/// "as written" check, which catches `~/.ssh` even when it is a link to an
/// innocent-looking place.
pub(crate) fn lexical(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::from("/");
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The real location `path` names, made absolute against `cwd`, whether or
/// not it exists. Errors only when resolution itself fails in a way that
/// hides where the path leads (a link loop, an unreadable directory on the
/// way): callers treat that as sensitive.
pub(crate) fn resolve(path: &Path, cwd: &Path) -> io::Result<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut links = 0;
    resolve_from(PathBuf::from("/"), &absolute, &mut links)
}

/// Applies `rest` to `base` (already resolved) component by component.
fn resolve_from(mut out: PathBuf, rest: &Path, links: &mut usize) -> io::Result<PathBuf> {
    // Once a component does not exist nothing below it can be a link, so
    // the remainder is applied lexically.
    let mut missing = false;
    for component in rest.components() {
        match component {
            Component::RootDir => out = PathBuf::from("/"),
            Component::CurDir | Component::Prefix(_) => {}
            // `out` is fully resolved, so popping it is the real parent.
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) if missing => out.push(name),
            Component::Normal(name) => {
                let next = out.join(name);
                match std::fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        *links += 1;
                        if *links > MAX_LINKS {
                            return Err(io::Error::other("too many levels of symbolic links"));
                        }
                        let target = std::fs::read_link(&next)?;
                        // A relative target is relative to the link's
                        // directory, which is `out`.
                        out = resolve_from(out, &target, links)?;
                    }
                    Ok(_) => out = next,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        missing = true;
                        out = next;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn tilde_expands_only_as_the_first_component() {
        let home = Path::new("/home/u");
        assert_eq!(expand_tilde(Path::new("~"), home), home);
        assert_eq!(
            expand_tilde(Path::new("~/.ssh/id_rsa"), home),
            Path::new("/home/u/.ssh/id_rsa")
        );
        assert_eq!(expand_tilde(Path::new("a/~/b"), home), Path::new("a/~/b"));
        assert_eq!(expand_tilde(Path::new("~bob/x"), home), Path::new("~bob/x"));
    }

    #[test]
    fn lexical_normalization_never_climbs_above_root() {
        let cwd = Path::new("/srv/app");
        assert_eq!(
            lexical(Path::new("../../../../etc"), cwd),
            Path::new("/etc")
        );
        assert_eq!(
            lexical(Path::new("./a/./b/.."), cwd),
            Path::new("/srv/app/a")
        );
        assert_eq!(lexical(Path::new("/x/../y"), cwd), Path::new("/y"));
    }

    #[test]
    fn resolution_follows_links_before_applying_dot_dot() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real/deep")).unwrap();
        std::fs::create_dir_all(root.join("other")).unwrap();
        symlink(root.join("real/deep"), root.join("other/link")).unwrap();
        // `link/..` is `real`, not `other`.
        assert_eq!(
            resolve(Path::new("other/link/../x"), &root).unwrap(),
            root.join("real/x")
        );
        // A dangling link is followed to where it would point.
        symlink("../real/new-file", root.join("other/dangling")).unwrap();
        assert_eq!(
            resolve(Path::new("other/dangling"), &root).unwrap(),
            root.join("real/new-file")
        );
        // Missing components are kept lexically.
        assert_eq!(
            resolve(Path::new("nope/a/../b"), &root).unwrap(),
            root.join("nope/b")
        );
        // A loop is an error, not a hang.
        symlink(root.join("loop-b"), root.join("loop-a")).unwrap();
        symlink(root.join("loop-a"), root.join("loop-b")).unwrap();
        assert!(resolve(Path::new("loop-a/x"), &root).is_err());
    }
}
