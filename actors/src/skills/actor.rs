//! The `SkillLedger` actor: owner of `skill-usage.json` (the usage ledger)
//! and of the skill catalog beside it (discovery and frontmatter caches,
//! which every write invalidates). Its protocol is in `messages.rs` and
//! `context_messages.rs`.
//!
//! Hits are recorded in memory and flushed after `flush_delay` (one write
//! per burst, atomic), and on stop. The actor runs on its own arbiter:
//! discovery and body reads are synchronous file I/O.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use actix::prelude::*;
use lru::LruCache;

use super::budget::canonical_keys;
use super::catalog::{Catalog, CatalogRoots};
use super::context::body_of;
use super::crediting::ServedSkill;
use super::error::{io_error, SkillError};
use super::ledger::Ledger;
use super::types::{CatalogEntry, SkillBody, SkillInfo};
use crate::clock::SharedClock;
use crate::security_log::{SecurityEvent, SecurityLogHandle};
use crate::vector_store::VectorStoreHandle;

/// Tool calls remembered between phase one and phase two, and completed
/// calls remembered for dedupe.
const TOOL_CALL_MEMORY: usize = 4_096;

/// How to start the skills actor.
#[derive(Clone)]
pub struct SkillsConfig {
    /// The data home's `skills/` (owned; bundled skills are copied here).
    pub skills_dir: PathBuf,
    /// `skill-usage.json` in the data home.
    pub usage_file: PathBuf,
    /// `$KIROCREW_PROJECT_DIR` (its `skills/` wins over everything).
    pub project_dir: Option<PathBuf>,
    /// `skills.extra_paths`.
    pub extra_paths: Vec<PathBuf>,
    /// `skills.max_triggered` (0: the trigger matcher is off).
    pub max_triggered: usize,
    /// `skills.lazy_load`.
    pub lazy_load: bool,
    /// Debounce of the ledger's writes.
    pub flush_delay: Duration,
    /// How long a discovered list is reused.
    pub catalog_ttl: Duration,
    /// Copy/re-sync the bundled skills on start (the daemon and CLI: yes).
    pub sync_bundled: bool,
    /// The user's home directory, for `~/` in tool-call paths.
    pub user_home: Option<PathBuf>,
    /// Time source for hits and TTLs.
    pub clock: SharedClock,
    /// Where the toggle's outcomes and trigger matches are recorded
    /// (`None`: to the tracing log only, for one-shot tools and tests).
    pub security_log: Option<SecurityLogHandle>,
    /// Where a flagged SKILL.md is held for review (memory.db's
    /// quarantine; `None`: a flagged write is refused with
    /// `ReviewUnavailable`, for tools started without memory.db).
    pub quarantine: Option<VectorStoreHandle>,
}

impl SkillsConfig {
    /// The defaults for a data home at `home` (`skills/`,
    /// `skill-usage.json`): no project or extra roots, triggers off, full
    /// index, a 5 s flush debounce, a 10 s catalog TTL, no bundled sync, no
    /// security log. Callers change the fields they need.
    pub fn new(home: &std::path::Path, clock: SharedClock) -> Self {
        Self {
            skills_dir: home.join("skills"),
            usage_file: home.join(super::ledger::USAGE_FILE),
            project_dir: None,
            extra_paths: Vec::new(),
            max_triggered: 0,
            lazy_load: false,
            flush_delay: Duration::from_secs(5),
            catalog_ttl: Duration::from_secs(10),
            sync_bundled: false,
            user_home: None,
            clock,
            security_log: None,
            quarantine: None,
        }
    }
}

/// The actor. Start it with `SkillLedgerHandle::start`.
pub(crate) struct SkillLedger {
    pub(super) config: SkillsConfig,
    pub(super) catalog: Catalog,
    pub(super) ledger: Ledger,
    pub(super) flush_scheduled: Option<SpawnHandle>,
    pub(super) pending_reads: LruCache<String, Vec<String>>,
    pub(super) credited_calls: LruCache<String, ()>,
    pub(super) real_paths: Option<(u64, HashMap<String, PathBuf>)>,
}

impl SkillLedger {
    pub(super) fn new(config: SkillsConfig) -> Self {
        let roots = CatalogRoots {
            home: config.skills_dir.clone(),
            project: config.project_dir.as_ref().map(|p| p.join("skills")),
            extra: config.extra_paths.clone(),
            bundled: super::bundled::bundled_names().map(str::to_owned).collect(),
        };
        let ledger = Ledger::load(&config.usage_file, config.clock.now());
        let memory = NonZeroUsize::new(TOOL_CALL_MEMORY).unwrap_or(NonZeroUsize::MIN);
        Self {
            catalog: Catalog::new(roots, config.catalog_ttl),
            ledger,
            flush_scheduled: None,
            pending_reads: LruCache::new(memory),
            credited_calls: LruCache::new(memory),
            real_paths: None,
            config,
        }
    }

