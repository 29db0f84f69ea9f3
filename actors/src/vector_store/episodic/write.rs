//! The episodic write path (spec: "Episodic Memory"): length, control
//! character and injection checks, the exact-duplicate hash, near-duplicate
//! merging, the capacity cap (each eviction audited), and the insert — one
//! IMMEDIATE transaction, run by the actor's
//! `WriteEpisodic` handler with the mailbox held.
//!
//! Near-duplicates (cosine > 0.88 to an active row) are merged, not
//! refused, when the new write supersedes its twin ([`supersedes`]): the
//! twin is tombstoned with a `merge` audit event naming the new row, and
//! the new row keeps the higher importance and the union of tags.
//! Consolidation refreshes memories this way. A weaker copy is refused as
//! a duplicate, and so is any near-duplicate in import preservation mode.

use chrono::{DateTime, Utc};
use sqlx::sqlite::SqlitePool;

use super::db::{self, NewEpisode};
use super::mirror::MirrorEpisode;
use super::rank::sanitize_tags;
use super::types::{content_hash, EpisodicEntry, EpisodicWrite, MAX_TEXT_CHARS, MIN_TEXT_CHARS};
use crate::clock::format_ts;
use crate::control_chars::check_text;
use crate::security::screen::screen;
use crate::vector_store::audit::{record_event, NewEvent};
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::quarantine::types::Held;
use crate::vector_store::refusal::{enforce, Blocked};
use crate::vector_store::screening::Screening;
use crate::vector_store::space::types::CommitVector;

/// The store's bounds a write honours.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Active fragments kept.
    pub max: u64,
    /// Audit events kept.
    pub max_events: u32,
}

/// What a near-duplicate comparison looks at, for the incoming write and
/// for the active row it resembles.
#[derive(Debug, Clone, Copy)]
pub(super) struct Standing {
    /// Length of the text in characters.
    pub chars: usize,
    /// When it happened.
    pub created: DateTime<Utc>,
    /// Importance in [0, 1].
    pub importance: f64,
}

/// Whether a near-duplicate write replaces the active row it resembles
/// instead of being refused: it says more (longer), is more recent, or
/// matters more. Consolidation refreshes a memory by writing it again, so
/// the newer statement of a fact wins; a write that is none of these
/// (an older, shorter, less important copy, e.g. a re-imported one) adds
/// nothing and is refused.
pub(super) fn supersedes(new: Standing, old: Standing) -> bool {
    new.chars > old.chars || new.created > old.created || new.importance > old.importance
}

/// The union of two tag lists, `first`'s order first, then `second`'s
/// additions, sanitized and bounded like any tag list.
pub(super) fn union_tags(first: &[String], second: &[String]) -> Vec<String> {
    let all: Vec<String> = first.iter().chain(second).cloned().collect();
    sanitize_tags(&all)
}

/// What to do about an active near-duplicate of a write.
#[derive(Debug)]
pub(super) enum NearDuplicate {
    /// The write supersedes this row: store it, tombstone the row.
    Replaces(EpisodicEntry),
    /// The write adds nothing over the row with this id.
    Refused(i64),
}

/// Decides between merging and refusing, given the active twin.
pub(super) fn near_duplicate(
    write: &EpisodicWrite,
    twin: &MirrorEpisode,
    now: DateTime<Utc>,
) -> NearDuplicate {
    let new = Standing {
        chars: write.text.trim().chars().count(),
        created: write.created_at.unwrap_or(now),
        importance: write.importance,
    };
    let old = Standing {
        chars: twin.entry.text.chars().count(),
        created: twin.created,
        importance: twin.entry.importance,
    };
    if !write.preserve && supersedes(new, old) {
        NearDuplicate::Replaces(twin.entry.clone())
    } else {
        NearDuplicate::Refused(twin.entry.id)
    }
}

/// Checks length and control characters; returns the trimmed text.
pub(super) fn validate_text(text: &str) -> Result<String, VectorStoreError> {
    let trimmed = text.trim();
    check_text("text", trimmed)?;
    let chars = trimmed.chars().count();
    if !(MIN_TEXT_CHARS..=MAX_TEXT_CHARS).contains(&chars) {
        return Err(VectorStoreError::InvalidText(format!(
            "text is {chars} characters; it must be {MIN_TEXT_CHARS} to {MAX_TEXT_CHARS}"
        )));
    }
    Ok(trimmed.to_owned())
}

