//! The data home: where every file kirocrew keeps lives
//! (`$KIROCREW_HOME`, default `~/.kiro/crew`, the reference layout).
//!
//! Also owns the API token file: created on the daemon's first start with
//! 32 random bytes (hex), mode 0600, and reused afterwards.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

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

    /// Creates the directory (mode 0700) if it does not exist.
    pub fn ensure(&self) -> anyhow::Result<()> {
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

    /// The API token file.
    pub fn token_file(&self) -> PathBuf {
        self.root.join("api-token")
    }

    /// Where a running daemon records its address and pid.
    pub fn daemon_file(&self) -> PathBuf {
        self.root.join("daemon.json")
    }

    /// Reads the API token, creating it (mode 0600) if absent or empty.
    pub fn load_or_create_token(&self) -> anyhow::Result<String> {
        let path = self.token_file();
        match fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => {
                tighten_permissions(&path)?;
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

/// A token readable by others is as good as published: reset it to 0600.
fn tighten_permissions(path: &Path) -> anyhow::Result<()> {
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
}
