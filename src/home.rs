//! The data home: where every file kirocrew keeps lives
//! (`$KIROCREW_HOME`, default `~/.kiro/crew`, the reference layout).
//!
//! Also owns the API token file: created on the daemon's first start with
//! 32 random bytes (hex), mode 0600, and reused afterwards.
//!
//! Privacy: memory.db, the Markdown layers and the token are the user's
//! private data, and SQLite creates its files with the process umask
//! (usually 0644). So every command that opens the home sets the umask to
//! 077 (new files 0600, directories 0700), and the daemon's start removes
//! group/other permissions from what an older version or another tool left
//! behind ([`DataHome::tighten_permissions`]): the home itself, every entry
//! at its top level (files such as memory.db, its -wal/-shm, config.json,
//! api-token, lessons.jsonl; directories themselves), and the trees kirocrew
//! owns entirely, `workspace/`, `models/` and `history/`. Other subdirectories keep
//! their contents' modes (the home's 0700 already shuts others out of
//! them); symbolic links are never followed.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// Subdirectories whose whole tree kirocrew owns and keeps private.
const PRIVATE_TREES: &[&str] = &["workspace", "models", "history", "sessions"];

/// How deep [`PRIVATE_TREES`] are walked (they are two or three levels).
const MAX_TREE_DEPTH: usize = 8;

/// A file or directory of the data home that its group or others can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoosePath {
    /// The path.
    pub path: PathBuf,
    /// Its permission bits (e.g. 0o644).
    pub mode: u32,
}

/// The resolved data home.
#[derive(Debug, Clone)]
pub struct DataHome {
    root: PathBuf,
}

impl DataHome {
    /// `explicit` (from `--home` or `$KIROCREW_HOME`, which clap resolves in
    /// that order), else `~/.kiro/crew`.
    pub fn resolve(explicit: Option<PathBuf>) -> anyhow::Result<Self> {
        let root = match explicit {
            Some(path) => path,
            None => dirs::home_dir()
                .context("cannot find the home directory; pass --home or set KIROCREW_HOME")?
                .join(".kiro")
                .join("crew"),
        };
        Ok(Self { root })
    }

    /// Creates the directory (mode 0700) if it does not exist, and sets the
    /// process umask to 077 so every file created from now on is private.
    pub fn ensure(&self) -> anyhow::Result<()> {
        nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
        if !self.root.exists() {
            fs::create_dir_all(&self.root)
                .with_context(|| format!("creating data home {}", self.root.display()))?;
            fs::set_permissions(&self.root, fs::Permissions::from_mode(0o700))
                .with_context(|| format!("setting permissions on {}", self.root.display()))?;
        } else if !self.root.is_dir() {
            bail!("data home {} is not a directory", self.root.display());
        }
        Ok(())
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// memory.db (semantic, episodic, audit).
    pub fn memory_db(&self) -> PathBuf {
        self.root.join("memory.db")
    }

    /// `workspace/memory`: preferences.md, projects.md, history/.
    pub fn memory_dir(&self) -> PathBuf {
        self.root.join("workspace").join("memory")
    }

    /// The full-text index over the memory files (derived, rebuildable).
    pub fn memory_index_db(&self) -> PathBuf {
        self.root.join("memory_index.db")
    }

    /// lessons.jsonl: the lessons fallback when memory.db cannot be opened,
    /// and a legacy migration source.
    pub fn lessons_file(&self) -> PathBuf {
        self.root.join("lessons.jsonl")
    }

    /// The sensitive-path policy: `~` is the user's home directory, and the
    /// data home's own secrets (`api-token`) are refused too.
    pub fn sensitive_paths(&self) -> kirocrew_actors::sensitive_paths::SensitivePaths {
        let user_home = dirs::home_dir().unwrap_or_else(|| {
            // Every rule also matches by component wherever it appears, so
            // only `~`-relative spellings lose meaning without a home.
            tracing::warn!("no home directory found; '~' in paths expands to '/'");
            PathBuf::from("/")
        });
        kirocrew_actors::sensitive_paths::SensitivePaths::new(user_home).with_data_home(&self.root)
    }

    /// sessions/: the session transcripts.
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// hooks.json: the script hooks.
    pub fn hooks_file(&self) -> PathBuf {
        self.root.join("hooks.json")
    }

    /// security-events.jsonl: the security event log.
    pub fn security_log(&self) -> PathBuf {
        self.root.join(kirocrew_actors::security_log::LOG_FILE_NAME)
    }

    /// skills/: the owned skill directory (bundled skills are copied here).
    pub fn skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// skill-usage.json: the skill usage ledger.
    pub fn skill_usage_file(&self) -> PathBuf {
        self.root.join(kirocrew_actors::skills::ledger::USAGE_FILE)
    }

    /// `history/`: channel histories (`<channel_id>.jsonl`, observe mode)
    /// and `channels.json` (channel modes). Not `workspace/memory/history/`,
    /// the Markdown daily history.
    pub fn history_dir(&self) -> PathBuf {
        self.root.join("history")
    }

    /// The API token file.
    pub fn token_file(&self) -> PathBuf {
        self.root.join("api-token")
    }

    /// Where a running daemon records its address and pid.
    pub fn daemon_file(&self) -> PathBuf {
        self.root.join("daemon.json")
    }

    /// The home, its top-level entries and the [`PRIVATE_TREES`] that give
    /// group or others any permission (module docs).
    pub fn loose_permissions(&self) -> anyhow::Result<Vec<LoosePath>> {
        let mut found = Vec::new();
        let meta =
            fs::metadata(&self.root).with_context(|| format!("reading {}", self.root.display()))?;
        note_if_loose(&self.root, &meta, &mut found);
        let entries =
            fs::read_dir(&self.root).with_context(|| format!("listing {}", self.root.display()))?;
        // Entries can vanish while we look (SQLite's -shm, a finished
        // download): skip what cannot be read.
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            note_if_loose(&entry.path(), &meta, &mut found);
            let owned = PRIVATE_TREES.iter().any(|t| entry.file_name() == *t);
            if owned && meta.is_dir() {
                walk_tree(&entry.path(), 1, &mut found);
            }
        }
        Ok(found)
    }

