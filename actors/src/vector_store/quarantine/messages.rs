//! Quarantine messages and their handlers: list, search, release, drop,
//! expire. Release, drop and expiry are `AtomicResponse` (the row and its
//! replayed write change together with nothing interleaved).

use std::sync::Arc;

use actix::prelude::*;
use serde_json::json;
use sqlx::sqlite::SqlitePool;

use super::db;
use super::replay::{ReplayError, SkillReplay};
use super::types::{Held, QuarantineItem, Released};
use crate::clock::format_ts;
use crate::security::redact::redact;
use crate::security_log::{SecurityEvent, SecurityLogHandle};
use crate::vector_store::actor::VectorStore;
use crate::vector_store::audit::{record_event, NewEvent};
use crate::vector_store::episodic::types::EpisodicWrite;
use crate::vector_store::episodic::write::{store, Limits};
use crate::vector_store::error::VectorStoreError;
use crate::vector_store::screening::Screening;
use crate::vector_store::semantic::types::SemanticWrite;
use crate::vector_store::semantic::write::write;
use crate::vector_store::settings::StoreSettings;
use crate::vector_store::space::types::SpaceInfo;

/// The newest items, newest first, with the total held.
#[derive(Debug, Message)]
#[rtype(result = "Result<(Vec<QuarantineItem>, i64), VectorStoreError>")]
pub(crate) struct ListQuarantine {
    /// At most this many.
    pub limit: u32,
}

/// Items whose text holds some of these words (what a search marks).
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<QuarantineItem>, VectorStoreError>")]
pub(crate) struct SearchQuarantine {
    /// Lower-cased words.
    pub words: Vec<String>,
    /// At most this many.
    pub limit: u32,
}

/// Replays an item through its writer with the verdict set aside.
#[derive(Debug, Message)]
#[rtype(result = "Result<Released, VectorStoreError>")]
pub(crate) struct ReleaseQuarantined {
    /// The item.
    pub id: i64,
    /// The person releasing it (audit source, security-event actor).
    pub by: String,
}

/// Deletes an item unread by any prompt.
#[derive(Debug, Message)]
#[rtype(result = "Result<QuarantineItem, VectorStoreError>")]
pub(crate) struct DropQuarantined {
    /// The item.
    pub id: i64,
    /// The person dropping it.
    pub by: String,
}

/// Deletes items held longer than `days` days; returns how many.
#[derive(Debug, Message)]
#[rtype(result = "Result<usize, VectorStoreError>")]
pub(crate) struct ExpireQuarantine {
    /// `security.quarantine_days`.
    pub days: u32,
}

impl Handler<ListQuarantine> for VectorStore {
    type Result = ResponseActFuture<Self, Result<(Vec<QuarantineItem>, i64), VectorStoreError>>;

    fn handle(&mut self, msg: ListQuarantine, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(move |pool, _, _| async move { db::list(&pool, msg.limit).await })
    }
}

impl Handler<SearchQuarantine> for VectorStore {
    type Result = ResponseActFuture<Self, Result<Vec<QuarantineItem>, VectorStoreError>>;

    fn handle(&mut self, msg: SearchQuarantine, _: &mut Context<Self>) -> Self::Result {
        self.concurrent(move |pool, _, _| async move {
            db::matching(&pool, &msg.words, msg.limit).await
        })
    }
}

impl Handler<ReleaseQuarantined> for VectorStore {
    type Result = AtomicResponse<Self, Result<Released, VectorStoreError>>;

    fn handle(&mut self, msg: ReleaseQuarantined, _: &mut Context<Self>) -> Self::Result {
        let space = self.space.clone();
        let screening = Screening {
            released: true,
            ..self.screening()
        };
        let replay = self.skill_replay.clone();
        self.atomic(move |pool, settings, now| async move {
            let to = Writers {
                settings: &settings,
                space: &space,
                screening: &screening,
                skills: replay,
            };
            release(&pool, to, msg, &now).await
        })
    }
}

impl Handler<DropQuarantined> for VectorStore {
    type Result = AtomicResponse<Self, Result<QuarantineItem, VectorStoreError>>;

    fn handle(&mut self, msg: DropQuarantined, _: &mut Context<Self>) -> Self::Result {
        let log = self.security_log.clone();
        self.atomic(move |pool, settings, now| async move {
            let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            let (item, _) = db::get(&mut tx, msg.id)
                .await?
                .ok_or(VectorStoreError::QuarantineNotFound(msg.id))?;
            db::delete(&mut tx, msg.id).await?;
            audit(&mut tx, "quarantine_drop", &item, &msg.by, &settings, &now).await?;
            tx.commit().await?;
            report(log.as_ref(), "quarantine_drop", "dropped", &item, &msg.by);
            Ok(item)
        })
    }
}

impl Handler<ExpireQuarantine> for VectorStore {
    type Result = AtomicResponse<Self, Result<usize, VectorStoreError>>;

