//! The script-hook sandbox (issue 41): what confines a hook, what this
//! machine can confine it with, and the report of which layers held.
//!
//! A script hook is a shell line written by the person at the machine, but
//! it runs on events an agent (or a prompt injected into one) triggers, so
//! a mistaken or subverted hook must not reach what the daemon can. Each
//! run gets, layer by layer:
//!
//! - **env**: a cleared environment with only the documented variables
//!   (`KIROCREW_HOOK_EVENT`, `KIROCREW_HOOK_CONTEXT`, the run marker, the
//!   run's extra env such as `TOOL_NAME`), `PATH`, `HOME`, `LANG` and
//!   `TMPDIR`. The daemon's own secrets (`KIROCREW_LLM_API_KEY`, …) never
//!   pass. Always holds.
//! - **network**: a new network namespace (only a down loopback). As root
//!   `unshare(CLONE_NEWNET)` suffices; otherwise a user namespace mapping
//!   the daemon's uid/gid to themselves comes with it.
//! - **filesystem**: everything read-only except a fresh per-run scratch
//!   directory (the hook's cwd and `$TMPDIR`, removed after the run) and
//!   `/dev/null`. Landlock (the `landlock` crate) where the kernel has it;
//!   otherwise, where mount namespaces work, a private mount namespace
//!   whose mounts are all made read-only (`mount_setattr` with
//!   `AT_RECURSIVE`) and the scratch directory bind-mounted writable on
//!   top: weaker (it does not stop `connect()` on a Unix socket file, and
//!   DAC still applies) but it keeps the hook from changing files.
//! - **secrets hidden**: in the hook's mount namespace `/dev/null` is
//!   bind-mounted over the data home's secret files (`api-token`,
//!   `config.json`, which may hold `llm_api_key`, `mcp.json`), so they
//!   read as empty. Landlock cannot
//!   express "all of / except this file", hence the mount namespace.
//! - **rlimits**: CPU seconds, address space, file size (`setrlimit`,
//!   which always lowers). The process count is the odd one:
//!   `RLIMIT_NPROC` is ignored for root and counted per user, so it holds
//!   only in a user namespace of a non-root daemon (counted per namespace
//!   there). For a root daemon the run joins a fresh pids cgroup
//!   (`pids.max`) when a pids hierarchy is writable. Which of these holds
//!   is found at run time ([`capabilities`]), never assumed.
//!
//! How the child is set up: `pre_exec` after `fork`, doing raw syscalls
//! only (`confine.rs`). Everything that allocates (paths as `CString`s,
//! the Landlock ruleset fd, the cgroup's `cgroup.procs` fd, the uid map
//! lines) is prepared in the parent first, so the child, which may have
//! been forked while another thread held the allocator lock, never
//! allocates or locks. This keeps one binary and one exec (a re-exec'd
//! helper stage would need the daemon's own path at hook time and a second
//! exec per run).
//!
//! `hooks.sandbox` in config.json chooses: `best_effort` (default) runs
//! with the layers this machine has and reports which held; `required`
//! refuses to run a hook when any layer is missing (a `hook_sandbox_refused`
//! security event, the refusal in the hook's outcome); `off` runs as
//! before (the environment is still cleared).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// `hooks.sandbox`: how strictly script hooks are confined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// Refuse to run a hook unless every layer can be set up.
    Required,
    /// Run with the layers this machine has, and say which held.
    #[default]
    BestEffort,
    /// No confinement beyond the cleared environment.
    Off,
}

/// Which layers hold (for one run, or on this machine).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SandboxLayers {
    /// Cleared environment with the documented variables only.
    pub env: bool,
    /// A network namespace of its own.
    pub network: bool,
    /// Read-only filesystem but for the scratch directory.
    pub filesystem: bool,
    /// How: `landlock` or `read_only_mounts`.
    pub filesystem_via: Option<&'static str>,
    /// The data home's secret files read as empty.
    pub secrets_hidden: bool,
    /// `RLIMIT_CPU`.
    pub cpu: bool,
    /// `RLIMIT_AS`.
    pub memory: bool,
    /// A bound on the processes the hook can start.
    pub processes: bool,
    /// How: `pids_cgroup` or `user_namespace_nproc`.
    pub processes_via: Option<&'static str>,
    /// `RLIMIT_FSIZE`.
    pub file_size: bool,
}

impl SandboxLayers {
    /// The names of the layers that do not hold.
    pub fn missing(&self) -> Vec<&'static str> {
        [
            ("env", self.env),
            ("network", self.network),
            ("filesystem", self.filesystem),
            ("secrets_hidden", self.secrets_hidden),
            ("cpu", self.cpu),
            ("memory", self.memory),
            ("processes", self.processes),
            ("file_size", self.file_size),
        ]
        .into_iter()
        .filter_map(|(name, held)| (!held).then_some(name))
        .collect()
    }
}

/// The sandbox part of one run's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxReport {
    /// The mode in force.
    pub mode: SandboxMode,
    /// What held for this run.
    pub layers: SandboxLayers,
    /// The layers that did not hold.
    pub missing: Vec<&'static str>,
    /// `required` and a layer was missing: the hook did not run.
    pub refused: bool,
}

