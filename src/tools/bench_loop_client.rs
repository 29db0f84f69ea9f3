//! What `kirocrew bench loop` asks the daemon besides the faces it
//! measures: readiness of the embedding model and forced consolidation
//! runs, waited for through the status the dashboard reads.

use std::time::{Duration, Instant};

use anyhow::bail;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::{json, Value};

use crate::daemon_client::Daemon;

/// How long one forced consolidation may take before the bench gives up.
pub(super) const RUN_DEADLINE: Duration = Duration::from_secs(900);
/// How long the embedding model may take to load.
const EMBEDDER_DEADLINE: Duration = Duration::from_secs(300);

/// A session key as a path segment.
pub(super) fn encode(key: &str) -> String {
    utf8_percent_encode(key, NON_ALPHANUMERIC).to_string()
}

/// Waits until the daemon's embedding model is ready.
pub(super) fn wait_for_embedder(client: &Daemon) -> anyhow::Result<()> {
    let deadline = Instant::now() + EMBEDDER_DEADLINE;
    loop {
        let status = client.get_json("/api/memory/embedding-status")?;
        match status["model_state"].as_str() {
            Some("ready") => return Ok(()),
            Some("failed") => bail!("the embedding model failed to load: {status}"),
            _ if Instant::now() > deadline => bail!("the embedding model did not load: {status}"),
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// The session's line of the consolidation status.
fn session_status(client: &Daemon, key: &str) -> anyhow::Result<Value> {
    let status = client.get_json("/api/memory/consolidation")?;
    Ok(status["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["session"] == key)
        .cloned()
        .unwrap_or(Value::Null))
}

/// Forces a run over the session and waits until it ends.
pub(super) fn consolidate(client: &Daemon, key: &str) -> anyhow::Result<()> {
    let before = session_status(client, key)?;
    let answer = client.post_json(
        &format!("/api/memory/consolidation/{}/run", encode(key)),
        &json!({}),
    )?;
    if answer["started"].as_array().is_none_or(Vec::is_empty) {
        bail!("nothing started: {answer}");
    }
    let deadline = Instant::now() + RUN_DEADLINE;
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = session_status(client, key)?;
        let idle = now["running"].as_array().is_none_or(Vec::is_empty);
        let ran =
            now["last_run"] != before["last_run"] || now["last_error"] != before["last_error"];
        if idle && ran {
            return match now["last_error"].as_str() {
                Some(e) if now["last_error"] != before["last_error"] => bail!("{e}"),
                _ => Ok(()),
            };
        }
        if Instant::now() > deadline {
            bail!("still running after {} s: {now}", RUN_DEADLINE.as_secs());
        }
    }
}
