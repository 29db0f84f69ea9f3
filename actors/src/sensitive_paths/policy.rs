//! [`SensitivePaths`]: which files no kirocrew surface may read or write
//! through its ordinary paths (`is_sensitive_path` in the spec).
//!
//! A path is checked twice: as written (`~` expanded, `..` applied
//! lexically) and as resolved (every link followed). Either one matching a
//! rule makes it sensitive, so `~/.ssh/id_rsa` is refused even when
//! `~/.ssh` is a link to an innocent-looking directory, and an
//! innocent-looking link into `~/.ssh` is refused too. A path whose
//! resolution fails (a link loop, an unreadable directory on the way)
//! counts as sensitive: where it leads is unknown (fail-closed).
//!
//! The rules match path components anywhere, not only under the current
//! user's home: another user's `/home/bob/.ssh` or a backup copy of a
//! `.aws` folder holds credentials just the same. Comparisons ignore ASCII
//! case (case-insensitive filesystems).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::resolve::{expand_tilde, lexical, resolve};

/// Directories (or component sequences) whose whole subtree is sensitive,
/// wherever they appear.
const SENSITIVE_DIRS: &[&[&str]] = &[
    &[".ssh"],
    &[".gnupg"],
    &[".aws"],
    &[".kube"],
    &[".azure"],
    &[".password-store"],
    &[".config", "gcloud"],
    &[".local", "share", "keyrings"],
];

/// Files (component sequences ending in a file name) that hold
/// credentials, wherever they appear.
const SENSITIVE_FILES: &[&[&str]] = &[
    &[".docker", "config.json"],
    &[".config", "gh", "hosts.yml"],
    &[".cargo", "credentials"],
    &[".cargo", "credentials.toml"],
];

/// File names that are credentials wherever they are.
const SENSITIVE_NAMES: &[&str] = &[
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".env",
    ".envrc",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
];

/// Extensions of private key and key-store files.
const KEY_EXTENSIONS: &[&str] = &["pem", "key", "p12", "pfx", "jks", "keystore", "ppk", "kdbx"];

/// System files (and directories) refused by absolute path.
const SYSTEM_PATHS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/security/opasswd",
    "/proc/kcore",
];

/// Names under `/proc/<pid>/` that expose another process's secrets.
const PROC_NAMES: &[&str] = &["environ", "mem", "auxv"];

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensitiveMatch {
    /// The path as resolved (links followed), or as written when resolution
    /// failed.
    pub resolved: PathBuf,
    /// The rule that matched, for the operator (`".ssh directory"`, …).
    pub reason: String,
}

/// The sensitive-path policy. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SensitivePaths {
    home: PathBuf,
    base: PathBuf,
    data_home: Option<PathBuf>,
}

impl SensitivePaths {
    /// A policy expanding `~` to `home` (the user's home directory, injected
    /// so tests never depend on the real one), resolving relative paths
    /// against the process's current directory.
    pub fn new(home: impl Into<PathBuf>) -> Self {
        Self {
            home: home.into(),
            base: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            data_home: None,
        }
    }

    /// Also refuses the data home's own secrets (`api-token`).
    pub fn with_data_home(mut self, data_home: impl Into<PathBuf>) -> Self {
        self.data_home = Some(data_home.into());
        self
    }

    /// Resolves relative paths against `base` instead of the current
    /// directory.
    pub fn with_base_dir(mut self, base: impl Into<PathBuf>) -> Self {
        self.base = base.into();
        self
    }

    /// The home directory `~` expands to.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// `path` with `~` expanded, absolute and normalized lexically (no
    /// filesystem access).
    pub fn as_written(&self, path: &Path) -> PathBuf {
        lexical(&expand_tilde(path, &self.home), &self.base)
    }

    /// The resolved path if `path` is not sensitive; otherwise which rule
    /// refused it.
    pub fn check(&self, path: &Path) -> Result<PathBuf, SensitiveMatch> {
        let expanded = expand_tilde(path, &self.home);
        let written = lexical(&expanded, &self.base);
        let refuse = |resolved: &Path, reason: String| SensitiveMatch {
            resolved: resolved.to_path_buf(),
            reason,
        };
        let resolved = resolve(&expanded, &self.base)
            .map_err(|e| refuse(&written, format!("cannot be resolved ({e})")))?;
        if let Some(reason) = self.rule_for(&written) {
            return Err(refuse(&resolved, reason));
        }
        if let Some(reason) = self.rule_for(&resolved) {
            return Err(refuse(&resolved, reason));
        }
        Ok(resolved)
    }

    /// Whether `path` (as written or resolved) is sensitive
    /// (`is_sensitive_path`).
    pub fn is_sensitive(&self, path: &Path) -> bool {
        self.check(path).is_err()
    }

    /// The rule an absolute, normalized path matches, if any.
    fn rule_for(&self, path: &Path) -> Option<String> {
        let parts: Vec<String> = path
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(name) => Some(lower(name)),
                _ => None,
            })
            .collect();
        for dir in SENSITIVE_DIRS {
            if contains_run(&parts, dir) {
                return Some(format!("inside a {} directory", dir.join("/")));
            }
        }
        for file in SENSITIVE_FILES {
            if ends_with_run(&parts, file) {
                return Some(format!("a {} credentials file", file.join("/")));
            }
        }
        let name = parts.last().map(String::as_str).unwrap_or("");
        if let Some(reason) = name_rule(name) {
            return Some(reason);
        }
        if let Some(reason) = system_rule(path, &parts) {
            return Some(reason);
        }
        let data_home = self.data_home.as_ref()?;
        let token = data_home.join("api-token");
        let resolved_token = resolve(&token, &self.base).unwrap_or_else(|_| token.clone());
        (path == token || path == resolved_token).then(|| "the daemon's API token".to_owned())
    }
}

/// The ASCII-lowercased text of a component.
fn lower(name: &OsStr) -> String {
    name.to_string_lossy().to_ascii_lowercase()
}

/// Whether `needle` occurs as consecutive components of `parts`.
fn contains_run(parts: &[String], needle: &[&str]) -> bool {
    parts
        .windows(needle.len())
        .any(|w| w.iter().zip(needle).all(|(a, b)| a == b))
}

/// Whether `parts` ends with the components `needle`.
fn ends_with_run(parts: &[String], needle: &[&str]) -> bool {
    parts.len() >= needle.len()
        && parts[parts.len() - needle.len()..]
            .iter()
            .zip(needle)
            .all(|(a, b)| a == b)
}

/// Refusals by file name alone.
fn name_rule(name: &str) -> Option<String> {
    if SENSITIVE_NAMES.contains(&name) {
        return Some(format!("a {name} file"));
    }
    if name.starts_with(".env.") {
        return Some("a .env file".to_owned());
    }
    if name.starts_with("ssh_host_") && name.ends_with("_key") {
        return Some("an SSH host key".to_owned());
    }
    let ext = Path::new(name).extension().and_then(OsStr::to_str)?;
    KEY_EXTENSIONS
        .contains(&ext)
        .then(|| format!("a private key file (.{ext})"))
}

/// Refusals by absolute system location.
fn system_rule(path: &Path, parts: &[String]) -> Option<String> {
    if let Some(system) = SYSTEM_PATHS.iter().find(|p| path.starts_with(p)) {
        return Some(format!("the system file {system}"));
    }
    // `/proc/<pid>/environ`, `/proc/self/task/<tid>/mem`, …
    match (parts.first(), parts.last()) {
        (Some(proc), Some(name)) if proc == "proc" && PROC_NAMES.contains(&name.as_str()) => {
            Some(format!("a process's {name}"))
        }
        _ => None,
    }
}
