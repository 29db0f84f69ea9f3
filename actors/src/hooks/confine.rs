//! Setting up one sandboxed run (see `sandbox.rs` for the layers and why).
//!
//! [`Confinement::prepare_with`] does everything that allocates or touches the
//! filesystem, in the parent: the scratch directory, the Landlock ruleset
//! (an fd), the per-run pids cgroup (its `cgroup.procs` open for writing),
//! every path as a `CString`. [`ChildSteps::apply`] then runs in the forked
//! child (`pre_exec`) and is async-signal-safe: raw syscalls on prepared
//! data, no allocation, no locks. Its order matters: join the cgroup,
//! enter the namespaces, mount (hide secrets, read-only fallback), set the
//! rlimits, drop root's capabilities (so a root hook can neither undo the
//! mounts nor `setns` back into the host's network), and last enter
//! Landlock (which forbids any later mount change).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    path_beneath_rules, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};

use super::sandbox::{home_secrets, limits, plan, Capabilities, SandboxError, SandboxLayers};
use super::sandbox::{SandboxMode, SandboxReport};

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
/// A zero argument of `prctl`/`syscall` (variadic: passed full width).
const Z: libc::c_ulong = 0;
/// `SECBIT_NOROOT | SECBIT_NOROOT_LOCKED`: uid 0 gains no capabilities
/// at exec.
const SECBITS_NOROOT: libc::c_ulong = 0x1 | 0x2;

/// What the child does between fork and exec.
#[derive(Debug, Clone, Default)]
pub(super) struct ChildSteps {
    cgroup_procs: Option<RawFd>,
    unshare: libc::c_int,
    id_maps: Option<IdMaps>,
    root: Option<CString>,
    dev_null: Option<CString>,
    hide: Vec<CString>,
    readonly_except: Option<CString>,
    rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    drop_caps: bool,
    landlock: Option<RawFd>,
}

/// `/proc/self/{setgroups,uid_map,gid_map}` and the lines for them.
#[derive(Debug, Clone)]
struct IdMaps {
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    uid_line: Vec<u8>,
    gid_line: Vec<u8>,
}

impl IdMaps {
    fn own() -> Self {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        IdMaps {
            setgroups: c"/proc/self/setgroups".to_owned(),
            uid_map: c"/proc/self/uid_map".to_owned(),
            gid_map: c"/proc/self/gid_map".to_owned(),
            uid_line: format!("{uid} {uid} 1\n").into_bytes(),
            gid_line: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }
}

fn check(ret: libc::c_long) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Writes `bytes` to `fd` in one call (these files take one write).
///
/// # Safety
/// `fd` must be open; async-signal-safe.
unsafe fn write_fd(fd: RawFd, bytes: &[u8]) -> io::Result<()> {
    check(libc::write(fd, bytes.as_ptr().cast(), bytes.len()) as libc::c_long)
}

/// # Safety
/// Async-signal-safe: open, write, close.
unsafe fn write_path(path: &CString, bytes: &[u8]) -> io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    check(fd.into())?;
    let written = write_fd(fd, bytes);
    libc::close(fd);
    written
}

impl ChildSteps {
    /// The steps of the namespace probe (`probe.rs`): new network and
    /// mount namespaces (and a user namespace when not `root`); with
    /// `setattr`, the mounts made read-only but `/tmp`.
    pub(super) fn namespace_probe(root: bool, setattr: bool) -> Self {
        let mut steps = Self {
            unshare: libc::CLONE_NEWNET | libc::CLONE_NEWNS,
            root: Some(c"/".to_owned()),
            ..Self::default()
        };
        if !root {
            steps.unshare |= libc::CLONE_NEWUSER;
            steps.id_maps = Some(IdMaps::own());
        }
        if setattr {
            steps.readonly_except = Some(c"/tmp".to_owned());
        }
        steps
    }

