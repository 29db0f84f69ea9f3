//! Semantic key-value operations (spec: "Semantic Memory").
//!
//! Each write is: validate (pure; NUL and bidi controls refused) → screen
//! for injection (rules, plus similarity to the attack exemplars when the
//! write has a vector of the current space — `screening.rs`; a blocked
//! attempt is audited and reported by `refusal.rs`) → one IMMEDIATE
//! transaction that reads the incumbent,
//! runs the conflict ladder, writes, and appends the audit event. The actor
//! runs these inside `AtomicResponse`, so nothing else of the store's
//! interleaves with the read-modify-write.

use sqlx::sqlite::SqlitePool;

use super::db;
use super::ladder::{decide, Incumbent, Verdict};
use super::retire::{is_quotable, judge, OldFact};
use super::types::{IfAbsentOutcome, SemanticEntry, SemanticWrite, WriteOutcome};
use super::validate::{
    validate_confidence, validate_key, validate_source, validate_value, AGENT, LESSON_PREFIX,
    NEGATIVE_SEPARATOR, USER_EXPLICIT,
};
use crate::control_chars::check_json;
use crate::security::screen::screen_json;
use crate::vector_store::audit::{record_event, NewEvent};
use crate::vector_store::episodic::db::{rows_containing, tombstone};
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::quarantine::types::Held;
use crate::vector_store::refusal::{enforce, Blocked};
use crate::vector_store::screening::Screening;
use crate::vector_store::settings::StoreSettings;
use crate::vector_store::space::db::store_semantic_vector;
use crate::vector_store::space::types::{CommitVector, SpaceInfo};
use crate::vector_store::text::value_text;

const MEMORY_TYPE: &str = "semantic";

/// What the screen reads of a write: its value, except that a lesson's
/// rule and negative are two lines, not the stored `rule — NOT: negative`.
/// Why: the separator is the store's format, not what anyone wrote, and
/// the n-gram model reads "NOT: skip them" after a rule as an order
/// ("always run the tests — NOT: skip them" scored 0.77).
fn screened_value(write: &SemanticWrite) -> std::borrow::Cow<'_, serde_json::Value> {
    match &write.value {
        serde_json::Value::String(text)
            if write.key.starts_with(LESSON_PREFIX) && text.contains(NEGATIVE_SEPARATOR) =>
        {
            let lines = text.replacen(NEGATIVE_SEPARATOR, "\n", 1);
            std::borrow::Cow::Owned(serde_json::Value::String(lines))
        }
        value => std::borrow::Cow::Borrowed(value),
    }
}

/// Validates a write and returns its canonical value text. Injection
/// attempts are audited (and reported) before the error is returned.
/// `vector` is the write's vector with its space signature, when it has
/// one of the current space (the similarity signal needs it).
async fn admit(
    pool: &SqlitePool,
    settings: &StoreSettings,
    write: &SemanticWrite,
    vector: Option<(&[f32], &str)>,
    screening: &Screening,
    now: &str,
) -> Result<String, VectorStoreError> {
    validate_key(&write.key, &settings.extra_prefixes)?;
    validate_source(&write.source)?;
    validate_confidence(
        write.confidence,
        &write.source,
        settings.confidence_threshold,
    )?;
    let value_json = validate_value(&write.value)?;
    check_json("value", &write.value)?;
    let verdict = screening.judge(screen_json(&screened_value(write)), vector);
    if verdict.blocked {
        let text = value_text(&write.value);
        let blocked = Blocked {
            memory_type: MEMORY_TYPE,
            key: &write.key,
            source: &write.source,
            text: &text,
        };
        let held = || Held::Semantic {
            key: write.key.clone(),
            value: write.value.clone(),
            confidence: write.confidence,
            source: write.source.clone(),
        };
        let max_events = settings.max_events;
        enforce(pool, &verdict, blocked, held, screening, now, max_events).await?;
    }
    Ok(value_json)
}

