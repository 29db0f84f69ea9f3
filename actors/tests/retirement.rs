//! Issue 10 (2): with a model, a superseded semantic value retires the
//! episodic fragments that *state* it (close in meaning to the old fact)
//! and leaves those that merely share the word. The examples are the ones
//! the threshold in `vector_store/semantic/retire.rs` was measured on
//! (all-minilm-l6-v2, cosine of fragment vs. old fact in brackets).

mod common;

use kirocrew_actors::vector_store::episodic::EpisodicWrite;
use kirocrew_actors::vector_store::{SemanticWrite, VectorStoreHandle};

fn set(key: &str, value: &str) -> SemanticWrite {
    SemanticWrite {
        key: key.into(),
        value: serde_json::Value::String(value.into()),
        confidence: 1.0,
        source: "user_explicit".into(),
    }
}

/// One superseded fact and the fragments written while it held.
struct Case {
    key: &'static str,
    old: &'static str,
    new: &'static str,
    /// Fragments that state the fact: retired.
    states: &'static [&'static str],
    /// Fragments that only share the value: kept.
    shares: &'static [&'static str],
}

async fn remember(store: &VectorStoreHandle, text: &str) -> i64 {
    store
        .write_episodic(EpisodicWrite::new(text, "test"))
        .await
        .unwrap()
}

#[actix_rt::test]
async fn with_a_model_only_fragments_about_the_fact_are_retired() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = common::with_model(common::open_store(dir.path()).await).await else {
        return;
    };
    let cases = [
        Case {
            key: "project.db",
            old: "postgres",
            new: "sqlite",
            // [0.80] no key word ("db") in it: only meaning can tell.
            states: &["The project database runs on Postgres 15."],
            // [0.40]
            shares: &["Read an article comparing Postgres and MySQL licensing."],
        },
        Case {
            key: "pref.editor",
            old: "neovim",
            new: "helix",
            // [0.75]
            states: &["The user's editor of choice is Neovim."],
            // [0.53]
            shares: &["Neovim 0.10 was released with a new LSP client."],
        },
        Case {
            key: "pref.theme",
            old: "dark",
            new: "light",
            states: &[],
            // [0.62] the highest unrelated score measured; [0.28]
            shares: &[
                "It was already dark when the deploy finished.",
                "The dark ending of the film surprised everyone.",
            ],
        },
        Case {
            key: "user.city",
            old: "Paris",
            new: "Lyon",
            states: &[],
            // [0.38]
            shares: &["The conference next spring will be held in Paris."],
        },
    ];
    let mut stated = Vec::new();
    let mut kept = Vec::new();
    for case in &cases {
        store.write_semantic(set(case.key, case.old)).await.unwrap();
        for text in case.states {
            stated.push((remember(&store, text).await, case.key));
        }
        for text in case.shares {
            kept.push(remember(&store, text).await);
        }
    }
    for case in &cases {
        store.write_semantic(set(case.key, case.new)).await.unwrap();
    }
    let (rows, _) = store.list_episodic(0, 100).await.unwrap();
    let active: Vec<i64> = rows.iter().map(|r| r.id).collect();
    for id in &kept {
        assert!(active.contains(id), "fragment {id} only shares the value");
    }
    let events = store.list_events(100).await.unwrap();
    for (id, key) in &stated {
        assert!(!active.contains(id), "fragment {id} states {key}");
        let event = events
            .iter()
            .find(|e| e.event_type == "retire" && e.key == id.to_string())
            .expect("retire event");
        let reason = event.new_value.as_deref().unwrap_or_default();
        assert!(
            reason.contains(key) && reason.contains("cosine"),
            "{reason}"
        );
    }
}