    /// Applies every step, in the child between fork and exec.
    ///
    /// # Safety
    /// Only in a freshly forked child; makes raw syscalls on data prepared
    /// by the parent and neither allocates nor locks.
    pub(super) unsafe fn apply(&self) -> io::Result<()> {
        let null = std::ptr::null::<libc::c_char>();
        if let Some(fd) = self.cgroup_procs {
            write_fd(fd, b"0")?;
        }
        if self.unshare != 0 {
            check(libc::unshare(self.unshare).into())?;
        }
        if let Some(m) = &self.id_maps {
            write_path(&m.setgroups, b"deny")?;
            write_path(&m.uid_map, &m.uid_line)?;
            write_path(&m.gid_map, &m.gid_line)?;
        }
        if let Some(root) = &self.root {
            let flags = libc::MS_REC | libc::MS_PRIVATE;
            check(libc::mount(null, root.as_ptr(), null, flags, null.cast()).into())?;
            if let Some(dev_null) = &self.dev_null {
                for target in &self.hide {
                    let bind = libc::MS_BIND;
                    check(
                        libc::mount(dev_null.as_ptr(), target.as_ptr(), null, bind, null.cast())
                            .into(),
                    )?;
                }
            }
            if let Some(scratch) = &self.readonly_except {
                let attr = MountAttr {
                    attr_set: MOUNT_ATTR_RDONLY,
                    attr_clr: 0,
                    propagation: 0,
                    userns_fd: 0,
                };
                check(libc::syscall(
                    libc::SYS_mount_setattr,
                    libc::c_long::from(libc::AT_FDCWD),
                    root.as_ptr(),
                    libc::c_ulong::from(AT_RECURSIVE),
                    &attr as *const MountAttr,
                    std::mem::size_of::<MountAttr>(),
                ))?;
                let s = scratch.as_ptr();
                check(libc::mount(s, s, null, libc::MS_BIND, null.cast()).into())?;
                let rw = libc::MS_BIND | libc::MS_REMOUNT;
                check(libc::mount(null, s, null, rw, null.cast()).into())?;
            }
        }
        for (resource, value) in &self.rlimits {
            let limit = libc::rlimit {
                rlim_cur: *value,
                rlim_max: *value,
            };
            check(libc::setrlimit(*resource, &limit).into())?;
        }
        if self.drop_caps {
            for cap in 0..64 as libc::c_ulong {
                let r = libc::prctl(libc::PR_CAPBSET_DROP, cap, Z, Z, Z);
                // EINVAL: past the kernel's last capability.
                if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
                    return Err(io::Error::last_os_error());
                }
            }
            check(libc::prctl(libc::PR_SET_SECUREBITS, SECBITS_NOROOT, Z, Z, Z).into())?;
            let clear = libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong;
            check(libc::prctl(libc::PR_CAP_AMBIENT, clear, Z, Z, Z).into())?;
        }
        if let Some(fd) = self.landlock {
            let one: libc::c_ulong = 1;
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, one, Z, Z, Z).into())?;
            let fd = libc::c_long::from(fd);
            check(libc::syscall(libc::SYS_landlock_restrict_self, fd, Z))?;
        }
        Ok(())
    }
}

/// A per-run pids cgroup, removed when the run is over.
#[derive(Debug)]
struct Cgroup {
    dir: PathBuf,
    procs: std::fs::File,
}

/// Everything one sandboxed run holds until it ends.
#[derive(Debug)]
pub(super) struct Confinement {
    /// The run's report (layers that held).
    pub(super) report: SandboxReport,
    /// What the child does.
    pub(super) steps: ChildSteps,
    /// The hook's cwd and `$TMPDIR`, when sandboxed.
    pub(super) scratch: Option<tempfile::TempDir>,
    cgroup: Option<Cgroup>,
    _landlock: Option<OwnedFd>,
}

fn cstring(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| SandboxError::Path(path.display().to_string()))
}