    /// Removes group/other permissions from everything
    /// [`loose_permissions`](Self::loose_permissions) finds, logging each
    /// change. Returns what was changed.
    pub fn tighten_permissions(&self) -> anyhow::Result<Vec<LoosePath>> {
        let mut changed = Vec::new();
        for loose in self.loose_permissions()? {
            let mode = loose.mode & !0o077;
            match fs::set_permissions(&loose.path, fs::Permissions::from_mode(mode)) {
                Ok(()) => {
                    tracing::warn!(
                        path = %loose.path.display(),
                        was = format!("{:o}", loose.mode),
                        now = format!("{mode:o}"),
                        "data home entry was accessible to other users; tightened"
                    );
                    changed.push(loose);
                }
                // The root must be private; a vanished entry is no risk.
                Err(e) if loose.path == self.root => {
                    return Err(e)
                        .with_context(|| format!("setting permissions on {}", self.root.display()))
                }
                Err(e) => {
                    tracing::warn!(path = %loose.path.display(), error = %e, "cannot tighten permissions")
                }
            }
        }
        Ok(changed)
    }

    /// Reads the API token, creating it (mode 0600) if absent or empty.
    pub fn load_or_create_token(&self) -> anyhow::Result<String> {
        let path = self.token_file();
        match fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => {
                tighten_token_file(&path)?;
                return Ok(text.trim().to_owned());
            }
            Ok(_) => fs::remove_file(&path)
                .with_context(|| format!("replacing empty token file {}", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| anyhow::anyhow!("no randomness for the token: {e}"))?;
        let token = hex::encode(bytes);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        file.write_all(token.as_bytes())?;
        file.sync_all()?;
        Ok(token)
    }

    /// Reads an existing token without creating one.
    pub fn read_token(&self) -> Option<String> {
        fs::read_to_string(self.token_file())
            .ok()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
    }
}

fn note_if_loose(path: &Path, meta: &fs::Metadata, found: &mut Vec<LoosePath>) {
    let mode = meta.permissions().mode() & 0o777;
    if !meta.file_type().is_symlink() && mode & 0o077 != 0 {
        found.push(LoosePath {
            path: path.to_path_buf(),
            mode,
        });
    }
}

fn walk_tree(dir: &Path, depth: usize, found: &mut Vec<LoosePath>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        // `DirEntry::metadata` does not follow symbolic links.
        let Ok(meta) = entry.metadata() else { continue };
        note_if_loose(&entry.path(), &meta, found);
        if meta.is_dir() && depth < MAX_TREE_DEPTH {
            walk_tree(&entry.path(), depth + 1, found);
        }
    }
}

/// A token readable by others is as good as published: reset it to 0600.
fn tighten_token_file(path: &Path) -> anyhow::Result<()> {
    let mode = fs::metadata(path)?.permissions().mode() & 0o777;
    if mode != 0o600 {
        tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "api-token had loose permissions; setting 0600");
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_created_once_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let home = DataHome::resolve(Some(dir.path().join("h"))).unwrap();
        home.ensure().unwrap();
        let first = home.load_or_create_token().unwrap();
        assert_eq!(first.len(), 64);
        let mode = fs::metadata(home.token_file())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(home.load_or_create_token().unwrap(), first);
        fs::set_permissions(home.token_file(), fs::Permissions::from_mode(0o644)).unwrap();
        home.load_or_create_token().unwrap();
        let mode = fs::metadata(home.token_file())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }

    fn mode_of(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn write_with_mode(path: &Path, mode: u32) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "x").unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn tightening_removes_group_and_other_access() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("h");
        let home = DataHome::resolve(Some(root.clone())).unwrap();
        home.ensure().unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        write_with_mode(&root.join("memory.db"), 0o644);
        write_with_mode(&root.join("memory.db-wal"), 0o664);
        write_with_mode(&root.join("hook.sh"), 0o755);
        write_with_mode(&root.join("api-token"), 0o600);
        let history = root.join("workspace/memory/history");
        write_with_mode(&history.join("2024-01-01.md"), 0o644);
        fs::set_permissions(&history, fs::Permissions::from_mode(0o755)).unwrap();
        // Not kirocrew's tree: the directory is tightened, its contents not.
        write_with_mode(&root.join("other/file"), 0o644);
        fs::set_permissions(root.join("other"), fs::Permissions::from_mode(0o755)).unwrap();
        // A link is never followed.
        let outside = dir.path().join("outside.txt");
        write_with_mode(&outside, 0o644);
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();

        let loose = home.loose_permissions().unwrap();
        assert_eq!(loose.len(), 7, "{loose:?}");
        assert_eq!(home.tighten_permissions().unwrap(), loose);
        assert!(home.loose_permissions().unwrap().is_empty());
        for (path, mode) in [
            (root.clone(), 0o700),
            (root.join("memory.db"), 0o600),
            (root.join("memory.db-wal"), 0o600),
            (root.join("hook.sh"), 0o700),
            (root.join("api-token"), 0o600),
            (history.clone(), 0o700),
            (history.join("2024-01-01.md"), 0o600),
            (root.join("other"), 0o700),
            (root.join("other/file"), 0o644),
            (outside, 0o644),
        ] {
            assert_eq!(mode_of(&path), mode, "{}", path.display());
        }
        assert!(home.tighten_permissions().unwrap().is_empty());
    }
}
