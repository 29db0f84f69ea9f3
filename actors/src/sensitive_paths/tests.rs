//! The sensitive-path table: every rule, traversal (`~/../root/.ssh`,
//! relative `../..`), and links into and out of sensitive places, on a
//! fake home in a temporary directory (never the real `$HOME`).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::policy::SensitivePaths;

/// A fake filesystem: `<tmp>/root` is the home (so `~/../root` is home
/// again, as for the root user), with a data home and a project inside.
struct Fixture {
    _dir: tempfile::TempDir,
    top: PathBuf,
    policy: SensitivePaths,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().canonicalize().unwrap();
    let home = top.join("root");
    for d in [".ssh", ".aws", "work/project", ".kiro/crew", "vault"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519"), "k").unwrap();
    std::fs::write(home.join(".kiro/crew/api-token"), "t").unwrap();
    std::fs::write(home.join("notes.txt"), "n").unwrap();
    let policy = SensitivePaths::new(&home)
        .with_data_home(home.join(".kiro/crew"))
        .with_base_dir(home.join("work/project"));
    Fixture {
        _dir: dir,
        top,
        policy,
    }
}

#[test]
fn sensitive_path_table() {
    let f = fixture();
    let home = f.top.join("root");
    let crew = home.join(".kiro/crew");
    let sensitive: Vec<String> = vec![
        "~/.ssh".into(),
        "~/.ssh/id_rsa".into(),
        "~/../root/.ssh/id_rsa".into(),
        "~/./.ssh/../.ssh/id_ed25519".into(),
        "~/.SSH/id_rsa".into(),
        "~/.aws/credentials".into(),
        "~/.aws/sso/cache/kiro-auth-token.json".into(),
        "~/.gnupg/private-keys-v1.d/x.key".into(),
        "~/.netrc".into(),
        "~/.kube/config".into(),
        "~/.docker/config.json".into(),
        "~/.config/gcloud/credentials.db".into(),
        "~/.git-credentials".into(),
        ".env".into(),
        ".env.local".into(),
        "sub/.env.production".into(),
        "/etc/shadow".into(),
        "/etc/gshadow".into(),
        "/etc/sudoers".into(),
        "/etc/sudoers.d/admins".into(),
        "/etc/ssh/ssh_host_ed25519_key".into(),
        "/proc/self/environ".into(),
        "/proc/1/task/1/mem".into(),
        "/home/bob/.ssh/authorized_keys".into(),
        "keys/server.pem".into(),
        "deploy.key".into(),
        "backup/id_rsa".into(),
        // Relative traversal from the project up into the home.
        "../../.ssh/id_ed25519".into(),
        "../../../root/.aws/config".into(),
        "../../.kiro/crew/api-token".into(),
        crew.join("api-token").display().to_string(),
        "~/.kiro/crew/../crew/api-token".into(),
    ];
    for path in &sensitive {
        assert!(
            f.policy.is_sensitive(Path::new(path)),
            "{path} should be sensitive"
        );
    }
    let ordinary: Vec<String> = vec![
        "~/notes.txt".into(),
        "~/.sshrc".into(),
        "~/ssh/notes".into(),
        "~/.ssh-tips.md".into(),
        "~/.ssh.md".into(),
        "~/.docker/daemon.json".into(),
        "~/.kiro/crew/config.json".into(),
        "~/.kiro/crew/history/C123.jsonl".into(),
        "id_rsa.pub".into(),
        "environment.md".into(),
        ".environment".into(),
        "README.md".into(),
        "/etc/hostname".into(),
        "/etc/passwd".into(),
        "/proc/cpuinfo".into(),
        "../../notes.txt".into(),
    ];
    for path in &ordinary {
        assert!(
            !f.policy.is_sensitive(Path::new(path)),
            "{path} should not be sensitive: {:?}",
            f.policy.check(Path::new(path))
        );
    }
    // The resolved path is what a caller reads.
    assert_eq!(
        f.policy.check(Path::new("../../notes.txt")).unwrap(),
        home.join("notes.txt")
    );
}

#[test]
fn links_are_resolved_before_the_check() {
    let f = fixture();
    let home = f.top.join("root");
    // An innocent-looking link to the .ssh directory, and to a key file.
    symlink(home.join(".ssh"), home.join("work/project/keys")).unwrap();
    symlink(home.join(".ssh/id_ed25519"), home.join("notes-link.txt")).unwrap();
    // A dangling link to where a key will be written.
    symlink("../.ssh/new-file", home.join("work/future.txt")).unwrap();
    // A link outside the home pointing at the data home's token.
    symlink(home.join(".kiro/crew"), f.top.join("crew-link")).unwrap();
    // A loop: where it leads is unknown, so it is refused.
    symlink(f.top.join("loop-b"), f.top.join("loop-a")).unwrap();
    symlink(f.top.join("loop-a"), f.top.join("loop-b")).unwrap();
    for path in [
        PathBuf::from("keys/id_ed25519"),
        PathBuf::from("keys/authorized_keys"),
        PathBuf::from("~/notes-link.txt"),
        PathBuf::from("../future.txt"),
        f.top.join("crew-link/api-token"),
        f.top.join("loop-a/x"),
    ] {
        let check = f.policy.check(&path);
        assert!(check.is_err(), "{} should be refused", path.display());
    }
    let refused = f
        .policy
        .check(Path::new("keys/authorized_keys"))
        .unwrap_err();
    assert_eq!(refused.resolved, home.join(".ssh/authorized_keys"));
    assert!(refused.reason.contains(".ssh"), "{}", refused.reason);

    // `~/.ssh` itself a link to an innocent place: the path as written is
    // still refused, while the target read directly is an ordinary file.
    let other = tempfile::tempdir().unwrap();
    let home2 = other.path().canonicalize().unwrap();
    std::fs::create_dir_all(home2.join("vault")).unwrap();
    symlink(home2.join("vault"), home2.join(".ssh")).unwrap();
    let policy = SensitivePaths::new(&home2).with_base_dir(&home2);
    assert!(policy.is_sensitive(Path::new("~/.ssh/authorized_keys")));
    assert!(!policy.is_sensitive(Path::new("~/vault/authorized_keys")));
}
