//! Skills over HTTP and the CLI: CRUD with path confinement, list fields,
//! the structured editor, the inject toggle (with its security events),
//! search, direct-read crediting and the budget.

use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value};

use crate::cli::{run_cli, stderr, stdout};
use crate::helpers::{assert_error, spawn_app, TestApp};

pub(crate) async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    body: Value,
) -> reqwest::Response {
    app.request(method, path)
        .json(&body)
        .send()
        .await
        .expect("send")
}

fn skill_file(app: &TestApp, name: &str) -> std::path::PathBuf {
    app.home_path().join("skills").join(name).join("SKILL.md")
}

pub(crate) async fn events(app: &TestApp, category: &str, at_least: usize) -> Vec<Value> {
    // Recorded without waiting on the request path: poll briefly.
    let mut found = Vec::new();
    for _ in 0..50 {
        found = app
            .get_json(&format!("/api/security/events?category={category}"))
            .await["events"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if found.len() >= at_least {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    found
}

#[actix_web::test]
async fn crud_list_fields_and_bundled_skills() {
    let app = spawn_app().await;
    let list = app.get_json("/api/skills").await;
    let names: Vec<&str> = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"skill-authoring"),
        "bundled skills are copied on first start: {names:?}"
    );
    assert!(skill_file(&app, "skill-authoring").exists());

    let r = send(&app, Method::POST, "/api/skills", json!({"name": "Utils/Tiny URL", "content": "---\ndescription: Shorten links\ntriggers: [shorten]\n---\n# Tiny\n"})).await;
    assert_eq!(r.status(), 201);
    let made: Value = r.json().await.unwrap();
    assert_eq!(made["name"], "utils/tiny-url");
    for field in [
        "description",
        "source",
        "always",
        "triggers",
        "inject_on_trigger",
        "size_bytes",
        "owned",
        "dir",
        "path",
    ] {
        assert!(made.get(field).is_some(), "{field} in {made}");
    }
    assert_eq!(made["deliveries"], Value::Null, "untracked is null, not 0");
    assert_eq!(made["owned"], true);
    assert_eq!(made["source"], "kirocrew");

    let got = app.get_json("/api/skills/utils/tiny-url").await;
    assert!(got["content"].as_str().unwrap().contains("# Tiny"));
    assert_error(
        send(
            &app,
            Method::POST,
            "/api/skills",
            json!({"name": "utils/tiny-url", "content": "x"}),
        )
        .await,
        409,
        "skill_exists",
    )
    .await;
    let r = send(
        &app,
        Method::POST,
        "/api/skills",
        json!({"name": "templated", "description": "Made from the template"}),
    )
    .await;
    assert_eq!(r.status(), 201);
    assert_eq!(
        app.get_json("/api/skills/templated").await["description"],
        "Made from the template"
    );

    let r = send(
        &app,
        Method::PUT,
        "/api/skills/utils/tiny-url",
        json!({"content": "---\ndescription: v2\n---\nbody"}),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        app.get_json("/api/skills/utils/tiny-url").await["description"],
        "v2"
    );
    assert_error(
        send(
            &app,
            Method::PUT,
            "/api/skills/utils/tiny-url",
            json!({"content": "x", "always": true}),
        )
        .await,
        422,
        "invalid_body",
    )
    .await;
    assert_error(
        send(&app, Method::PUT, "/api/skills/utils/tiny-url", json!({})).await,
        422,
        "invalid_body",
    )
    .await;

    let r = app
        .request(Method::DELETE, "/api/skills/utils/tiny-url")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_error(
        app.get("/api/skills/utils/tiny-url").await,
        404,
        "skill_not_found",
    )
    .await;
    app.stop().await;
}

#[actix_web::test]
async fn traversal_attempts_are_refused() {
    let app = spawn_app().await;
    let outside = tempfile::tempdir().unwrap();
    for name in ["../x", "a/../../b", "%2e%2e/x", "/etc/evil", "a\\b", ".."] {
        let r = send(
            &app,
            Method::POST,
            "/api/skills",
            json!({"name": name, "content": "x"}),
        )
        .await;
        assert_error(r, 422, "invalid_skill_name").await;
    }
    for path in [
        "/api/skills/a%2F..%2F..%2Fb",
        "/api/skills/%2e%2e%2fx",
        "/api/skills/x%5C..%5Cy",
    ] {
        let r = app.get(path).await;
        assert_eq!(r.status(), 422, "{path}");
    }
    std::fs::create_dir_all(app.home_path().join("skills")).unwrap();
    std::os::unix::fs::symlink(outside.path(), app.home_path().join("skills/out")).unwrap();
    let r = send(
        &app,
        Method::POST,
        "/api/skills",
        json!({"name": "out/evil", "content": "x"}),
    )
    .await;
    assert_error(r, 403, "not_owned").await;
    assert!(
        std::fs::read_dir(outside.path()).unwrap().next().is_none(),
        "nothing written outside"
    );
    app.stop().await;
}

#[actix_web::test]
async fn structured_put_keeps_unmodelled_keys_byte_for_byte() {
    let app = spawn_app().await;
    let original = "---\nname: old\nmetadata:\n  nested:\n    deep: [1, 2]\n  # kept comment\nallowed-tools:\n- Read\nnotes: >-\n  folded\n  text\ndescription: old\n---\n# Body\n";
    let r = send(
        &app,
        Method::POST,
        "/api/skills",
        json!({"name": "rich", "content": original}),
    )
    .await;
    assert_eq!(r.status(), 201);
    let r = send(
        &app,
        Method::PUT,
        "/api/skills/rich",
        json!({"description": "Use when: editing", "triggers": ["edit"], "always": true}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let info: Value = r.json().await.unwrap();
    assert_eq!(info["description"], "Use when: editing");
    assert_eq!(info["always"], true);
    assert_eq!(info["parsed_with"], "yaml");
    let text = std::fs::read_to_string(skill_file(&app, "rich")).unwrap();
    for kept in [
        "metadata:\n  nested:\n    deep: [1, 2]\n  # kept comment\n",
        "allowed-tools:\n- Read\n",
        "notes: >-\n  folded\n  text\n",
        "name: old\n",
    ] {
        assert!(text.contains(kept), "{kept:?} not kept in\n{text}");
    }
    assert!(text.ends_with("---\n# Body\n"));
    app.stop().await;
}

#[actix_web::test]
async fn inject_toggle_edits_one_line_and_audits_every_outcome() {
    let app = spawn_app().await;
    let src = "---\nname: t\ndescription: |\n  inject_on_trigger: false is prose here\n---\nbody\n";
    send(
        &app,
        Method::POST,
        "/api/skills",
        json!({"name": "t", "content": src}),
    )
    .await;
    send(
        &app,
        Method::POST,
        "/api/skills",
        json!({"name": "bare", "content": "no frontmatter at all"}),
    )
    .await;

    let r = send(
        &app,
        Method::POST,
        "/api/skills/-/inject-on-trigger",
        json!({"name": "t", "inject": false}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let o: Value = r.json().await.unwrap();
    assert_eq!(
        (o["ok"].clone(), o["changed"].clone()),
        (json!(true), json!(true))
    );
    let text = std::fs::read_to_string(skill_file(&app, "t")).unwrap();
    assert_eq!(text, "---\nname: t\ndescription: |\n  inject_on_trigger: false is prose here\ninject_on_trigger: false\n---\nbody\n");
    let listed = app.get_json("/api/skills/t").await;
    assert_eq!(listed["inject_on_trigger"], false, "caches invalidated");

    let r = send(
        &app,
        Method::POST,
        "/api/skills/-/inject-on-trigger",
        json!({"name": "t", "inject": true}),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        std::fs::read_to_string(skill_file(&app, "t")).unwrap(),
        src,
        "true removes the key"
    );

    assert_error(
        send(
            &app,
            Method::POST,
            "/api/skills/-/inject-on-trigger",
            json!({"name": "bare", "inject": false}),
        )
        .await,
        422,
        "no_frontmatter",
    )
    .await;
    assert_error(
        send(
            &app,
            Method::POST,
            "/api/skills/-/inject-on-trigger",
            json!({"name": "nope", "inject": false}),
        )
        .await,
        404,
        "skill_not_found",
    )
    .await;

    let ev = events(&app, "skill_toggle", 4).await;
    let outcomes: Vec<&str> = ev.iter().map(|e| e["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["refused", "refused", "ok", "ok"], "{ev:?}");
    assert_eq!(ev[0]["actor"], "http");
    app.stop().await;
}

#[actix_web::test]
async fn direct_reads_search_and_budget() {
    let app = spawn_app().await;
    send(
        &app,
        Method::POST,
        "/api/skills",
        json!({"name": "pdf", "content": "---\ndescription: Fill PDF forms\n---\nuse qpdf\n"}),
    )
    .await;
    let hits = app.get_json("/api/skills/-/search?q=pdf").await;
    assert_eq!(hits["hits"][0]["name"], "pdf");
    assert_eq!(
        app.get_json("/api/skills/-/search?q=qpdf").await["hits"][0]["matched_in"],
        "body"
    );
    assert_error(
        app.get("/api/skills/-/search?q=%20").await,
        422,
        "invalid_query",
    )
    .await;

    let path = skill_file(&app, "pdf");
    let batch = json!({"events": [
        {"tool_call_id": "r1", "tool_name": "Read", "raw_input": {"file_path": path}},
        {"tool_call_id": "r1", "tool_name": "Read", "status": "completed"},
        {"tool_call_id": "r1", "tool_name": "Read", "status": "completed"},
        {"tool_call_id": "s1", "tool_name": "bash", "raw_input": {"command": "cat notes.txt && rm skills/pdf/SKILL.md"}, "status": "completed"},
        {"tool_call_id": "s2", "tool_name": "bash", "command": "head -50 skills/pdf/SKILL.md | grep x", "status": "completed"}
    ]});
    let r = send(&app, Method::POST, "/api/skills/-/tool-events", batch).await;
    assert_eq!(r.status(), 200);
    let results: Value = r.json().await.unwrap();
    let credited: Vec<Value> = results["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["credited"].clone())
        .collect();
    assert_eq!(
        credited,
        [
            json!([]),
            json!(["pdf"]),
            json!([]),
            json!([]),
            json!(["pdf"])
        ]
    );
    assert_eq!(results["results"][2]["duplicate"], true);
    assert_error(
        send(
            &app,
            Method::POST,
            "/api/skills/-/tool-events",
            json!({"tool_name": "Read", "status": "completed"}),
        )
        .await,
        422,
        "invalid_body",
    )
    .await;

    let budget = app.get_json("/api/skills/-/budget").await;
    assert_eq!(budget["window_days"], 30);
    let row = budget["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "pdf")
        .unwrap()
        .clone();
    assert_eq!(row["deliveries"], 2);
    assert_eq!(row["chars"], row["size_bytes"].as_u64().unwrap() * 2);
    let total: u64 = budget["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["chars"].as_u64().unwrap())
        .sum();
    assert_eq!(budget["total_chars"], total);
    assert_eq!(app.get_json("/api/skills/pdf").await["deliveries"], 2);

    // The ledger is flushed on shutdown and read back on the next start.
    let home = app.stop().await;
    let usage: Value =
        serde_json::from_slice(&std::fs::read(home.path().join("skill-usage.json")).unwrap())
            .unwrap();
    assert_eq!(usage["skills"]["pdf"]["hits"], 2);
}

fn cli_ok(home: &Path, args: &[&str]) -> String {
    let out = run_cli(home, args);
    assert!(out.status.success(), "{args:?} failed: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn skills_cli_round_trip() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    cli_ok(
        h,
        &[
            "skills",
            "new",
            "My Tool",
            "--description",
            "Does tool things",
        ],
    );
    let list: Value = serde_json::from_str(&cli_ok(h, &["skills", "list", "--json"])).unwrap();
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "my-tool"));
    cli_ok(
        h,
        &[
            "skills",
            "edit",
            "my-tool",
            "--trigger",
            "tool",
            "--trigger",
            "!never",
            "--always",
            "false",
        ],
    );
    cli_ok(
        h,
        &["skills", "edit", "my-tool", "--inject-on-trigger", "false"],
    );
    let shown: Value =
        serde_json::from_str(&cli_ok(h, &["skills", "show", "my-tool", "--json"])).unwrap();
    assert_eq!(shown["triggers"], json!(["tool", "!never"]));
    assert_eq!(shown["inject_on_trigger"], false);
    assert!(cli_ok(h, &["skills", "show", "my-tool"]).contains("inject_on_trigger: false"));
    assert!(cli_ok(h, &["skills", "search", "tool things"]).contains("my-tool"));
    let budget: Value = serde_json::from_str(&cli_ok(h, &["skills", "budget", "--json"])).unwrap();
    assert_eq!(budget["window_days"], 30);
    let out = run_cli(h, &["skills", "edit", "my-tool"]);
    assert!(
        !out.status.success(),
        "no flags and no terminal: nothing to do"
    );
    let out = run_cli(h, &["skills", "new", "../escape"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("invalid skill name"),
        "{}",
        stderr(&out)
    );
    cli_ok(h, &["skills", "remove", "my-tool"]);
    assert!(!h.join("skills/my-tool").exists());
    let log = std::fs::read_to_string(h.join("security-events.jsonl")).unwrap();
    assert!(
        log.contains("skill_toggle"),
        "the CLI's toggle is audited too"
    );
}

/// Issue 42: a skill with `always: true` goes into every session start, and
/// writing one left no trace. Every create, overwrite and structured edit
/// is a `skill_change` security event saying what changed.
#[actix_web::test]
async fn every_skill_write_is_a_security_event() {
    let app = spawn_app().await;
    let content = "---\ndescription: Deploy steps\nalways: true\n---\n# Deploy\nRun the checks.\n";
    let r = send(
        &app,
        Method::POST,
        "/api/skills",
        json!({"name": "deploy", "content": content}),
    )
    .await;
    assert_eq!(r.status(), 201);
    let r = send(
        &app,
        Method::PUT,
        "/api/skills/deploy",
        json!({"always": false, "triggers": ["deploy", "release"]}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let changes = events(&app, "skill_change", 2).await;
    assert_eq!(changes.len(), 2, "{changes:?}");
    // Newest first.
    let (edit, create) = (&changes[0]["detail"], &changes[1]["detail"]);
    assert_eq!(create["change"], "created");
    assert_eq!(create["always"], true);
    assert_eq!(edit["change"], "updated");
    assert_eq!(
        (edit["always_before"].clone(), edit["always"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(edit["triggers"], json!(["deploy", "release"]));
    assert!(
        !changes[0].to_string().contains("Run the checks"),
        "no body text in the log"
    );
}
