//! One consolidation run of one path for one session (plain async code,
//! run as a task the actor spawns, never on its mailbox turn):
//!
//! 1. read the turns from the path's offset on;
//! 2. ask the model on a blocking thread (network or inference);
//! 3. parse the answer against the path's schema — a malformed or
//!    truncated answer ends the run here, nothing written (stray keys are
//!    ignored, malformed items dropped one by one);
//! 4. ground every item in the turns (`grounding.rs`): what the
//!    conversation does not support is dropped, counted
//!    (`dropped.ungrounded`) and audited; then drop the items over the
//!    caps (logged);
//! 5. write every kept item through its normal writer with source
//!    `consolidation` (validation, confidence gate, injection screen,
//!    dedup, audit all apply; a refused item is logged and counted);
//! 6. history path only: persist the marker, then offer the session to
//!    the `after_consolidation` steps (`steps.rs`; a failing step is
//!    reported, the run stands).
//!
//! The history entry is written before anything else of the history
//! path, so a failing history file stops the run before any item lands.

use crate::clock::format_ts;
use crate::llm::{LlmError, LlmRequest};
use crate::memory_files::Layer;
use crate::transcripts::Turn;
use crate::vector_store::episodic::EpisodicWrite;
use crate::vector_store::lessons::LessonWrite;
use crate::vector_store::{RecordEvent, SemanticWrite, VectorStoreError};

use super::error::ConsolidatorError;
use super::grounding::{ground_answer, Evidence, Ungrounded};
use super::prompt::{system_prompt, user_prompt};
use super::schema::{
    answer_schema, apply_caps, parse_answer, ConsolidationAnswer, ConsolidationPath,
};
use super::steps::run_steps;
use super::types::{ConsolidatedSession, ConsolidatorConfig, RunReport, SOURCE};

/// Runs `path` for `key` over the turns from `from` on. A forced run
/// (`wait_for_model`) first waits, bounded, for a model still loading; a
/// triggered run does not (it fails "not ready" and the next trigger tries
/// the same turns again).
pub(crate) async fn run_path(
    config: &ConsolidatorConfig,
    key: &str,
    path: ConsolidationPath,
    from: u64,
    wait_for_model: bool,
) -> Result<RunReport, ConsolidatorError> {
    let (turns, meta) = config.transcripts.turns_since(key, from).await?;
    if meta.is_none() {
        return Err(ConsolidatorError::UnknownSession(key.to_owned()));
    }
    let upto = from + turns.len() as u64;
    let mut report = RunReport {
        path: Some(path),
        turns: turns.len() as u64,
        upto,
        ..RunReport::default()
    };
    if turns.is_empty() {
        return Ok(report);
    }
    let markdown = path == ConsolidationPath::Prefs
        && !config.migrated.load(std::sync::atomic::Ordering::Acquire);
    let documents = if markdown {
        Some((
            config.files.layer(Layer::Preferences).await?,
            config.files.layer(Layer::Projects).await?,
        ))
    } else {
        None
    };
    let request = LlmRequest {
        system: system_prompt(path, markdown),
        user: user_prompt(
            &turns,
            documents.as_ref().map(|(p, q)| (p.as_str(), q.as_str())),
            config.settings.transcript_chars,
        ),
        schema: answer_schema(path, markdown),
        max_tokens: config.settings.max_tokens,
    };
    let llm = config.llm.clone();
    let wait = wait_for_model.then_some(config.settings.forced_model_wait);
    let text = tokio::task::spawn_blocking(move || {
        if let Some(wait) = wait {
            llm.wait_until_ready(wait)?;
        }
        llm.complete(&request)
    })
    .await
    .map_err(|e| ConsolidatorError::Model(LlmError::Generation(e.to_string())))?
    .map_err(ConsolidatorError::Model)?;
    let mut answer = parse_answer(&text, path, markdown).map_err(|e| {
        tracing::warn!(session = key, ?path, error = %e, "consolidation answer refused; nothing written");
        ConsolidatorError::Answer(e)
    })?;
    let shown: Vec<&str> = documents
        .iter()
        .flat_map(|(p, q)| [p.as_str(), q.as_str()])
        .collect();
    let evidence = Evidence::from_turns(&turns, &shown);
    let ungrounded = ground_answer(
        &mut answer,
        &evidence,
        documents.as_ref().map(|(p, q)| (p.as_str(), q.as_str())),
    );
    report.dropped = apply_caps(&mut answer);
    report.dropped.ungrounded = ungrounded.len();
    report.ignored_keys = std::mem::take(&mut answer.ignored_keys);
    audit_ungrounded(config, key, &ungrounded).await;
    match path {
        ConsolidationPath::Prefs => write_prefs(config, answer, markdown, &mut report).await?,
        ConsolidationPath::History => {
            write_history(config, answer, &turns, &evidence, &mut report).await?;
            config.transcripts.mark_consolidated(key, upto).await?;
            // After the marker: a failing step cannot undo the run.
            let session = ConsolidatedSession {
                session: key.to_owned(),
                upto,
                report: report.clone(),
            };
            report.steps_failed = run_steps(&config.after_consolidation, &session).await;
        }
    }
    tracing::info!(session = key, ?path, ?report, "consolidated");
    Ok(report)
}

