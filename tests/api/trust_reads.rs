//! Paths that come from outside are read through the sensitive-path
//! policy (issue 42, item 1): a hook event's `transcript_path`, `skills new
//! --from`, `skills edit --body-from`, `memory import FILE`, the embedding
//! model's path over HTTP (the operator console does not offer reading by
//! path at all). Each is refused as written and as resolved (`~` expanded, a
//! link into `~/.ssh` too), a FIFO never blocks the reader, and every
//! refusal is a `read_denied` security event. Each bait file holds text
//! the surface would accept, so a read that got through would show.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::claude_code::{daemon, hook, payload, transcript_line};
use crate::cli::{run_cli, stderr, stdout};
use crate::helpers::{assert_error, binary};

/// A folder of credential-looking files, each content something the
/// surface reading it would take in.
struct Bait {
    dir: tempfile::TempDir,
}

impl Bait {
    fn new(content: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            ".aws/credentials",
            ".netrc",
            ".env",
            ".ssh/id_rsa",
            "id_rsa",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, content).unwrap();
        }
        // Not sensitive by name: refused for what it holds.
        let pem = format!(
            "{content}\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
        );
        std::fs::write(root.join("key.pem"), pem).unwrap();
        // An innocent name leading into ~/.ssh.
        std::os::unix::fs::symlink(root.join(".ssh/id_rsa"), root.join("notes.jsonl")).unwrap();
        let fifo = root.join("pipe.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo");
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Every bait the policy refuses.
    fn refused(&self) -> Vec<PathBuf> {
        [
            ".aws/credentials",
            ".netrc",
            ".env",
            "key.pem",
            "notes.jsonl",
            "pipe.jsonl",
        ]
        .iter()
        .map(|f| self.path(f))
        .collect()
    }
}

/// The `read_denied` events in `home`'s security log by `actor`, waiting
/// (bounded) for at least `at_least` of them: the daemon's log writes
/// behind its answer.
async fn denied(home: &Path, actor: &str, at_least: usize) -> Vec<Value> {
    let mut found = Vec::new();
    for _ in 0..100 {
        let text = std::fs::read_to_string(home.join("security-events.jsonl")).unwrap_or_default();
        found = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["category"] == "read_denied" && e["actor"] == actor)
            .collect();
        if found.len() >= at_least {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "{} read_denied events by {actor}, wanted {at_least}: {found:?}",
        found.len()
    );
}

#[actix_web::test]
async fn a_hook_events_transcript_path_is_read_only_when_the_policy_allows() {
    let app = daemon().await;
    let home = app.home_path().to_path_buf();
    let line = transcript_line(
        "user",
        "u1",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG",
    );
    let bait = Bait::new(&line);
    for (i, path) in bait.refused().iter().enumerate() {
        let session = format!("bait-{i}");
        let Some(stop) = payload("stdin--stop.json", &session, Some(path)) else {
            return;
        };
        let (out, answer) = hook(&home, stop).await;
        assert!(out.status.success(), "the adapter never fails the agent");
        assert_eq!(answer, None);
        let warning = String::from_utf8_lossy(&out.stderr);
        assert!(
            warning.contains("transcript not imported") && warning.contains("refused to read"),
            "{}: {warning}",
            path.display()
        );
        let stored = home
            .join("sessions")
            .join(format!("claude-code%3A{session}.jsonl"));
        assert!(!stored.exists(), "{} was imported", path.display());
    }
    let events = denied(&home, "hook:claude-code", bait.refused().len()).await;
    let named = |p: &Path| {
        events
            .iter()
            .any(|e| e["detail"]["path"] == p.display().to_string())
    };
    assert!(bait.refused().iter().all(|p| named(p)), "{events:?}");

    // The control: an ordinary transcript is still imported.
    let plain = bait.path("plain.jsonl");
    std::fs::write(
        &plain,
        transcript_line("user", "u1", "Staging runs in Frankfurt.") + "\n",
    )
    .unwrap();
    let Some(stop) = payload("stdin--stop.json", "plain", Some(&plain)) else {
        return;
    };
    let (out, _) = hook(&home, stop).await;
    assert!(String::from_utf8_lossy(&out.stderr).is_empty());
    assert!(home.join("sessions/claude-code%3Aplain.jsonl").exists());
    app.stop().await;
}