/// Appends the audit event for `write` (old value as stored, new as written).
async fn audit(
    conn: &mut sqlx::SqliteConnection,
    settings: &StoreSettings,
    event_type: &str,
    write: &SemanticWrite,
    old_json: Option<&str>,
    value_json: &str,
    now: &str,
) -> Result<(), VectorStoreError> {
    record_event(
        conn,
        NewEvent {
            event_type,
            memory_type: MEMORY_TYPE,
            key: &write.key,
            old_value: old_json,
            new_value: Some(value_json),
            source: &write.source,
        },
        now,
        settings.max_events,
    )
    .await
}

/// Writes one entry through the conflict ladder.
///
/// `vector` (embedded before this call, outside the store's critical
/// section) is stored only if it was made in the current `space`
/// generation; otherwise the row keeps a NULL vector for the backfill sweep.
/// The same vector feeds the similarity screen.
pub(crate) async fn write(
    pool: &SqlitePool,
    settings: &StoreSettings,
    write: SemanticWrite,
    vector: Option<CommitVector>,
    space: &SpaceInfo,
    screening: &Screening,
    now: &str,
) -> Result<(WriteOutcome, SemanticEntry), VectorStoreError> {
    let signed = vector.and_then(|v| v.signature_in(space).map(|sig| (v, sig)));
    let screened = signed
        .as_ref()
        .map(|(v, sig)| (v.vector.as_slice(), sig.as_str()));
    let value_json = admit(pool, settings, &write, screened, screening, now).await?;
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let existing = db::fetch_active_semantic(&mut tx, &write.key).await?;
    // Read before the upsert clears it: retirement compares fragments with
    // the old fact's vector.
    let old_vector = match &existing {
        Some(e) if e.value != write.value => db::fetch_semantic_vector(&mut tx, &write.key).await?,
        _ => None,
    };
    let old_json = existing.as_ref().map(|e| e.value.to_string());
    let incumbent = existing.as_ref().map(|e| Incumbent {
        source: &e.source,
        confidence: e.confidence,
    });
    let (outcome, event_type) = match decide(incumbent, &write.source, write.confidence) {
        Verdict::Create => (WriteOutcome::Created, "create"),
        Verdict::Overwrite => (WriteOutcome::Updated, "update"),
        Verdict::Skip(reason) => {
            let old = old_json.as_deref();
            audit(
                &mut tx,
                settings,
                "conflict_skip",
                &write,
                old,
                &value_json,
                now,
            )
            .await?;
            tx.commit().await?;
            return Err(VectorStoreError::ConflictSkipped {
                key: write.key,
                reason,
            });
        }
    };
    let stored = db::upsert_semantic(
        &mut tx,
        &write.key,
        &value_json,
        write.confidence,
        &write.source,
        now,
    )
    .await?;
    if let Some((vector, sig)) = signed {
        store_semantic_vector(&mut tx, &write.key, &value_json, &vector.vector, &sig).await?;
    }
    let old = old_json.as_deref();
    audit(&mut tx, settings, event_type, &write, old, &value_json, now).await?;
    if let Some(previous) = existing.filter(|e| e.value != write.value) {
        if !write.key.starts_with(LESSON_PREFIX) {
            let old_text = value_text(&previous.value);
            let fact = OldFact {
                key: &write.key,
                value: &old_text,
                vector: old_vector.as_ref().map(|(s, v)| (s.as_str(), v.as_slice())),
                retire_cosine: settings.similarity.retire,
            };
            retire_stale_episodic(&mut tx, settings, &write, &fact, now).await?;
        }
    }
    tx.commit().await?;
    Ok((outcome, stored))
}

