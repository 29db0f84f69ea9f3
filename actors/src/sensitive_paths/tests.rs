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
    let mut sensitive: Vec<String> = [
        "~/.ssh",
        "~/.ssh/id_rsa",
        "~/../root/.ssh/id_rsa",
        "~/./.ssh/../.ssh/id_ed25519",
        "~/.SSH/id_rsa",
        "~/.aws/credentials",
        "~/.aws/sso/cache/kiro-auth-token.json",
        "~/.gnupg/private-keys-v1.d/x.key",
        "~/.netrc",
        "~/.kube/config",
        "~/.docker/config.json",
        "~/.config/gcloud/credentials.db",
        "~/.git-credentials",
        ".env",
        ".env.local",
        "sub/.env.production",
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/sudoers",
        "/etc/sudoers.d/admins",
        "/etc/ssh/ssh_host_ed25519_key",
        "/proc/self/environ",
        "/proc/1/task/1/mem",
        "/home/bob/.ssh/authorized_keys",
        "keys/server.pem",
        "deploy.key",
        "backup/id_rsa",
        // Relative traversal from the project up into the home.
        "../../.ssh/id_ed25519",
        "../../../root/.aws/config",
        "../../.kiro/crew/api-token",
        "~/.kiro/crew/../crew/api-token",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    sensitive.push(crew.join("api-token").display().to_string());
    for path in &sensitive {
        assert!(
            f.policy.is_sensitive(Path::new(path)),
            "{path} should be sensitive"
        );
    }
    let ordinary = [
        "~/notes.txt",
        "~/.sshrc",
        "~/ssh/notes",
        "~/.ssh-tips.md",
        "~/.ssh.md",
        "~/.docker/daemon.json",
        "~/.kiro/crew/config.json",
        "~/.kiro/crew/history/C123.jsonl",
        "id_rsa.pub",
        "environment.md",
        ".environment",
        "README.md",
        "/etc/hostname",
        "/etc/passwd",
        "/proc/cpuinfo",
        "../../notes.txt",
    ];
    for path in ordinary {
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