    /// A listing row for `e`.
    pub(super) fn info(&self, e: &CatalogEntry) -> SkillInfo {
        SkillInfo {
            name: e.name.clone(),
            declared_name: e.meta.name.clone(),
            description: e.meta.description.clone(),
            source: e.source,
            always: e.meta.always,
            triggers: e.meta.triggers.clone(),
            inject_on_trigger: e.meta.inject_on_trigger,
            size_bytes: e.size_bytes,
            deliveries: self.ledger.get(&e.name).map(|x| x.hits),
            owned: e.owned,
            dir: e.dir.display().to_string(),
            path: e.path.display().to_string(),
            parsed_with: e.meta.parsed_with,
            error: e.meta.error.clone(),
        }
    }

    /// The body of `e` for a prompt.
    pub(super) fn load_body(e: &CatalogEntry) -> Result<SkillBody, SkillError> {
        let bytes = std::fs::read(&e.path).map_err(io_error(&e.path))?;
        let text = String::from_utf8_lossy(&bytes);
        Ok(SkillBody {
            name: e.name.clone(),
            path: e.path.display().to_string(),
            dir: e.dir.display().to_string(),
            body: body_of(&text),
        })
    }

    /// Counts a delivery of each of `keys` and schedules a flush.
    pub(super) fn record(&mut self, keys: &[String], ctx: &mut Context<Self>) -> usize {
        let now = self.config.clock.now();
        let recorded = keys.iter().filter(|k| self.ledger.record(k, now)).count();
        if recorded > 0 && self.flush_scheduled.is_none() {
            let delay = self.config.flush_delay;
            self.flush_scheduled = Some(ctx.run_later(delay, |act, _| {
                act.flush_scheduled = None;
                act.flush();
            }));
        }
        recorded
    }

    /// Writes the ledger now if it changed.
    pub(super) fn flush(&mut self) -> bool {
        match self.ledger.flush(self.config.clock.now()) {
            Ok(wrote) => wrote,
            Err(e) => {
                tracing::warn!(error = %e, "could not write skill-usage.json; retried on the next hit");
                false
            }
        }
    }

    /// Each live skill's SKILL.md with symlinks resolved, cached per
    /// catalog generation (one resolution per skill, off the listing path).
    pub(super) fn real_paths(
        &mut self,
    ) -> (std::sync::Arc<Vec<CatalogEntry>>, HashMap<String, PathBuf>) {
        let generation = self.catalog.generation();
        let entries = self.catalog.entries();
        if let Some((g, map)) = &self.real_paths {
            if *g == generation {
                return (entries, map.clone());
            }
        }
        let map: HashMap<String, PathBuf> = entries
            .iter()
            .filter_map(|e| e.path.canonicalize().ok().map(|p| (e.name.clone(), p)))
            .collect();
        self.real_paths = Some((generation, map.clone()));
        (entries, map)
    }

    /// The served skills as the read resolver sees them.
    pub(super) fn served(&mut self) -> Vec<ServedSkill> {
        let (entries, real) = self.real_paths();
        let canonical = canonical_keys(&entries, &real);
        entries
            .iter()
            .map(|e| ServedSkill {
                name: e.name.clone(),
                path: e.path.clone(),
                real_path: real.get(&e.name).cloned(),
                canonical: canonical
                    .get(&e.name)
                    .cloned()
                    .unwrap_or_else(|| e.name.clone()),
            })
            .collect()
    }

    /// Drops every cached view after a write.
    pub(super) fn invalidate(&mut self) {
        self.catalog.invalidate();
        self.real_paths = None;
    }

    /// Records a security event without waiting (the log's mailbox keeps
    /// the order); without a log, the tracing log gets it.
    pub(super) fn security_event(
        &self,
        category: &str,
        actor: &str,
        outcome: &str,
        detail: serde_json::Value,
    ) {
        match &self.config.security_log {
            Some(log) => log.record_later(SecurityEvent::new(category, actor, outcome, detail)),
            None => {
                tracing::info!(target: "security", category, actor, outcome, detail = %detail, "security event")
            }
        }
    }
}

impl Actor for SkillLedger {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Self::Context) {
        if self.config.sync_bundled {
            match super::bundled::sync(&self.config.skills_dir, super::bundled::BUNDLED) {
                Ok(report) => tracing::debug!(?report, "bundled skills synced"),
                Err(e) => tracing::warn!(error = %e, "could not sync the bundled skills"),
            }
        }
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.flush();
    }
}