#[actix_web::test]
async fn cli_commands_read_named_files_through_the_policy() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::write(h.join("api-token"), "kc-secret-token-0123456789").unwrap();
    let skill = "---\nname: t\ndescription: bait\n---\nsteps\n";
    let bait = Bait::new(skill);
    let token = h.join("api-token");
    for from in [
        token.as_path(),
        &bait.path(".env"),
        &bait.path("notes.jsonl"),
    ] {
        let out = run_cli(h, &["skills", "new", "t", "--from", from.to_str().unwrap()]);
        assert!(!out.status.success(), "{} was read", from.display());
        assert!(stderr(&out).contains("refused to read"), "{}", stderr(&out));
    }
    let listing = stdout(&run_cli(h, &["skills", "list"]));
    assert!(!listing.lines().any(|l| l.starts_with("t ")), "{listing}");

    let notes = bait.path("skill.md");
    std::fs::write(&notes, skill.replace("name: t", "name: ok")).unwrap();
    let made = run_cli(
        h,
        &["skills", "new", "ok", "--from", notes.to_str().unwrap()],
    );
    assert!(made.status.success(), "{}", stderr(&made));
    let key = bait.path(".ssh/id_rsa");
    let edit = run_cli(
        h,
        &["skills", "edit", "ok", "--body-from", key.to_str().unwrap()],
    );
    assert!(!edit.status.success());
    assert!(
        stderr(&edit).contains("refused to read"),
        "{}",
        stderr(&edit)
    );
    let shown = stdout(&run_cli(h, &["skills", "show", "ok"]));
    assert!(!shown.contains("name: t"), "the body is unchanged: {shown}");

    let export = json!({"version": 1, "semantic": [{"key": "pref.x", "value": "y"}]});
    std::fs::write(bait.path(".env"), export.to_string()).unwrap();
    let import = run_cli(
        h,
        &["memory", "import", bait.path(".env").to_str().unwrap()],
    );
    assert!(!import.status.success());
    assert!(
        stderr(&import).contains("refused to read"),
        "{}",
        stderr(&import)
    );
    assert!(!stdout(&run_cli(h, &["memory", "list"])).contains("pref.x"));

    let events = denied(h, "cli", 5).await;
    assert!(events
        .iter()
        .any(|e| e["detail"]["path"] == token.display().to_string()));
}

#[actix_web::test]
async fn the_embedding_models_path_is_checked_before_it_is_looked_at() {
    let app = daemon().await;
    let bait = Bait::new("");
    let mut gguf = b"GGUF".to_vec();
    gguf.resize(2 << 20, 0);
    for file in [".env", "id_rsa", ".ssh/model.gguf"] {
        std::fs::write(bait.path(file), &gguf).unwrap();
    }
    let asked = [
        bait.path(".env").display().to_string(),
        bait.path("id_rsa").display().to_string(),
        bait.path(".ssh/model.gguf").display().to_string(),
        "~/.ssh/model.gguf".to_owned(),
        app.home_path().join("api-token").display().to_string(),
    ];
    for path in &asked {
        for validate_only in [true, false] {
            let r = app
                .request(Method::POST, "/api/memory/embedding-model")
                .json(&json!({"path": path, "validate_only": validate_only}))
                .send()
                .await
                .unwrap();
            let message = assert_error(r, 403, "sensitive_path").await;
            assert!(message.contains("refused to read"), "{message}");
        }
    }
    denied(app.home_path(), "http", asked.len() * 2).await;
    app.stop().await;
}

#[actix_web::test]
async fn console_commands_read_named_files_through_the_policy() {
    let app = daemon().await;
    let token = app.home_path().join("api-token");
    let exec = format!("skills new t --from {}", token.display());
    let out = tokio::process::Command::new(binary())
        .args(["console", "--exec", &exec])
        .env("KIROCREW_HOME", app.home_path())
        .env_remove("KIROCREW_LOG")
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // The console never reads a file by path on the daemon's machine (its
    // reader would refuse this one anyway).
    assert!(
        err.contains("option_not_allowed") || err.contains("command_not_allowed"),
        "{err}"
    );
    assert!(
        !err.contains(&app.token),
        "the token never comes back: {err}"
    );
    app.stop().await;
}