/// Why a hook was not run in its sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// `required`, and this machine lacks layers.
    #[error("hooks.sandbox is \"required\" but these layers cannot be set up here: {0}")]
    Missing(String),
    /// `required`, and a layer failed to set up for this run.
    #[error("hooks.sandbox is \"required\" but a layer failed to set up: {0}")]
    Setup(String),
    /// The per-run scratch directory could not be made.
    #[error("the hook's scratch directory could not be made: {0}")]
    Scratch(std::io::Error),
    /// A path cannot be passed to the kernel (it holds a NUL byte).
    #[error("path holds a NUL byte: {0}")]
    Path(String),
}

/// Limits applied to every sandboxed run.
pub mod limits {
    /// Address space, bytes (2 GiB: room for an interpreter, not for a
    /// runaway allocation).
    pub const MEMORY_BYTES: u64 = 2 << 30;
    /// Processes (the pids cgroup's `pids.max`, or `RLIMIT_NPROC`).
    pub const PROCESSES: u64 = 64;
    /// Largest file the hook can write, bytes.
    pub const FILE_SIZE_BYTES: u64 = 64 << 20;
}

/// What this machine can confine a hook with, found by trying.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// The daemon runs as root (no user namespace needed, `RLIMIT_NPROC`
    /// ignored).
    pub root: bool,
    /// The Landlock ABI version, 0 without Landlock.
    pub landlock_abi: i32,
    /// New network + mount namespaces (with a user namespace when not
    /// root) can be entered: verified by starting `/bin/true` in them.
    pub namespaces: bool,
    /// `mount_setattr` works there (the read-only fallback).
    pub mount_setattr: bool,
    /// A pids cgroup directory under which a per-run cgroup can be made.
    pub pids_cgroup: Option<PathBuf>,
}

/// What holds for a run in `mode` on a machine with `caps` (pure).
pub fn plan(mode: SandboxMode, caps: &Capabilities) -> SandboxLayers {
    if mode == SandboxMode::Off {
        return SandboxLayers {
            env: true,
            ..SandboxLayers::default()
        };
    }
    let landlock = caps.landlock_abi >= 1;
    let ro_mounts = !landlock && caps.namespaces && caps.mount_setattr;
    let (processes_via, processes) = if caps.pids_cgroup.is_some() {
        (Some("pids_cgroup"), true)
    } else if !caps.root && caps.namespaces {
        (Some("user_namespace_nproc"), true)
    } else {
        (None, false)
    };
    SandboxLayers {
        env: true,
        network: caps.namespaces,
        filesystem: landlock || ro_mounts,
        filesystem_via: if landlock {
            Some("landlock")
        } else if ro_mounts {
            Some("read_only_mounts")
        } else {
            None
        },
        secrets_hidden: caps.namespaces,
        cpu: true,
        memory: true,
        processes,
        processes_via,
        file_size: true,
    }
}

/// The data home's files that hold secrets: `api-token` (the API bearer
/// token), `config.json` (it may hold `consolidation.llm_api_key`) and
/// `mcp.json` (MCP servers' credentials). Only those that exist (a bind
/// mount needs its target). Other files stay readable: a hook script
/// kept in the home must still run.
pub fn home_secrets(home: &Path) -> Vec<PathBuf> {
    ["api-token", "config.json", "mcp.json"]
        .iter()
        .map(|name| home.join(name))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_follows_the_machine() {
        let none = Capabilities::default();
        let p = plan(SandboxMode::BestEffort, &none);
        assert!(p.env && p.cpu && p.memory && p.file_size);
        assert_eq!(
            p.missing(),
            ["network", "filesystem", "secrets_hidden", "processes"]
        );
        let root = Capabilities {
            root: true,
            landlock_abi: 0,
            namespaces: true,
            mount_setattr: true,
            pids_cgroup: None,
        };
        let p = plan(SandboxMode::Required, &root);
        assert_eq!(p.filesystem_via, Some("read_only_mounts"));
        assert_eq!(p.missing(), ["processes"], "root ignores RLIMIT_NPROC");
        let user = Capabilities {
            root: false,
            landlock_abi: 6,
            ..root.clone()
        };
        let p = plan(SandboxMode::BestEffort, &user);
        assert_eq!(p.filesystem_via, Some("landlock"));
        assert_eq!(p.processes_via, Some("user_namespace_nproc"));
        assert!(p.missing().is_empty());
        let off = plan(SandboxMode::Off, &user);
        assert!(off.env && !off.network && !off.filesystem);
    }

    #[test]
    fn the_mode_reads_as_snake_case() {
        let m: SandboxMode = serde_json::from_str("\"best_effort\"").unwrap();
        assert_eq!(m, SandboxMode::BestEffort);
        assert!(serde_json::from_str::<SandboxMode>("\"strict\"").is_err());
    }

    #[test]
    fn home_secrets_are_the_named_files_that_exist() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["api-token", "config.json", "memory.db", "hook.sh"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let names: Vec<_> = home_secrets(dir.path())
            .iter()
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect();
        assert_eq!(names, ["api-token", "config.json"]);
    }
}
