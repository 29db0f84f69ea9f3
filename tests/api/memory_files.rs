//! The Markdown layers over HTTP: full-text search, the memory settings
//! (applied live and persisted), the migration (automatic at boot and by
//! hand) and the `legacy_content_present` stats field.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, spawn_app, spawn_app_in, TestApp};

fn write(home: &Path, rel: &str, text: &str) {
    let path = home.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn legacy_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    write(
        h,
        "workspace/memory/preferences.md",
        "# Preferences\n\n## Tools\n-  editor :  helix\n- shell: fish\n",
    );
    write(
        h,
        "workspace/memory/projects.md",
        "## Kirocrew\n- memory service in Rust\n",
    );
    write(
        h,
        "workspace/memory/history/2026-03-10.md",
        "# 2026-03-10\n\n## 09:15\nWe ran the nightly benchmarks and compared them.\n\n## 17:00\nThe dashboard runs smoothly after the fix.\n",
    );
    write(
        h,
        "lessons.jsonl",
        "{\"rule\": \"always run the linter before pushing\"}\n",
    );
    home
}

async fn put_settings(app: &TestApp, body: Value) -> reqwest::Response {
    app.request(Method::PUT, "/api/memory/settings")
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn config_json(home: &Path) -> Value {
    std::fs::read_to_string(home.join("config.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(json!({}))
}

async fn wait_migrated(app: &TestApp) -> Value {
    for _ in 0..200 {
        let status = app.get_json("/api/memory/migrate").await;
        if status["status"]["step"] == "done" || status["status"]["step"] == "failed" {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("migration did not finish");
}

#[actix_web::test]
async fn search_finds_stemmed_and_irregular_forms_with_file_section_snippet() {
    let app = spawn_app_in(legacy_home(), |_| {}).await;
    let found = app.get_json("/api/memory/search?q=running").await;
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{found}");
    for hit in results {
        assert_eq!(hit["file"], "history/2026-03-10.md");
        assert!(hit["section"].as_str().unwrap().starts_with("2026-03-10 "));
        assert!(hit["score"].as_f64().unwrap() > 0.0);
    }
    let snippets: Vec<&str> = results
        .iter()
        .map(|h| h["snippet"].as_str().unwrap())
        .collect();
    assert!(snippets.iter().any(|s| s.contains("ran")), "{snippets:?}");
    assert!(
        snippets.iter().any(|s| s.contains("[runs]")),
        "{snippets:?}"
    );

    let prefs = app.get_json("/api/memory/search?q=HELIX&limit=1").await;
    assert_eq!(prefs["results"][0]["file"], "preferences.md");
    assert_eq!(prefs["results"][0]["section"], "Tools");
    assert_eq!(
        app.get_json("/api/memory/search?q=nothing%20matches%20this")
            .await["results"],
        json!([])
    );

    assert_error(app.get("/api/memory/search").await, 400, "invalid_query").await;
    assert_error(
        app.get("/api/memory/search?q=%21%3F").await,
        422,
        "empty_query",
    )
    .await;
    let long = "a".repeat(1001);
    assert_error(
        app.get(&format!("/api/memory/search?q={long}")).await,
        422,
        "query_too_long",
    )
    .await;
    assert_error(
        app.get("/api/memory/search?q=x&limit=0").await,
        422,
        "invalid_limit",
    )
    .await;
    assert_error(
        app.get("/api/memory/search?q=x&bogus=1").await,
        400,
        "invalid_query",
    )
    .await;
    let r = app
        .request(Method::DELETE, "/api/memory/search")
        .send()
        .await
        .unwrap();
    assert_error(r, 405, "method_not_allowed").await;
    app.stop().await;
}

/// Issue 35, defect 1: questions whose irregular verb follows another word
/// ("editor does") made an FTS5 syntax error, answered 503 and rebuilt the
/// whole index on every query. They answer 200 now, and the index file is
/// the same file before and after (no rebuild).
#[actix_web::test]
async fn ordinary_questions_search_without_rebuilding_the_index() {
    use std::os::unix::fs::MetadataExt;
    let app = spawn_app_in(legacy_home(), |_| {}).await;
    let index = app.home.path().join("memory_index.db");
    // The start-up rebuild has run once the first search answers.
    app.get_json("/api/memory/search?q=helix").await;
    let inode = std::fs::metadata(&index).unwrap().ino();
    for q in [
        "which editor does the user prefer",
        "editor does",
        "the deploy does work",
        "what did we run when the benchmarks went wrong?",
        "\"editor\" (does OR do) NEAR(x) col:y*",
    ] {
        let r = app
            .request(Method::GET, "/api/memory/search")
            .query(&[("q", q)])
            .send()
            .await
            .unwrap();
        let status = r.status();
        let body: Value = r.json().await.unwrap();
        assert_eq!(status, 200, "{q}: {body}");
        if q.starts_with("which editor") {
            assert_eq!(body["results"][0]["file"], "preferences.md", "{body}");
        }
    }
    assert_eq!(
        std::fs::metadata(&index).unwrap().ino(),
        inode,
        "a query's own error is not damage: the index was not recreated"
    );
    app.stop().await;
}

#[actix_web::test]
async fn settings_apply_at_once_persist_and_reject_bad_values() {
    let app = spawn_app().await;
    let got = app.get_json("/api/memory/settings").await;
    assert_eq!(got["history_idle_hours"], 3.0);
    assert_eq!(got["history_max_days"], 365);
    assert_eq!(got["heartbeat"]["interval_secs"], 60);

    let r = put_settings(&app, json!({"history_max_days": 30})).await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["history_max_days"], 30);
    assert_eq!(body["history_idle_hours"], 3.0);
    let r = put_settings(&app, json!({"history_idle_hours": 1.5})).await;
    assert_eq!(r.status(), 200);
    let got = app.get_json("/api/memory/settings").await;
    assert_eq!(
        (
            got["history_idle_hours"].clone(),
            got["history_max_days"].clone()
        ),
        (json!(1.5), json!(30))
    );
    let saved = config_json(app.home_path());
    assert_eq!(saved["memory"]["history_max_days"], 30);
    assert_eq!(saved["memory"]["history_idle_hours"], 1.5);

    let before = std::fs::read(app.home_path().join("config.json")).unwrap();
    for (body, status, code) in [
        (json!({"history_idle_hours": -1}), 422, "invalid_setting"),
        (json!({"history_idle_hours": 0}), 422, "invalid_setting"),
        (
            json!({"history_max_days": 0, "history_idle_hours": 2}),
            422,
            "invalid_setting",
        ),
        (json!({"history_max_days": -5}), 422, "invalid_body"),
        (json!({"history_max_days": "30"}), 422, "invalid_body"),
        (
            json!({"history_max_days": 30, "other": 1}),
            422,
            "invalid_body",
        ),
        (json!({}), 422, "empty_settings"),
    ] {
        assert_error(put_settings(&app, body.clone()).await, status, code).await;
    }
    let r = app
        .request(Method::PUT, "/api/memory/settings")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_error(r, 400, "malformed_json").await;
    assert_eq!(
        std::fs::read(app.home_path().join("config.json")).unwrap(),
        before
    );
    let got = app.get_json("/api/memory/settings").await;
    assert_eq!(
        got["history_max_days"], 30,
        "a rejected PUT changes nothing"
    );

    // Persisted: a restart starts with the saved values.
    let home = app.stop().await;
    let app = spawn_app_in(home, |_| {}).await;
    let got = app.get_json("/api/memory/settings").await;
    assert_eq!(got["history_idle_hours"], 1.5);
    assert_eq!(got["history_max_days"], 30);
    app.stop().await;
}

#[actix_web::test]
async fn boot_migrates_once_and_the_endpoint_reruns_idempotently() {
    let app = spawn_app_in(legacy_home(), |s| s.memory.migrated = false).await;
    let status = wait_migrated(&app).await;
    assert_eq!(status["status"]["step"], "done", "{status}");
    // The live settings see the flag flip, no restart needed.
    assert_eq!(status["migrated"], true, "{status}");
    assert_eq!(app.get_json("/api/memory/settings").await["migrated"], true);
    assert_eq!(status["status"]["source"], "auto");
    assert_eq!(status["legacy_content_present"], true);
    let report = &status["status"]["report"];
    assert_eq!(report["preferences"]["migrated"], 2);
    assert_eq!(report["projects"]["migrated"], 1);
    assert_eq!(report["history"]["migrated"], 2);
    assert_eq!(report["lessons"]["migrated"], 1);

    let entry = app.get_json("/api/memory/semantic/pref.editor").await;
    assert_eq!(entry["value"], "helix");
    assert_eq!(entry["source"], "migration");
    assert_eq!(entry["confidence"], 0.85);
    assert_eq!(config_json(app.home_path())["memory"]["migrated"], true);
    let events = app.get_json("/api/memory/events?limit=1").await;
    let event = &events["events"][0];
    assert_eq!(event["event_type"], "migration");
    assert_eq!(event["source"], "auto");
    let counts: Value = serde_json::from_str(event["new_value"].as_str().unwrap()).unwrap();
    assert_eq!(counts["history"]["migrated"], 2);
    let stats = app.get_json("/api/memory/stats").await;
    assert_eq!(stats["legacy_content_present"], true);
    assert_eq!(stats["episodic"]["active"], 3);

    // By hand: 202 at once, then nothing new to migrate.
    let r = app
        .request(Method::POST, "/api/memory/migrate")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["status"]["source"], "api");
    let status = wait_migrated(&app).await;
    assert_eq!(status["status"]["source"], "api");
    let report = &status["status"]["report"];
    for kind in [
        "preferences",
        "projects",
        "project_details",
        "history",
        "lessons",
    ] {
        assert_eq!(report[kind]["migrated"], 0, "{kind}: {report}");
    }
    assert_eq!(
        app.get_json("/api/memory/stats").await["episodic"]["active"],
        3
    );
    let r = app
        .request(Method::PUT, "/api/memory/migrate")
        .send()
        .await
        .unwrap();
    assert_error(r, 405, "method_not_allowed").await;

    // The next boot does not migrate again (the flag is set).
    let home = app.stop().await;
    let config = kirocrew::config::load(home.path(), Vec::new()).unwrap();
    assert!(config.settings.memory.migrated);
    app_events_unchanged_after_restart(home).await;
}

async fn app_events_unchanged_after_restart(home: tempfile::TempDir) {
    let app = spawn_app_in(home, |s| s.memory.migrated = true).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let status = app.get_json("/api/memory/migrate").await;
    assert_eq!(status["status"]["step"], "idle");
    app.stop().await;
}

#[actix_web::test]
async fn a_fresh_install_is_marked_migrated_with_an_audit_event() {
    let app = crate::helpers::spawn_app_with(|s| s.memory.migrated = false).await;
    let status = wait_migrated(&app).await;
    assert_eq!(status["status"]["step"], "done");
    assert_eq!(status["legacy_content_present"], false);
    assert_eq!(config_json(app.home_path())["memory"]["migrated"], true);
    let events = app.get_json("/api/memory/events").await;
    assert_eq!(events["events"][0]["event_type"], "migration");
    let stats = app.get_json("/api/memory/stats").await;
    assert_eq!(stats["legacy_content_present"], false);
    app.stop().await;
}

#[test]
fn the_cli_searches_the_files_and_migrates() {
    use crate::cli::{run_cli, stderr, stdout};
    let home = legacy_home();
    let h = home.path();
    let out = run_cli(h, &["memory", "search", "--files", "running", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 2, "{hits}");
    assert_eq!(hits[0]["file"], "history/2026-03-10.md");
    let out = run_cli(h, &["memory", "search", "--files", "helix"]);
    assert!(
        stdout(&out).contains("preferences.md § Tools"),
        "{}",
        stdout(&out)
    );
    let out = run_cli(h, &["memory", "search", "--files", "?!"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no searchable words"));

    let out = run_cli(h, &["memory", "migrate", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["preferences"]["migrated"], 2);
    assert_eq!(report["history"]["migrated"], 2);
    assert_eq!(config_json(h)["memory"]["migrated"], true);
    let out = run_cli(h, &["memory", "migrate"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(
        table.contains("preferences") && table.contains("skipped"),
        "{table}"
    );
    let list = run_cli(h, &["memory", "audit", "--json", "--limit", "1"]);
    let events: Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(events[0]["event_type"], "migration");
    assert_eq!(events[0]["source"], "cli");
}