    fn handle(&mut self, msg: ExpireQuarantine, _: &mut Context<Self>) -> Self::Result {
        let cutoff = format_ts(self.clock.now() - chrono::Duration::days(i64::from(msg.days)));
        self.atomic(move |pool, settings, now| async move {
            let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            let gone = db::expire(&mut tx, &cutoff).await?;
            let by = format!("quarantine_days={}", msg.days);
            for item in &gone {
                audit(&mut tx, "quarantine_expire", item, &by, &settings, &now).await?;
            }
            tx.commit().await?;
            Ok(gone.len())
        })
    }
}

/// What a release replays a held write through.
struct Writers<'a> {
    settings: &'a StoreSettings,
    space: &'a SpaceInfo,
    screening: &'a Screening,
    /// The skills actor, for a held skill.
    skills: Option<Arc<dyn SkillReplay>>,
}

/// Replays the held write, then removes the item (both audited). The item
/// stays when the write fails (a conflict, a duplicate, a full store, a
/// skill name taken meanwhile), so nothing is lost and the reviewer sees
/// why.
async fn release(
    pool: &SqlitePool,
    to: Writers<'_>,
    msg: ReleaseQuarantined,
    now: &str,
) -> Result<Released, VectorStoreError> {
    let Writers {
        settings,
        space,
        screening,
        skills,
    } = to;
    let (item, held) = {
        let mut conn = pool.acquire().await?;
        db::get(&mut conn, msg.id)
            .await?
            .ok_or(VectorStoreError::QuarantineNotFound(msg.id))?
    };
    let mut released = Released {
        id: item.id,
        layer: item.layer.clone(),
        key: None,
        episode_id: None,
    };
    match held {
        Held::Semantic {
            key,
            value,
            confidence,
            source,
        } => {
            let w = SemanticWrite {
                key: key.clone(),
                value,
                confidence,
                source,
            };
            write(pool, settings, w, None, space, screening, now).await?;
            released.key = Some(key);
        }
        Held::Episodic {
            text,
            tags,
            importance,
            source,
            created_at,
            preserve,
        } => {
            let w = EpisodicWrite {
                tags,
                importance,
                created_at,
                preserve,
                defer_embedding: true,
                ..EpisodicWrite::new(text, source)
            };
            let limits = Limits {
                max: settings.episodic_max,
                max_events: settings.max_events,
            };
            let id = store(pool, w, None, None, limits, screening, now).await?;
            released.episode_id = Some(id);
        }
        Held::Skill {
            name,
            content,
            create,
            ..
        } => {
            replay_skill(skills, item.id, &name, content, create).await?;
            released.key = Some(name);
        }
    }
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    db::delete(&mut tx, item.id).await?;
    audit(&mut tx, "quarantine_release", &item, &msg.by, settings, now).await?;
    tx.commit().await?;
    report(
        screening.log.as_ref(),
        "quarantine_release",
        "released",
        &item,
        &msg.by,
    );
    Ok(released)
}

/// Writes a held skill through the skills actor (`replay.rs`).
async fn replay_skill(
    skills: Option<Arc<dyn SkillReplay>>,
    id: i64,
    name: &str,
    content: String,
    create: bool,
) -> Result<(), VectorStoreError> {
    let skills = skills.ok_or_else(|| {
        VectorStoreError::Unavailable("no skills writer is attached to release a held skill".into())
    })?;
    skills
        .replay(name.to_owned(), content, create)
        .await
        .map_err(|e| match e {
            ReplayError::Refused(reason) => VectorStoreError::ReleaseRefused { id, reason },
            ReplayError::Unavailable(why) => VectorStoreError::Unavailable(why),
        })
}

/// The audit event of a release, drop or expiry.
async fn audit(
    conn: &mut sqlx::SqliteConnection,
    event_type: &str,
    item: &QuarantineItem,
    by: &str,
    settings: &StoreSettings,
    now: &str,
) -> Result<(), VectorStoreError> {
    let key = item.key.clone().unwrap_or_else(|| item.id.to_string());
    let event = NewEvent {
        event_type,
        memory_type: &item.layer,
        key: &key,
        old_value: Some(&redact(&item.text)),
        new_value: Some(&format!("quarantine item {} (rule {})", item.id, item.rule)),
        source: by,
    };
    record_event(conn, event, now, settings.max_events).await
}

/// The security event of a human's release or drop.
fn report(
    log: Option<&SecurityLogHandle>,
    category: &str,
    outcome: &str,
    item: &QuarantineItem,
    by: &str,
) {
    if let Some(log) = log {
        log.record_later(SecurityEvent::new(
            category,
            by,
            outcome,
            json!({
                "id": item.id,
                "memory_type": item.layer,
                "key": item.key,
                "rule": item.rule,
                "category": item.category,
                "source": item.source,
                "snippet": redact(&item.text),
            }),
        ));
    }
}
