//! What the machine's kernel lets a script hook's sandbox use (issue 41):
//! Landlock's ABI, new network and mount namespaces, read-only remounts,
//! a pids cgroup. Probed once per process and shared by every run
//! (`confine.rs` builds the confinement from it) and by `kirocrew doctor`
//! (`machine_report`). A file of its own because probing starts a child
//! the way `confine.rs` does while `confine.rs` plans from its answer.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::confine::ChildSteps;
use super::sandbox::{plan, Capabilities, SandboxLayers, SandboxMode};

/// What this machine can do, probed once per process (a few ms: one
/// `landlock_create_ruleset` version query, one `/bin/true` in new
/// namespaces, one cgroup made and removed).
pub fn capabilities() -> &'static Capabilities {
    static CAPS: OnceLock<Capabilities> = OnceLock::new();
    CAPS.get_or_init(probe)
}

/// The layers that hold on this machine in `mode` (for `kirocrew doctor`).
pub fn machine_report(mode: SandboxMode) -> SandboxLayers {
    plan(mode, capabilities())
}

fn probe() -> Capabilities {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    // SAFETY: the version query takes no pointers (attr NULL, size 0).
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    let landlock_abi = i32::try_from(abi).unwrap_or(0).max(0);
    let namespaces = probe_namespaces(root, false);
    let mount_setattr = namespaces && probe_namespaces(root, true);
    let pids_cgroup = if root { pids_cgroup_root() } else { None };
    Capabilities {
        root,
        landlock_abi,
        namespaces,
        mount_setattr,
        pids_cgroup,
    }
}

/// The pids cgroup this process is in, when a child cgroup can be made
/// there and limited (tried: made, `pids.max` written, removed).
fn pids_cgroup_root() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut candidates = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            candidates.push(Path::new("/sys/fs/cgroup/pids").join(rel));
        } else if controllers.is_empty() {
            // cgroup v2: usable only where pids is delegated to children.
            let dir = Path::new("/sys/fs/cgroup").join(rel);
            let sub = std::fs::read_to_string(dir.join("cgroup.subtree_control"));
            if sub.is_ok_and(|s| s.split_whitespace().any(|c| c == "pids")) {
                candidates.push(dir);
            }
        }
    }
    candidates.into_iter().find(|dir| {
        let test = dir.join(format!("kirocrew-probe-{}", std::process::id()));
        let ok = std::fs::create_dir(&test).is_ok()
            && std::fs::write(test.join("pids.max"), "8").is_ok();
        let _ = std::fs::remove_dir(&test);
        ok
    })
}

/// Whether `/bin/true` starts in new network and mount namespaces (with a
/// user namespace when not `root`), and with `setattr` also whether its
/// mounts can be made read-only there.
fn probe_namespaces(root: bool, setattr: bool) -> bool {
    use std::os::unix::process::CommandExt;
    let steps = ChildSteps::namespace_probe(root, setattr);
    let mut command = std::process::Command::new("/bin/true");
    command
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: `apply` is async-signal-safe (see its docs).
    unsafe {
        command.pre_exec(move || steps.apply());
    }
    command.status().is_ok_and(|s| s.success())
}
