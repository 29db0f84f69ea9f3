//! The consolidator test rig (actors/tests/consolidator.rs,
//! consolidation_steps.rs): real transcripts, store and Markdown layers in
//! a temporary directory on a manual clock, the model an
//! OpenAI-compatible server on 127.0.0.1.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use chrono::TimeZone;
use kirocrew_actors::clock::ManualClock;
use kirocrew_actors::consolidator::{
    AfterConsolidationSteps, ConsolidatedSession, ConsolidationSettings, ConsolidatorConfig,
    ConsolidatorHandle,
};
use kirocrew_actors::lessons_file::LessonFile;
use kirocrew_actors::llm::{OpenAiClient, OpenAiConfig, SharedLlm};
use kirocrew_actors::memory_files::{MemoryFilesConfig, MemoryFilesHandle};
use kirocrew_actors::transcripts::{NewTurn, Role, TranscriptsConfig, TranscriptsHandle};
use kirocrew_actors::vector_store::VectorStoreHandle;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::chat_server::ChatServer;

/// A history-path answer: one entry, one fragment, one lesson.
pub(crate) fn history_answer() -> String {
    json!({
        "history": "Talked about editors; the user prefers neovim.",
        "episodic": [{"text": "The user switched their editor to neovim this week.", "importance": 0.7, "tags": ["editor"]}],
        "lessons": [{"rule": "Suggest neovim keybindings first", "category": "preference"}],
    })
    .to_string()
}

pub(crate) struct Rig {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) transcripts: TranscriptsHandle,
    pub(crate) store: VectorStoreHandle,
    pub(crate) files: MemoryFilesHandle,
    pub(crate) consolidator: ConsolidatorHandle,
    pub(crate) after: mpsc::Receiver<ConsolidatedSession>,
}

pub(crate) fn endpoint(server: &ChatServer) -> SharedLlm {
    let mut config = OpenAiConfig::new(server.base_url.clone(), "test-model");
    config.retries = 0;
    config.timeout = Duration::from_secs(10);
    Arc::new(OpenAiClient::new(config))
}

/// A rig whose only `after_consolidation` step is the `after` channel.
pub(crate) async fn rig(llm: SharedLlm, migrated: bool) -> Rig {
    rig_with(llm, migrated, Vec::new()).await
}

/// A rig whose `after_consolidation` steps are `steps`, then the `after`
/// channel.
pub(crate) async fn rig_with(
    llm: SharedLlm,
    migrated: bool,
    mut steps: AfterConsolidationSteps,
) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(chrono::Utc.with_ymd_and_hms(2025, 3, 1, 9, 0, 0).unwrap());
    let transcripts = TranscriptsHandle::start(TranscriptsConfig {
        dir: dir.path().join("sessions"),
        clock: clock.clone(),
    });
    let store = super::open_store(dir.path()).await;
    let files = MemoryFilesHandle::start(MemoryFilesConfig {
        memory_dir: dir.path().join("memory"),
        index_path: dir.path().join("memory_index.db"),
        clock: clock.clone(),
        rebuild_on_start: false,
    });
    let (tx, after) = mpsc::channel(8);
    steps.push(Arc::new(tx));
    let (consolidator, _idle) = ConsolidatorHandle::start(ConsolidatorConfig {
        transcripts: transcripts.clone(),
        store: store.clone(),
        files: files.clone(),
        lessons_file: LessonFile::new(dir.path().join("lessons.jsonl")),
        llm,
        clock: clock.clone(),
        migrated: Arc::new(AtomicBool::new(migrated)),
        after_consolidation: steps,
        settings: ConsolidationSettings::default(),
    });
    Rig {
        dir,
        clock,
        transcripts,
        store,
        files,
        consolidator,
        after,
    }
}

impl Rig {
    /// Records turn `i` of `key` (a conversation that supports what
    /// [`history_answer`] and the prefs answers say: grounding drops any
    /// item the turns do not) and tells the consolidator, like the gateway
    /// route does; answers whether a prefs run started.
    pub(crate) async fn say(&self, key: &str, i: usize) -> bool {
        const LINES: [&str; 5] = [
            "I prefer neovim with dark mode; I switched my editor to neovim this week.",
            "Noted: neovim in dark mode. We talked about editors.",
            "Please suggest neovim keybindings first.",
            "Sure, neovim keybindings first from now on.",
            "My main project is kirocrew.",
        ];
        let text = format!("msg-{i:03} {}", LINES[i % LINES.len()]);
        self.say_text(key, i, &text).await
    }

    /// Records `text` as turn `i` of `key` (user on even turns) and tells
    /// the consolidator; answers whether a prefs run started.
    pub(crate) async fn say_text(&self, key: &str, i: usize, text: &str) -> bool {
        let meta = self
            .transcripts
            .append(NewTurn {
                session_key: key.into(),
                role: if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                text: text.into(),
                channel_id: None,
                sender: None,
                user: None,
            })
            .await
            .unwrap();
        self.consolidator.note_turn(meta).await.unwrap()
    }

    /// Waits until no run of `key` is in flight; answers its status.
    pub(crate) async fn settle(&self, key: &str) -> Value {
        for _ in 0..600 {
            let status = self.consolidator.status().await.unwrap();
            let session = status.sessions.iter().find(|s| s.session == key).cloned();
            if let Some(s) = session.filter(|s| s.running.is_empty()) {
                return serde_json::to_value(s).unwrap();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("consolidation of {key} did not finish");
    }

    pub(crate) async fn marker(&self, key: &str) -> u64 {
        let (_, meta) = self.transcripts.turns_since(key, 0).await.unwrap();
        meta.unwrap().last_consolidated
    }

    pub(crate) fn history_files(&self) -> Vec<String> {
        let dir = self.dir.path().join("memory/history");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .collect()
    }
}