impl Confinement {
    /// Prepares a run in `mode` (blocking: files and cgroups). In
    /// `required` mode a missing layer is an error (the hook must not
    /// run); in `best_effort` a layer that fails here is left out of the
    /// report.
    /// `caps`: what this machine can do (`probe::capabilities`).
    pub(super) fn prepare_with(
        caps: &Capabilities,
        mode: SandboxMode,
        home: Option<&Path>,
        cpu_secs: u64,
    ) -> Result<Self, SandboxError> {
        let mut layers = plan(mode, caps);
        let mut out = Confinement {
            report: report(mode, &layers),
            steps: ChildSteps::default(),
            scratch: None,
            cgroup: None,
            _landlock: None,
        };
        if mode == SandboxMode::Off {
            return Ok(out);
        }
        let missing = layers.missing();
        if mode == SandboxMode::Required && !missing.is_empty() {
            return Err(SandboxError::Missing(missing.join(", ")));
        }
        let scratch = tempfile::Builder::new()
            .prefix("kirocrew-hook-")
            .tempdir()
            .map_err(SandboxError::Scratch)?;
        let steps = &mut out.steps;
        if layers.network {
            steps.unshare = libc::CLONE_NEWNET | libc::CLONE_NEWNS;
            if !caps.root {
                steps.unshare |= libc::CLONE_NEWUSER;
                steps.id_maps = Some(IdMaps::own());
            }
            steps.root = Some(c"/".to_owned());
            steps.dev_null = Some(c"/dev/null".to_owned());
            for path in home.map(home_secrets).unwrap_or_default() {
                steps.hide.push(cstring(&path)?);
            }
        }
        if layers.filesystem_via == Some("read_only_mounts") {
            steps.readonly_except = Some(cstring(scratch.path())?);
        }
        if layers.filesystem_via == Some("landlock") {
            match landlock_ruleset(scratch.path()) {
                Ok(Some(fd)) => {
                    steps.landlock = Some(fd.as_raw_fd());
                    out._landlock = Some(fd);
                }
                Ok(None) => lose(mode, &mut layers, "filesystem", "landlock unsupported")?,
                Err(e) => lose(mode, &mut layers, "filesystem", &e)?,
            }
        }
        if layers.processes_via == Some("pids_cgroup") {
            match caps.pids_cgroup.as_deref().map(make_cgroup) {
                Some(Ok(cg)) => {
                    steps.cgroup_procs = Some(cg.procs.as_raw_fd());
                    out.cgroup = Some(cg);
                }
                Some(Err(e)) => lose(mode, &mut layers, "processes", &e.to_string())?,
                None => lose(mode, &mut layers, "processes", "no pids cgroup")?,
            }
        }
        steps.rlimits = vec![
            (libc::RLIMIT_CPU, cpu_secs.max(1)),
            (libc::RLIMIT_AS, limits::MEMORY_BYTES),
            (libc::RLIMIT_FSIZE, limits::FILE_SIZE_BYTES),
            // SIGXFSZ and SIGXCPU dump core by default: no core files.
            (libc::RLIMIT_CORE, 0),
        ];
        if layers.processes_via == Some("user_namespace_nproc") {
            steps.rlimits.push((libc::RLIMIT_NPROC, limits::PROCESSES));
        }
        steps.drop_caps = caps.root;
        out.scratch = Some(scratch);
        out.report = report(mode, &layers);
        Ok(out)
    }

    /// Removes the run's cgroup once its processes are gone (a killed
    /// process may take a moment to be reaped; tried for up to 2 s).
    pub(super) async fn finish(mut self) {
        let Some(cg) = self.cgroup.take() else { return };
        drop(cg.procs);
        for _ in 0..100 {
            if std::fs::remove_dir(&cg.dir).is_ok() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        tracing::warn!(dir = %cg.dir.display(), "hook cgroup not removed (still busy)");
    }
}

fn report(mode: SandboxMode, layers: &SandboxLayers) -> SandboxReport {
    SandboxReport {
        mode,
        missing: if mode == SandboxMode::Off {
            Vec::new()
        } else {
            layers.missing()
        },
        layers: layers.clone(),
        refused: false,
    }
}

/// A layer that failed to set up: an error when required, else dropped.
fn lose(
    mode: SandboxMode,
    layers: &mut SandboxLayers,
    layer: &'static str,
    why: &str,
) -> Result<(), SandboxError> {
    if mode == SandboxMode::Required {
        return Err(SandboxError::Setup(format!("{layer}: {why}")));
    }
    tracing::warn!(layer, why, "hook sandbox layer not set up");
    match layer {
        "filesystem" => {
            layers.filesystem = false;
            layers.filesystem_via = None;
        }
        _ => {
            layers.processes = false;
            layers.processes_via = None;
        }
    }
    Ok(())
}

/// Read and execute everywhere, everything in `scratch`, write to
/// `/dev/null`; no signals or abstract sockets beyond the sandbox. `None`
/// when the kernel has no Landlock.
fn landlock_ruleset(scratch: &Path) -> Result<Option<OwnedFd>, String> {
    let abi = ABI::V6;
    let created = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.scope(Scope::from_all(abi)))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules([scratch], AccessFs::from_all(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(["/dev/null"], AccessFs::from_all(abi))))
        .map_err(|e| e.to_string())?;
    Ok(created.into())
}

fn make_cgroup(parent: &Path) -> io::Result<Cgroup> {
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = parent.join(format!("kirocrew-hook-{}-{n}", std::process::id()));
    std::fs::create_dir(&dir)?;
    let made = std::fs::write(dir.join("pids.max"), limits::PROCESSES.to_string()).and_then(|_| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"))
    });
    match made {
        Ok(procs) => Ok(Cgroup { dir, procs }),
        Err(e) => {
            let _ = std::fs::remove_dir(&dir);
            Err(e)
        }
    }
}

#[cfg(test)]
#[path = "confine_tests.rs"]
mod tests;
