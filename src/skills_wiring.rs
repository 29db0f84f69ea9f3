//! The skills actor in the service: its configuration from the data home,
//! `config.json` (`skills.*`) and the environment
//! (`$KIROCREW_PROJECT_DIR`, whose `skills/` wins over every other source).
//! The daemon and the one-shot CLI build it the same way, so both see the
//! same catalog.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::Settings;
use crate::home::DataHome;
use kirocrew_actors::clock::SharedClock;
use kirocrew_actors::security_log::SecurityLogHandle;
use kirocrew_actors::skills::{SkillLedgerHandle, SkillsConfig};
use kirocrew_actors::vector_store::{VectorStoreError, VectorStoreHandle};

/// How long hits wait before the ledger is written (one write per burst).
pub const LEDGER_FLUSH_DELAY: Duration = Duration::from_secs(5);
/// How long a discovered skill list is reused (writes invalidate it).
pub const CATALOG_TTL: Duration = Duration::from_secs(10);

/// `~/x` → the user's home joined with `x`.
fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// The skills actor's configuration.
pub fn skills_config(
    home: &DataHome,
    settings: &Settings,
    clock: SharedClock,
    security_log: Option<SecurityLogHandle>,
) -> SkillsConfig {
    let mut config = SkillsConfig::new(home.root(), clock);
    config.project_dir = std::env::var_os("KIROCREW_PROJECT_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    config.extra_paths = settings
        .skills
        .extra_paths
        .iter()
        .map(|p| expand(p))
        .collect();
    config.max_triggered = settings.skills.max_triggered as usize;
    config.lazy_load = settings.skills.lazy_load;
    config.flush_delay = LEDGER_FLUSH_DELAY;
    config.catalog_ttl = CATALOG_TTL;
    config.sync_bundled = true;
    config.user_home = dirs::home_dir();
    config.security_log = security_log;
    config
}

/// Starts the skills actor on memory.db's quarantine (`store`): a SKILL.md
/// the screen flags is held there for review, and a release writes it back
/// through this actor. How the daemon and every one-shot command that
/// writes or releases skills start it.
pub async fn start_skills(
    home: &DataHome,
    settings: &Settings,
    clock: SharedClock,
    security_log: Option<SecurityLogHandle>,
    store: &VectorStoreHandle,
) -> Result<SkillLedgerHandle, VectorStoreError> {
    let mut config = skills_config(home, settings, clock, security_log);
    config.quarantine = Some(store.clone());
    let skills = SkillLedgerHandle::start(config);
    store.attach_skill_replay(Arc::new(skills.clone())).await?;
    Ok(skills)
}
