//! The `after_consolidation` steps (issue 14): every successful history
//! path offers the session, once, to each registered step in order; a
//! failing step is reported but undoes nothing and moves no marker; the
//! prefs path offers nothing; the daemon's default step records a
//! `consolidated` audit event.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chrono::Duration;
use common::chat_server::{is_history, ChatServer, Reply};
use common::consolidator_rig::{endpoint, history_answer, rig_with, Rig};
use kirocrew_actors::clock::Clock;
use kirocrew_actors::consolidator::{
    AfterConsolidation, ConsolidatedSession, ConsolidationPath, RecordConsolidated, StepFuture,
};
use kirocrew_actors::heartbeat::CheckIdleSessions;
use serde_json::{json, Value};

/// Records what it was offered; fails every offer when `fail` is set.
#[derive(Default)]
struct Probe {
    fail: bool,
    seen: Mutex<Vec<ConsolidatedSession>>,
    calls: AtomicUsize,
}

impl AfterConsolidation for Probe {
    fn name(&self) -> &str {
        if self.fail {
            "failing_probe"
        } else {
            "probe"
        }
    }

    fn after(&self, session: ConsolidatedSession) -> StepFuture {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(session);
        let fail = self.fail;
        Box::pin(async move {
            if fail {
                Err("the skill pipeline is down".into())
            } else {
                Ok(())
            }
        })
    }
}

fn answers() -> ChatServer {
    ChatServer::start(|request| {
        if is_history(request) {
            Reply::Answer(history_answer())
        } else {
            Reply::Answer(json!({"semantic": []}).to_string())
        }
    })
}

/// Moves the clock past the idle threshold and runs an idle check;
/// answers the sessions it started.
async fn idle_check(rig: &Rig) -> Vec<String> {
    rig.clock.advance(Duration::hours(3) + Duration::minutes(1));
    rig.consolidator
        .check_idle(CheckIdleSessions {
            now: rig.clock.now(),
            idle_after: Duration::hours(3),
        })
        .await
        .unwrap()
}

#[actix_rt::test]
async fn each_idle_consolidation_is_offered_once_and_a_failing_step_undoes_nothing() {
    let server = answers();
    let failing = Arc::new(Probe {
        fail: true,
        ..Probe::default()
    });
    let probe = Arc::new(Probe::default());
    // The failing step runs first: the later ones still run.
    let mut rig = rig_with(
        endpoint(&server),
        true,
        vec![failing.clone(), probe.clone()],
    )
    .await;
    for i in 0..5 {
        rig.say("s1", i).await;
    }
    assert_eq!(idle_check(&rig).await, ["s1"]);
    let status = rig.settle("s1").await;
    // The run stands: no error, the marker moved, everything written.
    assert_eq!(status["last_error"], Value::Null, "{status}");
    assert_eq!(status["unconsolidated"], 0);
    assert_eq!(rig.marker("s1").await, 5);
    assert!(rig.history_files().join("\n").contains("prefers neovim"));
    assert_eq!(rig.store.list_episodic(0, 10).await.unwrap().1, 1);
    assert_eq!(rig.store.list_lessons().await.unwrap().len(), 1);

    // Each step was offered the session exactly once, with the summary.
    assert_eq!(failing.calls.load(Ordering::SeqCst), 1);
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    let offered = probe.seen.lock().unwrap()[0].clone();
    assert_eq!(offered.session, "s1");
    assert_eq!(offered.upto, 5);
    assert_eq!(offered.report.turns, 5);
    assert!(offered.report.history);
    assert_eq!(offered.report.episodic, 1);
    assert_eq!(offered.report.lessons, 1);
    let channel = rig.after.try_recv().expect("the channel step ran too");
    assert_eq!(channel.session, "s1");
    assert!(rig.after.try_recv().is_err(), "offered once");

    // Nothing new: the next idle check starts nothing and offers nothing.
    assert!(idle_check(&rig).await.is_empty());
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1);

    // New messages: one more run, one more offer, from the marker on.
    for i in 5..8 {
        rig.say("s1", i).await;
    }
    assert_eq!(idle_check(&rig).await, ["s1"]);
    rig.settle("s1").await;
    assert_eq!(rig.marker("s1").await, 8);
    assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
    assert_eq!(failing.calls.load(Ordering::SeqCst), 2);
    let second = probe.seen.lock().unwrap()[1].clone();
    assert_eq!((second.upto, second.report.turns), (8, 3));
}

#[actix_rt::test]
async fn a_forced_run_reports_the_failed_step_and_the_prefs_path_offers_nothing() {
    let server = answers();
    let failing = Arc::new(Probe {
        fail: true,
        ..Probe::default()
    });
    let rig = rig_with(endpoint(&server), true, vec![failing.clone()]).await;
    for i in 0..3 {
        rig.say("s2", i).await;
    }
    let prefs = rig
        .consolidator
        .consolidate("s2", ConsolidationPath::Prefs)
        .await
        .unwrap();
    assert!(prefs.steps_failed.is_empty());
    assert_eq!(failing.calls.load(Ordering::SeqCst), 0);
    let report = rig
        .consolidator
        .consolidate("s2", ConsolidationPath::History)
        .await
        .unwrap();
    assert_eq!(
        report.steps_failed,
        ["failing_probe: the skill pipeline is down"]
    );
    assert_eq!(rig.marker("s2").await, 3);
    assert_eq!(failing.calls.load(Ordering::SeqCst), 1);
}

#[actix_rt::test]
async fn the_default_step_records_a_consolidated_audit_event() {
    let server = answers();
    let dir_rig = rig_with(endpoint(&server), true, Vec::new()).await;
    // The default step on this rig's own store.
    let step = RecordConsolidated::new(dir_rig.store.clone());
    for i in 0..2 {
        dir_rig.say("s3", i).await;
    }
    let report = dir_rig
        .consolidator
        .consolidate("s3", ConsolidationPath::History)
        .await
        .unwrap();
    step.after(ConsolidatedSession {
        session: "s3".into(),
        upto: report.upto,
        report,
    })
    .await
    .unwrap();
    let events = dir_rig.store.list_events(20).await.unwrap();
    let event = events
        .iter()
        .find(|e| e.event_type == "consolidated")
        .expect("a consolidated event");
    assert_eq!(event.key, "s3");
    assert_eq!(event.source, "consolidation");
    assert_eq!(event.memory_type, "session");
    let summary: Value =
        serde_json::from_str(event.new_value.as_deref().unwrap_or("null")).unwrap();
    assert_eq!(summary["upto"], 2);
    assert_eq!(summary["episodic"], 1);
}
