//! The skill catalog: SKILL.md discovery across the sources and the
//! frontmatter cache (spec: "Skills", source precedence, nested skills,
//! `_iter` TTL cache).
//!
//! Sources, first match of a name wins: `$KIROCREW_PROJECT_DIR/skills/`,
//! then the data home's `skills/` (which holds the bundled skills' copies
//! and the user's own), then each `skills.extra_paths` entry. A skill is a
//! directory holding `SKILL.md`; its name is the directory's path from the
//! root (`utils/tiny-url`), and skills nest. Hidden directories (`.git`,
//! `auto/.pending`) are not walked. A symlinked directory or SKILL.md is
//! followed only when it resolves inside the same root (that is how an
//! alias skill exists; one pointing elsewhere is skipped), and a directory
//! reached twice through links is walked once.
//!
//! The discovered list is cached for `ttl` and invalidated by every write
//! that goes through the actor; within the TTL a listing costs no syscall.
//! After it, each SKILL.md costs one stat, and the file is re-read only when
//! its size or modification time changed. `size_bytes` comes from that same
//! stat.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::frontmatter::{self, SkillMeta};
use super::names::{check_safe, lexically_under, MAX_NAME_DEPTH};
use super::triggers::CompiledTriggers;
use super::types::{CatalogEntry, SkillSource};

/// The file that makes a directory a skill.
pub(crate) const SKILL_FILE: &str = "SKILL.md";
/// Largest SKILL.md read, in bytes (a larger one is listed with an error).
pub(crate) const MAX_SKILL_BYTES: u64 = 1 << 20;

/// Where to look.
#[derive(Debug, Clone)]
pub(crate) struct CatalogRoots {
    /// The data home's `skills/` (owned).
    pub(crate) home: PathBuf,
    /// `$KIROCREW_PROJECT_DIR/skills/`, when set.
    pub(crate) project: Option<PathBuf>,
    /// `skills.extra_paths`.
    pub(crate) extra: Vec<PathBuf>,
    /// Names of the bundled skills (their home copies list as `bundled`).
    pub(crate) bundled: HashSet<String>,
}

#[derive(Debug, Clone)]
struct Cached {
    len: u64,
    modified: Option<SystemTime>,
    meta: Arc<SkillMeta>,
    triggers: Arc<CompiledTriggers>,
}

/// The catalog and its caches (owned by the skills actor).
#[derive(Debug)]
pub(crate) struct Catalog {
    roots: CatalogRoots,
    ttl: Duration,
    entries: Arc<Vec<CatalogEntry>>,
    by_name: HashMap<String, usize>,
    loaded_at: Option<Instant>,
    parsed: HashMap<PathBuf, Cached>,
    generation: u64,
}

impl Catalog {
    /// An empty catalog; the first use discovers.
    pub(crate) fn new(roots: CatalogRoots, ttl: Duration) -> Self {
        Self {
            roots,
            ttl,
            entries: Arc::new(Vec::new()),
            by_name: HashMap::new(),
            loaded_at: None,
            parsed: HashMap::new(),
            generation: 0,
        }
    }

    /// Forgets the discovered list (the parse cache stays: it is keyed by
    /// size and mtime).
    pub(crate) fn invalidate(&mut self) {
        self.loaded_at = None;
    }

    /// Bumped on every rediscovery.
    pub(crate) fn generation(&mut self) -> u64 {
        self.ensure();
        self.generation
    }

    /// Every skill, rediscovered if the TTL ran out.
    pub(crate) fn entries(&mut self) -> Arc<Vec<CatalogEntry>> {
        self.ensure();
        Arc::clone(&self.entries)
    }

    /// One skill by name.
    pub(crate) fn get(&mut self, name: &str) -> Option<CatalogEntry> {
        self.ensure();
        self.by_name.get(name).map(|&i| self.entries[i].clone())
    }

