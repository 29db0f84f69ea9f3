//! The stand-in for a strong consolidation model in `kirocrew bench loop`
//! (`--backend observations`): a loopback OpenAI-compatible endpoint that
//! answers a consolidation prompt with the gold observations LoCoMo's
//! authors wrote for the session the prompt's turns come from.
//!
//! It lets the bench measure the loop (recording, the consolidator's
//! parsing, grounding and writers, retrieval, the context builder, the
//! hook adapter's budget) apart from model quality; `--backend local`
//! measures the two together. The daemon talks to it exactly as to any
//! endpoint (`consolidation.llm_base_url`), so nothing in the product
//! knows it is being measured.

use std::sync::Arc;
use std::thread::JoinHandle;

use actix_web::dev::ServerHandle;
use actix_web::{web, App, HttpResponse, HttpServer};
use anyhow::Context;
use serde_json::{json, Value};

use kirocrew_actors::consolidator::prompt::system_prompt;
use kirocrew_actors::consolidator::{ConsolidationPath, MAX_EPISODIC};

/// Characters of a turn's opening looked for in a prompt (the prompt may
/// cut a long turn, never its start).
const TURN_MARK_CHARS: usize = 60;

/// One session the endpoint can answer for.
pub(super) struct GoldSession {
    /// The openings of its turns, as the prompt quotes them.
    pub(super) turn_marks: Vec<String>,
    /// Its gold observations, in order.
    pub(super) observations: Vec<String>,
}

impl GoldSession {
    /// A session from its turn texts and observations.
    pub(super) fn new(turns: &[&str], observations: Vec<String>) -> Self {
        let turn_marks = turns
            .iter()
            .map(|t| t.trim().chars().take(TURN_MARK_CHARS).collect::<String>())
            .filter(|m| m.chars().count() >= 12)
            .collect();
        Self {
            turn_marks,
            observations,
        }
    }
}

/// The running endpoint.
pub(super) struct GoldEndpoint {
    base_url: String,
    handle: ServerHandle,
    thread: JoinHandle<std::io::Result<()>>,
}

impl GoldEndpoint {
    /// Serves `sessions` on 127.0.0.1 (a free port) from its own thread.
    pub(super) fn start(sessions: Vec<GoldSession>) -> anyhow::Result<Self> {
        let sessions = web::Data::new(Arc::new(sessions));
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let server = HttpServer::new(move || {
                    App::new()
                        .app_data(sessions.clone())
                        .app_data(web::JsonConfig::default().limit(16 << 20))
                        .route("/v1/chat/completions", web::post().to(complete))
                })
                .workers(1)
                .bind(("127.0.0.1", 0))?;
                let address = server.addrs()[0];
                let server = server.run();
                let _ = tx.send((address, server.handle()));
                server.await
            })
        });
        let (address, handle) = rx
            .recv()
            .context("the gold-observations endpoint did not start")?;
        Ok(Self {
            base_url: format!("http://{address}/v1"),
            handle,
            thread,
        })
    }

    /// The API root to configure as `consolidation.llm_base_url`.
    pub(super) fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Stops the server and its thread.
    pub(super) fn stop(self) {
        // The server's own system runs in its thread; any executor can
        // wait for the stop.
        actix_rt::System::new().block_on(self.handle.stop(true));
        let _ = self.thread.join();
    }
}

async fn complete(
    sessions: web::Data<Arc<Vec<GoldSession>>>,
    body: web::Json<Value>,
) -> HttpResponse {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let content = |m: Option<&Value>| {
        m.and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let system = content(messages.first());
    let user = content(messages.last());
    let path = if system == system_prompt(ConsolidationPath::History, false) {
        ConsolidationPath::History
    } else {
        ConsolidationPath::Prefs
    };
    let observations = session_of(&sessions, &user)
        .map(|s| s.observations.as_slice())
        .unwrap_or_default();
    let answer = answer(path, observations);
    HttpResponse::Ok().json(json!({
        "id": "gold-observations",
        "object": "chat.completion",
        "created": 0,
        "model": "gold-observations",
        "choices": [{
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": answer.to_string()},
        }],
    }))
}

/// The session whose turns the prompt quotes most (none: no turn found).
fn session_of<'a>(sessions: &'a [GoldSession], prompt: &str) -> Option<&'a GoldSession> {
    sessions
        .iter()
        .map(|s| {
            let hits = s.turn_marks.iter().filter(|m| prompt.contains(*m)).count();
            (hits, s)
        })
        .filter(|(hits, _)| *hits > 0)
        .max_by_key(|(hits, _)| *hits)
        .map(|(_, s)| s)
}

/// The answer a strong model would give on `path` (pure): the history
/// path gets the observations as episodes (merged in order to fit the
/// per-run cap) and a short history entry; the prefs path nothing, since
/// LoCoMo's observations are facts about people, not `pref.*` settings.
fn answer(path: ConsolidationPath, observations: &[String]) -> Value {
    match path {
        ConsolidationPath::History => {
            let history = observations
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ");
            let episodic: Vec<Value> = episodic_items(observations)
                .into_iter()
                .map(|text| json!({"text": text, "importance": 0.6, "tags": []}))
                .collect();
            json!({"history": history, "episodic": episodic, "lessons": []})
        }
        ConsolidationPath::Prefs => json!({"semantic": []}),
    }
}

/// The observations merged in order into at most [`MAX_EPISODIC`] items
/// (a session may have more observations than a run may write episodes).
fn episodic_items(observations: &[String]) -> Vec<String> {
    if observations.is_empty() {
        return Vec::new();
    }
    let per_item = observations.len().div_ceil(MAX_EPISODIC);
    observations
        .chunks(per_item)
        .map(|chunk| chunk.join(" "))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_answered_for_the_session_it_quotes() {
        let a = GoldSession::new(
            &["I went to a LGBTQ support group yesterday.", "short"],
            vec!["Caroline went to a support group.".into()],
        );
        let b = GoldSession::new(
            &["Painting is a fun way to express my feelings."],
            vec!["Melanie paints.".into()],
        );
        let sessions = vec![a, b];
        let prompt = "user: Painting is a fun way to express my feelings.\nassistant: nice";
        let found = session_of(&sessions, prompt).unwrap();
        assert_eq!(found.observations, ["Melanie paints."]);
        assert!(session_of(&sessions, "nothing of either").is_none());
    }

    #[test]
    fn observations_fit_the_episode_cap_in_order() {
        let many: Vec<String> = (0..23).map(|i| format!("fact {i}")).collect();
        let items = episodic_items(&many);
        assert!(items.len() <= MAX_EPISODIC, "{items:?}");
        assert_eq!(items.join(" "), many.join(" "));
        assert_eq!(episodic_items(&many[..4]).len(), 4);
        assert!(episodic_items(&[]).is_empty());
        let prefs = answer(ConsolidationPath::Prefs, &many);
        assert_eq!(prefs, json!({"semantic": []}));
        let history = answer(ConsolidationPath::History, &many[..2]);
        assert_eq!(history["episodic"].as_array().unwrap().len(), 2);
    }
}
