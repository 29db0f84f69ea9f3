//! The guarded read with the real security log: refusals are `read_denied`
//! events, the internal carve-out reads only its allowlisted file and only
//! after a durable audit, and withholds the bytes when the audit fails.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use kirocrew_actors::clock::system_clock;
use kirocrew_actors::security_log::{SecurityLogConfig, SecurityLogHandle};
use kirocrew_actors::sensitive_paths::{SafeReadError, SafeReader, SensitivePaths};

struct Rig {
    _dir: tempfile::TempDir,
    top: PathBuf,
    home: PathBuf,
    log: SecurityLogHandle,
}

fn rig() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().canonicalize().unwrap();
    let home = top.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".aws/sso/cache")).unwrap();
    std::fs::create_dir_all(home.join("docs")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "secret key").unwrap();
    std::fs::write(home.join("docs/notes.md"), "plain notes").unwrap();
    let log = log_at(&top.join("crew/security-events.jsonl"));
    Rig {
        _dir: dir,
        top,
        home,
        log,
    }
}

fn log_at(path: &Path) -> SecurityLogHandle {
    SecurityLogHandle::start(SecurityLogConfig {
        path: path.to_path_buf(),
        max_bytes: 1 << 20,
        keep: 1,
        clock: system_clock(),
    })
}

impl Rig {
    fn reader(&self) -> SafeReader {
        let policy = SensitivePaths::new(&self.home).with_base_dir(self.home.join("docs"));
        SafeReader::new(policy, self.log.clone(), "test")
    }
}

#[actix_rt::test]
async fn ordinary_files_are_read_and_sensitive_ones_refused_on_record() {
    let rig = rig();
    let reader = rig.reader();
    assert_eq!(
        reader
            .safe_read_file(Path::new("~/docs/notes.md"))
            .await
            .unwrap(),
        b"plain notes"
    );
    assert_eq!(
        reader
            .safe_read_to_string(Path::new("notes.md"))
            .await
            .unwrap(),
        "plain notes"
    );
    symlink(rig.home.join(".ssh"), rig.home.join("docs/keys")).unwrap();
    std::fs::write(
        rig.home.join("docs/disguised.txt"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    let refused = [
        "~/.ssh/id_ed25519",
        "~/../home/.ssh/id_ed25519",
        "../.ssh/id_ed25519",
        "keys/id_ed25519",
        "disguised.txt",
        "~/docs",
    ];
    for path in refused {
        let err = reader.safe_read_file(Path::new(path)).await.unwrap_err();
        assert!(
            matches!(
                err,
                SafeReadError::Sensitive { .. }
                    | SafeReadError::PrivateKey(_)
                    | SafeReadError::NotAFile(_)
            ),
            "{path}: {err}"
        );
    }
    let small = reader.clone().with_max_bytes(4);
    assert!(matches!(
        small.safe_read_file(Path::new("notes.md")).await,
        Err(SafeReadError::TooLarge { .. })
    ));
    // Every refusal is on record; a missing file is an I/O error, not one.
    assert!(matches!(
        reader.safe_read_file(Path::new("missing.md")).await,
        Err(SafeReadError::Io { .. })
    ));
    let denied = rig.log.recent(50, Some("read_denied")).await.unwrap();
    assert_eq!(denied.len(), refused.len() + 1);
    assert_eq!(denied[0].event.detail["path"], "notes.md");
    assert_eq!(denied[0].event.actor, "test");
    assert!(denied
        .iter()
        .any(|r| r.event.detail["path"] == "~/../home/.ssh/id_ed25519"));
}

#[actix_rt::test]
async fn the_internal_carve_out_reads_only_its_file_after_a_durable_audit() {
    let rig = rig();
    let reader = rig.reader();
    let token = rig.home.join(".aws/sso/cache/kiro-auth-token.json");
    std::fs::write(&token, "{\"accessToken\":\"t\"}").unwrap();
    // The ordinary read refuses it…
    assert!(reader.safe_read_file(&token).await.is_err());
    // …the carve-out reads it, and the audit is on disk first.
    let bytes = reader
        .safe_read_file_internal("kiro_cli_sso_token")
        .await
        .unwrap();
    assert_eq!(bytes, b"{\"accessToken\":\"t\"}");
    let audits = rig.log.recent(5, Some("read_sensitive")).await.unwrap();
    assert_eq!(audits.len(), 1);
    assert_eq!(audits[0].event.detail["read_id"], "kiro_cli_sso_token");
    assert_eq!(audits[0].event.outcome, "allow");

    // An id not on the allowlist is refused on record.
    assert!(matches!(
        reader.safe_read_file_internal("ssh_key").await,
        Err(SafeReadError::UnknownReadId(_))
    ));
    let denied = rig.log.recent(1, Some("read_denied")).await.unwrap();
    assert_eq!(denied[0].event.detail["read_id"], "ssh_key");

    // The allowlisted name swapped for a link to a key is refused.
    std::fs::remove_file(&token).unwrap();
    symlink(rig.home.join(".ssh/id_ed25519"), &token).unwrap();
    assert!(matches!(
        reader.safe_read_file_internal("kiro_cli_sso_token").await,
        Err(SafeReadError::Sensitive { .. })
    ));

    // The audit-only sibling hands out the path only after its audit.
    let path = reader
        .emit_internal_read_audit("kiro_cli_auth_db")
        .await
        .unwrap();
    assert_eq!(path, rig.home.join(".local/share/kiro-cli/data.sqlite3"));
    assert_eq!(
        rig.log.recent(5, Some("read_audited")).await.unwrap().len(),
        1
    );
}

#[actix_rt::test]
async fn an_internal_read_whose_audit_fails_returns_nothing() {
    let rig = rig();
    std::fs::write(
        rig.home.join(".aws/sso/cache/kiro-auth-token.json"),
        "secret",
    )
    .unwrap();
    // A security log that cannot write: its directory is a regular file.
    std::fs::write(rig.top.join("not-a-dir"), "x").unwrap();
    let broken = log_at(&rig.top.join("not-a-dir/security-events.jsonl"));
    let policy = SensitivePaths::new(&rig.home);
    let reader = SafeReader::new(policy, broken, "test");
    let err = reader
        .safe_read_file_internal("kiro_cli_sso_token")
        .await
        .unwrap_err();
    assert!(matches!(err, SafeReadError::AuditFailed { .. }), "{err}");
    assert!(matches!(
        reader.emit_internal_read_audit("kiro_cli_auth_db").await,
        Err(SafeReadError::AuditFailed { .. })
    ));
}