/// Stores one fragment. `vector` is its vector with the signature of the
/// current space (none when it has none, or one of a superseded space); it
/// is stored with the row and feeds the similarity screen.
pub(crate) async fn store(
    pool: &SqlitePool,
    write: EpisodicWrite,
    vector: Option<(CommitVector, String)>,
    merge: Option<EpisodicEntry>,
    limits: Limits,
    screening: &Screening,
    now: &str,
) -> Result<i64, VectorStoreError> {
    let Limits { max, max_events } = limits;
    let text = validate_text(&write.text)?;
    for tag in &write.tags {
        check_text("tags", tag)?;
    }
    let vector = vector
        .as_ref()
        .map(|(v, s)| (v.vector.as_slice(), s.as_str()));
    let verdict = screening.judge(screen(&text), vector);
    if verdict.blocked {
        let blocked = Blocked {
            memory_type: "episodic",
            key: "",
            source: &write.source,
            text: &text,
        };
        let held = || Held::Episodic {
            text: text.clone(),
            tags: write.tags.clone(),
            importance: write.importance,
            source: write.source.clone(),
            created_at: write.created_at,
            preserve: write.preserve,
        };
        enforce(pool, &verdict, blocked, held, screening, now, max_events).await?;
    }
    let hash = content_hash(&text);
    let mut importance = if write.importance.is_finite() {
        write.importance.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let mut tags = sanitize_tags(&write.tags);
    if let Some(old) = &merge {
        importance = importance.max(old.importance);
        tags = union_tags(&tags, &old.tags);
    }
    let tags = serde_json::to_string(&tags).unwrap_or_else(|_| "[]".into());
    let created_at = write.created_at.map_or_else(|| now.to_owned(), format_ts);
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    if let Some(id) = db::active_by_hash(&mut tx, &hash).await? {
        return Err(VectorStoreError::DuplicateEpisode { id });
    }
    // The replaced twin goes first, so it never costs a capacity slot. A
    // twin tombstoned meanwhile (by another process) has nothing to merge.
    let merged = match &merge {
        Some(old) => db::tombstone_in(&mut tx, old.id).await?.then_some(old),
        None => None,
    };
    // Capacity check and insert share one IMMEDIATE transaction, so two
    // writers (or processes) cannot both take the last slot.
    let active = db::count_active(&mut tx).await?;
    if active >= max {
        if write.preserve {
            return Err(VectorStoreError::EpisodicFull { max });
        }
        let evicted = db::evict(&mut tx, active + 1 - max).await?;
        tracing::info!(
            count = evicted.len(),
            "episodic cap reached; evicted least important, oldest"
        );
        // Each eviction is audited in the write's transaction, attributed
        // to the writer whose fragment took the slot.
        let reason = format!("episodic cap of {max} active fragments reached");
        for (id, old_text) in &evicted {
            record_event(
                &mut tx,
                NewEvent {
                    event_type: "evict",
                    memory_type: "episodic",
                    key: &id.to_string(),
                    old_value: Some(old_text),
                    new_value: Some(&reason),
                    source: &write.source,
                },
                now,
                max_events,
            )
            .await?;
        }
    }
    let id = db::insert(
        &mut tx,
        NewEpisode {
            text: &text,
            tags_json: &tags,
            importance,
            hash: &hash,
            source: &write.source,
            created_at: &created_at,
            vector,
        },
    )
    .await?;
    if let Some(old) = merged {
        let into = id.to_string();
        record_event(
            &mut tx,
            NewEvent {
                event_type: "merge",
                memory_type: "episodic",
                key: &old.id.to_string(),
                old_value: Some(&old.text),
                new_value: Some(&into),
                source: &write.source,
            },
            now,
            max_events,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standing(chars: usize, day: u32, importance: f64) -> Standing {
        use chrono::TimeZone;
        Standing {
            chars,
            created: chrono::Utc
                .with_ymd_and_hms(2026, 5, day, 12, 0, 0)
                .unwrap(),
            importance,
        }
    }

    #[test]
    fn a_longer_newer_or_more_important_near_duplicate_supersedes() {
        let old = standing(40, 10, 0.5);
        assert!(supersedes(standing(41, 10, 0.5), old), "longer");
        assert!(supersedes(standing(40, 11, 0.5), old), "newer");
        assert!(supersedes(standing(40, 10, 0.6), old), "more important");
        assert!(
            !supersedes(standing(40, 10, 0.5), old),
            "identical standing"
        );
        assert!(
            !supersedes(standing(30, 9, 0.4), old),
            "weaker on every count"
        );
    }

    #[test]
    fn merged_tags_are_the_union_in_order() {
        let a = vec!["travel".to_owned(), "Family Trip".to_owned()];
        let b = vec!["family-trip".to_owned(), "lisbon".to_owned()];
        assert_eq!(union_tags(&a, &b), vec!["travel", "family-trip", "lisbon"]);
    }
}
