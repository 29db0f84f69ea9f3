//! Episodic retrieval v2 through the store handle (issue 37): the entity
//! graph reaching a bridge fragment that shares no word with the question,
//! and following tombstones and restores; the speaker gate refusing a
//! question about the wrong person while answering the right one. Keyword
//! evidence only (no model), so every figure here is exact.

mod common;

use chrono::{TimeZone, Utc};
use kirocrew_actors::vector_store::episodic::{EpisodicQuery, EpisodicWrite, Methods};
use kirocrew_actors::vector_store::VectorStoreHandle;

async fn conversation(store: &VectorStoreHandle, day: u32, texts: &[&str]) -> Vec<i64> {
    let start = Utc.with_ymd_and_hms(2026, 3, day, 10, 0, 0).unwrap();
    let mut ids = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let mut w = EpisodicWrite::new(*text, "test");
        w.created_at = Some(start + chrono::Duration::minutes(i as i64));
        w.dedup = false;
        ids.push(store.write_episodic(w).await.unwrap());
    }
    ids
}

fn ask(text: &str, methods: Methods) -> EpisodicQuery {
    let mut q = EpisodicQuery::new(text, 5);
    q.as_of = Some(Utc.with_ymd_and_hms(2026, 4, 1, 0, 0, 0).unwrap());
    q.methods = methods;
    q
}

#[actix_rt::test]
async fn the_graph_reaches_a_bridge_and_follows_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open_store(dir.path()).await;
    let hop = conversation(
        &store,
        1,
        &[
            "Anna: My younger sister is called Beatrice, she just moved.",
            "Tom: Nice! How is she settling in?",
        ],
    )
    .await;
    let bridge = conversation(
        &store,
        8,
        &[
            "Tom: Yesterday Beatrice started a job at Novartis in Basel.",
            "Anna: The weather was lovely this weekend.",
        ],
    )
    .await[0];
    conversation(
        &store,
        15,
        &[
            "Tom: I fixed the flaky build on the billing dashboard.",
            "Anna: We planned a trip to Lisbon in May.",
        ],
    )
    .await;
    let question = "Where does Anna's sister work?";
    let ids = |hits: &[kirocrew_actors::vector_store::episodic::EpisodicHit]| {
        hits.iter().map(|h| h.entry.id).collect::<Vec<_>>()
    };

    let without = Methods {
        graph: false,
        ..Methods::default()
    };
    let hits = store.search_episodic(ask(question, without)).await.unwrap();
    assert_eq!(ids(&hits).first(), Some(&hop[0]), "{hits:?}");
    assert!(
        !ids(&hits).contains(&bridge),
        "no shared word, no graph: {hits:?}"
    );

    let hits = store
        .search_episodic(ask(question, Methods::default()))
        .await
        .unwrap();
    assert_eq!(ids(&hits).first(), Some(&hop[0]));
    let reached = hits.iter().find(|h| h.entry.id == bridge);
    let reached = reached.unwrap_or_else(|| panic!("the bridge is reached: {hits:?}"));
    assert!(reached.parts.as_ref().unwrap().graph > 0.0, "{reached:?}");

    // Tombstoning the first hop takes its edges away with it…
    store.delete_episodic(hop[0], "test").await.unwrap();
    let hits = store
        .search_episodic(ask(question, Methods::default()))
        .await
        .unwrap();
    assert!(!ids(&hits).contains(&bridge), "{hits:?}");
    // …and restoring it brings them back.
    store.restore_episodic(hop[0], "test").await.unwrap();
    let hits = store
        .search_episodic(ask(question, Methods::default()))
        .await
        .unwrap();
    assert!(ids(&hits).contains(&bridge), "{hits:?}");
}

#[actix_rt::test]
async fn a_question_about_the_wrong_speaker_is_kept_out_of_context() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::open_store(dir.path()).await;
    conversation(
        &store,
        1,
        &[
            "Melanie: I ran a charity race for mental health last Saturday.",
            "Caroline: Wow, your charity race sounds amazing! What did it teach you?",
            "Melanie: I realized that self-care is really important.",
            "Caroline: I went to an LGBTQ support group yesterday.",
            "Caroline: The support group made me feel accepted.",
            "Melanie: That's great, Caroline!",
        ],
    )
    .await;
    let gated = |text: &str| {
        let mut q = ask(text, Methods::default());
        q.relevance_filter = true;
        q
    };

    let hits = store
        .search_episodic(gated("What did Caroline realize after her charity race?"))
        .await
        .unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits.iter().all(|h| h.speaker_mismatch && !h.passed_gate),
        "{hits:?}"
    );
    let margin = hits[0].parts.as_ref().unwrap().speaker_margin.unwrap();
    assert!(margin > 0.5, "{margin}");
    let context = store
        .episodic_context("What did Caroline realize after her charity race?", 3000)
        .await
        .unwrap();
    assert_eq!(context.block, "", "nothing is injected for a false premise");

    for right in [
        "What did Melanie realize after her charity race?",
        "What did Mel realize after the charity race?",
        "Where did Caroline go yesterday?",
    ] {
        let hits = store.search_episodic(gated(right)).await.unwrap();
        assert!(
            hits.iter().all(|h| !h.speaker_mismatch) && hits.iter().any(|h| h.passed_gate),
            "{right}: {hits:?}"
        );
        let context = store.episodic_context(right, 3000).await.unwrap();
        assert!(context.block.starts_with("[Episodic Memory]"), "{right}");
    }

    // Switched off, the same wrong question is answered (the ablation).
    let mut q = gated("What did Caroline realize after her charity race?");
    q.methods.speakers = false;
    let hits = store.search_episodic(q).await.unwrap();
    assert!(hits.iter().all(|h| !h.speaker_mismatch && h.passed_gate));
}