/// One audit event per dropped item (`ungrounded`, source
/// `consolidation`): what the model proposed and how little of it the
/// conversation held. An audit failure is logged; the run goes on.
async fn audit_ungrounded(config: &ConsolidatorConfig, session: &str, items: &[Ungrounded]) {
    for item in items {
        let details = serde_json::json!({
            "session": session,
            "text": item.text,
            "support": {"found": item.found, "of": item.total},
        });
        let event = RecordEvent {
            event_type: "ungrounded".into(),
            memory_type: item.kind.into(),
            key: item.key.clone(),
            new_value: Some(details.to_string()),
            source: SOURCE.into(),
        };
        if let Err(e) = config.store.record_event(event).await {
            tracing::warn!(error = %e, "ungrounded item not audited");
        }
    }
    if !items.is_empty() {
        tracing::info!(
            session,
            dropped = items.len(),
            "consolidation items the conversation does not support were dropped"
        );
    }
}

fn refused(report: &mut RunReport, what: &str, error: &dyn std::fmt::Display) {
    tracing::info!(what, %error, "consolidation item refused by its writer");
    report.refused += 1;
}

async fn write_prefs(
    config: &ConsolidatorConfig,
    answer: ConsolidationAnswer,
    markdown: bool,
    report: &mut RunReport,
) -> Result<(), ConsolidatorError> {
    if markdown {
        // Both documents are checked before either replaces its file.
        if let (Some(preferences), Some(projects)) =
            (&answer.preferences_update, &answer.projects_update)
        {
            config
                .files
                .replace_layer(Layer::Preferences, preferences)
                .await?;
            config
                .files
                .replace_layer(Layer::Projects, projects)
                .await?;
            report.documents = true;
        }
    }
    for item in answer.semantic {
        let write = SemanticWrite {
            key: item.key,
            value: serde_json::Value::String(item.value),
            confidence: item.confidence,
            source: SOURCE.into(),
        };
        match config.store.write_semantic(write).await {
            Ok(_) => report.semantic += 1,
            Err(e) => refused(report, "semantic", &e),
        }
    }
    Ok(())
}

async fn write_history(
    config: &ConsolidatorConfig,
    answer: ConsolidationAnswer,
    turns: &[Turn],
    evidence: &Evidence,
    report: &mut RunReport,
) -> Result<(), ConsolidatorError> {
    if let Some(history) = answer.history.as_deref().map(str::trim) {
        if !history.is_empty() {
            config.files.append_history(history).await?;
            report.history = true;
        }
    }
    for item in answer.episodic {
        // An episode is dated when it was said, not when the run came
        // (hours later: the history path waits for the session to idle).
        let said = evidence
            .best_turn(&item.text)
            .and_then(|i| turns.get(i))
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t.ts).ok())
            .map(|t| t.with_timezone(&chrono::Utc))
            .filter(|t| *t <= config.clock.now());
        let mut write = EpisodicWrite::new(item.text, SOURCE);
        write.importance = item.importance;
        write.tags = item.tags;
        write.created_at = said;
        match config.store.write_episodic(write).await {
            Ok(_) => report.episodic += 1,
            Err(e) => refused(report, "episodic", &e),
        }
    }
    for item in answer.lessons {
        let write = LessonWrite {
            rule: item.rule,
            negative: item.negative,
            category: item.category,
            source: SOURCE.into(),
            confidence: 0.8,
        };
        match config.store.write_lesson(write.clone()).await {
            Ok(_) => report.lessons += 1,
            // Vector memory is not there: lessons.jsonl, through the
            // file's own checks (spec: "Lesson Extraction from Chat").
            Err(VectorStoreError::Unavailable(_) | VectorStoreError::Database(_)) => {
                let now = format_ts(config.clock.now());
                match config.lessons_file.add(&write, &now) {
                    Ok(_) => report.lessons += 1,
                    Err(e) => refused(report, "lesson", &e),
                }
            }
            Err(e) => refused(report, "lesson", &e),
        }
    }
    Ok(())
}