    fn ensure(&mut self) {
        if self.loaded_at.is_some_and(|t| t.elapsed() < self.ttl) {
            return;
        }
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        let roots = self.roots.clone();
        let mut sources: Vec<(PathBuf, bool)> = Vec::new();
        if let Some(p) = &roots.project {
            sources.push((p.clone(), true));
        }
        sources.push((roots.home.clone(), false));
        sources.extend(roots.extra.iter().map(|p| (p.clone(), false)));
        for (root, project) in sources {
            let mut skills = Vec::new();
            discover(&root, &mut skills);
            for (name, path, symlinked) in skills {
                if !seen.insert(name.clone()) {
                    continue;
                }
                let source = if project {
                    SkillSource::Project
                } else if root == roots.home && roots.bundled.contains(&name) {
                    SkillSource::Bundled
                } else {
                    SkillSource::Kirocrew
                };
                found.push(self.entry(name, path, source, symlinked));
            }
        }
        found.sort_by(|a, b| a.name.cmp(&b.name));
        let live: HashSet<&PathBuf> = found.iter().map(|e| &e.path).collect();
        self.parsed.retain(|p, _| live.contains(p));
        self.by_name = found
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        self.entries = Arc::new(found);
        self.generation += 1;
        self.loaded_at = Some(Instant::now());
    }

    fn entry(
        &mut self,
        name: String,
        path: PathBuf,
        source: SkillSource,
        symlinked: bool,
    ) -> CatalogEntry {
        let stat = std::fs::metadata(&path).ok();
        let len = stat.as_ref().map_or(0, |m| m.len());
        let modified = stat.as_ref().and_then(|m| m.modified().ok());
        let cached = match self.parsed.get(&path) {
            Some(c) if c.len == len && c.modified == modified => c.clone(),
            _ => {
                let meta = Arc::new(read_meta(&path, len));
                let c = Cached {
                    len,
                    modified,
                    triggers: Arc::new(CompiledTriggers::compile(&meta.triggers)),
                    meta,
                };
                self.parsed.insert(path.clone(), c.clone());
                c
            }
        };
        CatalogEntry {
            owned: lexically_under(&path, &self.roots.home),
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            name,
            path,
            source,
            size_bytes: len,
            modified_secs: modified
                .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX)),
            symlinked,
            meta: cached.meta,
            triggers: cached.triggers,
        }
    }
}

/// Reads and parses a SKILL.md; a problem becomes the entry's error.
fn read_meta(path: &Path, len: u64) -> SkillMeta {
    if len > MAX_SKILL_BYTES {
        return SkillMeta {
            error: Some(format!(
                "SKILL.md is {len} bytes; the limit is {MAX_SKILL_BYTES}"
            )),
            ..SkillMeta::default()
        };
    }
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let mut meta = frontmatter::parse(&text);
            if matches!(text, std::borrow::Cow::Owned(_)) && meta.error.is_none() {
                meta.error = Some("SKILL.md is not valid UTF-8; invalid bytes replaced".into());
            }
            meta
        }
        Err(e) => SkillMeta {
            error: Some(format!("cannot read SKILL.md: {e}")),
            ..SkillMeta::default()
        },
    }
}

/// Every skill under `root`: (name, SKILL.md path, reached through a link).
pub(crate) fn discover(root: &Path, out: &mut Vec<(String, PathBuf, bool)>) {
    let Ok(canonical_root) = root.canonicalize() else {
        return;
    };
    let mut visited = HashSet::from([canonical_root.clone()]);
    walk(root, &canonical_root, root, 0, false, &mut visited, out);
}

fn walk(
    root: &Path,
    canonical_root: &Path,
    dir: &Path,
    depth: usize,
    via_link: bool,
    visited: &mut HashSet<PathBuf>,
    out: &mut Vec<(String, PathBuf, bool)>,
) {
    if depth > MAX_NAME_DEPTH {
        return;
    }
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut children: Vec<_> = read.filter_map(Result::ok).collect();
    children.sort_by_key(|e| e.file_name());
    for child in children {
        let file_name = child.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        if file_name.starts_with('.') {
            continue;
        }
        let Ok(kind) = child.file_type() else {
            continue;
        };
        let path = child.path();
        let mut linked = via_link;
        if kind.is_symlink() {
            let Ok(real) = path.canonicalize() else {
                continue;
            };
            if !real.starts_with(canonical_root) || !real.is_dir() {
                tracing::debug!(path = %path.display(), "skipped a link leaving the skills root");
                continue;
            }
            if !visited.insert(real) {
                continue;
            }
            linked = true;
        } else if !kind.is_dir() {
            continue;
        }
        let skill_file = path.join(SKILL_FILE);
        if let Some(file_linked) = skill_file_state(&skill_file, canonical_root) {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            if check_safe(&name).is_ok() {
                out.push((name, skill_file, linked || file_linked));
            }
        }
        walk(root, canonical_root, &path, depth + 1, linked, visited, out);
    }
}