/// Spec `_retire_stale_episodic`: a superseded value must not live on in
/// episodic rows that state it, so they are tombstoned in the same
/// transaction, each with a `retire` audit event naming the key and the
/// evidence (`retire.rs` decides which rows state the fact; a row that only
/// shares the value is left alone). `POST
/// /api/memory/episodic/{id}/restore` undoes a retirement.
async fn retire_stale_episodic(
    conn: &mut sqlx::SqliteConnection,
    settings: &StoreSettings,
    write: &SemanticWrite,
    fact: &OldFact<'_>,
    now: &str,
) -> Result<(), VectorStoreError> {
    if !is_quotable(fact.value) {
        return Ok(());
    }
    for row in rows_containing(conn, fact.value).await? {
        let vector = row.vector.as_ref().map(|(s, v)| (s.as_str(), v.as_slice()));
        let Some(evidence) = judge(fact, &row.text, vector) else {
            continue;
        };
        if tombstone(conn, row.id).await?.is_none() {
            continue;
        }
        let reason = evidence.reason(&write.key);
        record_event(
            conn,
            NewEvent {
                event_type: "retire",
                memory_type: "episodic",
                key: &row.id.to_string(),
                old_value: Some(fact.value),
                new_value: Some(&reason),
                source: &write.source,
            },
            now,
            settings.max_events,
        )
        .await?;
    }
    Ok(())
}

/// Bulk-import write: validated and screened like any write (by the rules:
/// its embedding is deferred to the backfill sweep), but an existing
/// active row is never touched.
pub(crate) async fn write_if_absent(
    pool: &SqlitePool,
    settings: &StoreSettings,
    write: SemanticWrite,
    screening: &Screening,
    now: &str,
) -> Result<IfAbsentOutcome, VectorStoreError> {
    let value_json = admit(pool, settings, &write, None, screening, now).await?;
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    if db::fetch_active_semantic(&mut tx, &write.key)
        .await?
        .is_some()
    {
        return Ok(IfAbsentOutcome::Exists);
    }
    let stored = db::upsert_semantic(
        &mut tx,
        &write.key,
        &value_json,
        write.confidence,
        &write.source,
        now,
    )
    .await?;
    audit(&mut tx, settings, "create", &write, None, &value_json, now).await?;
    tx.commit().await?;
    Ok(IfAbsentOutcome::Inserted(stored))
}

/// Tombstones a key and audits the old value.
pub(crate) async fn delete(
    pool: &SqlitePool,
    settings: &StoreSettings,
    key: &str,
    source: &str,
    now: &str,
) -> Result<(), VectorStoreError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let Some(existing) = db::fetch_active_semantic(&mut tx, key).await? else {
        return Err(VectorStoreError::NotFound(key.to_owned()));
    };
    // The agent has the agent's authority: what the user stated stays
    // until the user removes it.
    if source == AGENT && existing.source == USER_EXPLICIT {
        return Err(VectorStoreError::UserOwned(key.to_owned()));
    }
    db::tombstone_semantic(&mut tx, key, now).await?;
    let old_json = existing.value.to_string();
    record_event(
        &mut tx,
        NewEvent {
            event_type: "delete",
            memory_type: MEMORY_TYPE,
            key,
            old_value: Some(&old_json),
            new_value: None,
            source,
        },
        now,
        settings.max_events,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The active row for `key`.
pub(crate) async fn get(pool: &SqlitePool, key: &str) -> Result<SemanticEntry, VectorStoreError> {
    let mut conn = pool.acquire().await?;
    db::fetch_active_semantic(&mut conn, key)
        .await?
        .ok_or_else(|| VectorStoreError::NotFound(key.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(key: &str, value: serde_json::Value) -> SemanticWrite {
        SemanticWrite {
            key: key.into(),
            value,
            confidence: 1.0,
            source: "user_explicit".into(),
        }
    }

    #[test]
    fn a_lesson_is_screened_as_rule_and_negative_lines() {
        let stored = format!("always run the tests{NEGATIVE_SEPARATOR}skip them");
        let lesson = write("lesson.abc", serde_json::json!(stored));
        assert_eq!(
            *screened_value(&lesson),
            serde_json::json!("always run the tests\nskip them")
        );
        // Anything else is screened as stored.
        let fact = write("user.note", serde_json::json!(stored));
        assert_eq!(*screened_value(&fact), fact.value);
        let object = write("lesson.abc", serde_json::json!({"rule": stored}));
        assert_eq!(*screened_value(&object), object.value);
    }
}
