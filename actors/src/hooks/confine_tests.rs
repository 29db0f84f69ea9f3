//! Unit tests of `confine.rs` (kept apart to keep that file short).

use std::os::unix::process::CommandExt;

use super::*;

#[test]
fn required_refuses_on_a_machine_without_the_layers() {
    let bare = Capabilities::default();
    let err = Confinement::prepare_with(&bare, SandboxMode::Required, None, 5).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("network") && text.contains("processes"),
        "{text}"
    );
    let best = Confinement::prepare_with(&bare, SandboxMode::BestEffort, None, 5).unwrap();
    assert_eq!(
        best.report.missing,
        ["network", "filesystem", "secrets_hidden", "processes"]
    );
    assert!(best.steps.unshare == 0 && best.steps.landlock.is_none());
}

/// The second filesystem layer (no Landlock): read-only mounts with
/// the scratch dir writable and the secrets hidden, run for real
/// where this machine has mount namespaces.
#[test]
fn the_read_only_mounts_fallback_confines_writes() {
    let caps = crate::hooks::probe::capabilities();
    if !caps.mount_setattr || !caps.root {
        eprintln!("skipped: no mount namespaces as root here ({caps:?})");
        return;
    }
    let fallback = Capabilities {
        landlock_abi: 0,
        pids_cgroup: None,
        ..caps.clone()
    };
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("api-token"), "tok-secret").unwrap();
    let outside = home.path().join("outside");
    let c = Confinement::prepare_with(&fallback, SandboxMode::BestEffort, Some(home.path()), 5)
        .unwrap();
    assert_eq!(c.report.layers.filesystem_via, Some("read_only_mounts"));
    let scratch = c.scratch.as_ref().unwrap().path().to_path_buf();
    let script = format!(
        "cat {h}/api-token; echo x > {o}; echo kept > {s}/f && cat {s}/f; umount {h}/api-token; cat {h}/api-token",
        h = home.path().display(),
        o = outside.display(),
        s = scratch.display()
    );
    let steps = c.steps.clone();
    let mut command = std::process::Command::new("/bin/sh");
    command.arg("-c").arg(script);
    // SAFETY: `apply` is async-signal-safe.
    unsafe {
        command.pre_exec(move || steps.apply());
    }
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.trim(), "kept", "{out:?}");
    assert!(!outside.exists(), "wrote outside the scratch dir");
}