/// `Some(is_link)` when `file` is a regular SKILL.md (a link to one only
/// if it stays inside the root).
fn skill_file_state(file: &Path, canonical_root: &Path) -> Option<bool> {
    let meta = std::fs::symlink_metadata(file).ok()?;
    if meta.is_file() {
        return Some(false);
    }
    if meta.file_type().is_symlink() {
        let real = file.canonicalize().ok()?;
        return (real.starts_with(canonical_root) && real.is_file()).then_some(true);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn skill(root: &Path, name: &str, text: &str) {
        fs::create_dir_all(root.join(name)).unwrap();
        fs::write(root.join(name).join(SKILL_FILE), text).unwrap();
    }

    #[test]
    fn sources_nesting_and_precedence() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let extra = tempfile::tempdir().unwrap();
        skill(home.path(), "a", "---\ndescription: home a\n---\n");
        skill(
            home.path(),
            "utils/tiny-url",
            "---\ndescription: nested\n---\n",
        );
        skill(home.path(), "utils", "---\ndescription: parent\n---\n");
        skill(home.path(), ".hidden/x", "x");
        skill(home.path(), "bundled-one", "b");
        skill(project.path(), "a", "---\ndescription: project a\n---\n");
        skill(extra.path(), "e", "---\ndescription: extra\n---\n");
        skill(extra.path(), "utils", "shadowed");
        fs::create_dir_all(home.path().join("no-skill-here")).unwrap();
        let mut c = Catalog::new(
            CatalogRoots {
                home: home.path().to_path_buf(),
                project: Some(project.path().to_path_buf()),
                extra: vec![extra.path().to_path_buf()],
                bundled: HashSet::from(["bundled-one".to_owned()]),
            },
            Duration::from_secs(60),
        );
        let names: Vec<String> = c.entries().iter().map(|e| e.name.clone()).collect();
        assert_eq!(names, ["a", "bundled-one", "e", "utils", "utils/tiny-url"]);
        let a = c.get("a").unwrap();
        assert_eq!(a.source, SkillSource::Project);
        assert!(!a.owned);
        assert_eq!(a.meta.description.as_deref(), Some("project a"));
        assert_eq!(c.get("bundled-one").unwrap().source, SkillSource::Bundled);
        let e = c.get("e").unwrap();
        assert_eq!((e.source, e.owned), (SkillSource::Kirocrew, false));
        let u = c.get("utils").unwrap();
        assert!(u.owned);
        assert_eq!(u.meta.description.as_deref(), Some("parent"));
        let nested = "---\ndescription: nested\n---\n";
        assert_eq!(
            c.get("utils/tiny-url").unwrap().size_bytes,
            nested.len() as u64
        );
    }

    #[test]
    fn cache_until_invalidated_and_links() {
        let home = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        skill(home.path(), "real", "---\ndescription: one\n---\n");
        skill(outside.path(), "foreign", "x");
        std::os::unix::fs::symlink(home.path().join("real"), home.path().join("alias")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("foreign"), home.path().join("foreign"))
            .unwrap();
        std::os::unix::fs::symlink(home.path(), home.path().join("real/loop")).unwrap();
        let mut c = Catalog::new(
            CatalogRoots {
                home: home.path().to_path_buf(),
                project: None,
                extra: vec![],
                bundled: HashSet::new(),
            },
            Duration::from_secs(3600),
        );
        let names: Vec<String> = c.entries().iter().map(|e| e.name.clone()).collect();
        assert_eq!(names, ["alias", "real"]);
        assert!(c.get("alias").unwrap().symlinked);
        assert!(!c.get("real").unwrap().symlinked);
        fs::write(
            home.path().join("real/SKILL.md"),
            "---\ndescription: two!\n---\n",
        )
        .unwrap();
        assert_eq!(
            c.get("real").unwrap().meta.description.as_deref(),
            Some("one"),
            "cached"
        );
        c.invalidate();
        assert_eq!(
            c.get("real").unwrap().meta.description.as_deref(),
            Some("two!")
        );
    }
}
