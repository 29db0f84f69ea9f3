//! A write the injection screen blocked, refused the same way by every
//! writer (semantic, lessons, episodic): an `injection_blocked` audit event
//! in memory.db with a redacted snippet (the dashboard shows it verbatim),
//! then the same block as a security event (category `injection_blocked`,
//! actor = the write's source) when a security log is attached, and the
//! [`VectorStoreError::InjectionDetected`] answer naming the rule
//! (`similarity` for a similarity block).
//!
//! [`enforce`] is the one three-way rule every writer applies to its
//! verdict (issue 41): allowed writes go on, blocked ones are refused here,
//! quarantined ones are held (`quarantine/hold.rs`).
//!
//! The security event is sent without waiting (`record_later`): the store
//! does not slow down on the log, and a log failure is the log's to report.

use serde_json::json;
use sqlx::sqlite::SqlitePool;

use super::audit::{record_event, NewEvent};
use super::error::VectorStoreError;
use super::quarantine::hold::hold;
use super::quarantine::types::Held;
use super::screening::Screening;
use crate::security::lane::Lane;
use crate::security::redact::redact;
use crate::security::screen::Verdict;
use crate::security_log::SecurityEvent;

/// The security-event category of a blocked memory write.
pub(crate) const INJECTION_BLOCKED: &str = "injection_blocked";

/// The write that was blocked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Blocked<'a> {
    /// `semantic` or `episodic`.
    pub memory_type: &'a str,
    /// The key (empty for an episodic fragment).
    pub key: &'a str,
    /// The writer's source label.
    pub source: &'a str,
    /// The text as screened; only its redacted snippet is kept.
    pub text: &'a str,
}

/// Applies `verdict` to a write: `Ok` when it may be stored (allowed, or
/// released by a human: [`Screening::released`]); otherwise the block is
/// audited and refused, or the write (`held`, built only then) is kept in
/// the quarantine, and the writer answers with the error returned.
pub(crate) async fn enforce(
    pool: &SqlitePool,
    verdict: &Verdict,
    blocked: Blocked<'_>,
    held: impl FnOnce() -> Held,
    screening: &Screening,
    now: &str,
    max_events: u32,
) -> Result<(), VectorStoreError> {
    if screening.released {
        return Ok(());
    }
    match verdict.lane() {
        Lane::Allow => Ok(()),
        Lane::Block => Err(refuse(pool, verdict, blocked, screening, now, max_events).await),
        Lane::Quarantine => {
            let (held, text) = (held(), blocked.text);
            Err(hold(pool, verdict, held, text, screening, now, max_events).await)
        }
    }
}

/// Audits and reports the block; returns the error the writer answers
/// (or the audit's own failure).
async fn refuse(
    pool: &SqlitePool,
    verdict: &Verdict,
    blocked: Blocked<'_>,
    screening: &Screening,
    now: &str,
    max_events: u32,
) -> VectorStoreError {
    let rule = verdict.rule.unwrap_or("injection");
    let snippet = redact(blocked.text);
    let audited = async {
        let mut conn = pool.acquire().await?;
        record_event(
            &mut conn,
            NewEvent {
                event_type: INJECTION_BLOCKED,
                memory_type: blocked.memory_type,
                key: blocked.key,
                old_value: None,
                new_value: Some(&snippet),
                source: blocked.source,
            },
            now,
            max_events,
        )
        .await
    }
    .await;
    tracing::warn!(
        memory_type = blocked.memory_type,
        key = blocked.key,
        rule,
        "memory write blocked by injection screening"
    );
    if let Some(log) = &screening.log {
        log.record_later(SecurityEvent::new(
            INJECTION_BLOCKED,
            blocked.source,
            "blocked",
            json!({
                "memory_type": blocked.memory_type,
                "key": blocked.key,
                "rule": rule,
                "category": verdict.category.map(|c| c.as_str()),
                "language": verdict.language,
                "layer": verdict.layer.map(|l| l.as_str()),
                "matched": verdict.matched.as_deref().map(redact),
                "snippet": snippet,
            }),
        ));
    }
    match audited {
        Ok(()) => VectorStoreError::InjectionDetected { pattern: rule },
        Err(e) => e,
    }
}
