//! The HTTP surface: one file per resource, each with a `config_*` function
//! that registers its routes. Routes talk to actors only through their
//! handles and answer errors only through [`ApiError`].
//!
//! Every request passes the guard ([`crate::app::auth`]: Host, and for
//! state-changing requests Origin and a JSON content type), a body deadline
//! ([`body_timeout`]) and gets a request id ([`request_id`]); everything
//! under `/api` also needs the bearer token. `/healthz` and `/readyz` need
//! no token (systemd and probes have none), but a proper Host header.

pub mod body_timeout;
pub mod channels;
pub mod dashboard;
pub mod extract;
pub mod health;
pub mod hooks;
pub mod lessons;
pub mod linger;
pub mod memory_consolidation;
pub mod memory_embeddings;
pub mod memory_episodic;
pub mod memory_events;
pub mod memory_files;
pub mod memory_quarantine;
pub mod memory_semantic;
pub mod memory_stats;
pub mod memory_transfer;
pub mod request_id;
pub mod resource;
pub mod security;
pub mod session_import;
pub mod sessions;
pub mod skills;

use actix_web::web;

pub use crate::app::AppState;
use crate::config::Settings;
pub use resource::{not_found, resource};

/// Registers every `/api` resource.
pub fn config_api(cfg: &mut web::ServiceConfig, settings: &Settings) {
    memory_semantic::config_semantic(cfg);
    memory_events::config_events(cfg);
    memory_stats::config_stats(cfg);
    memory_transfer::config_transfer(cfg);
    memory_transfer::config_import(cfg, settings.server.import_limit_bytes);
    memory_embeddings::config_embeddings(cfg);
    memory_episodic::config_episodic(cfg);
    memory_quarantine::config_quarantine(cfg);
    lessons::config_lessons(cfg);
    memory_files::config_memory_files(cfg);
    skills::config_skills(cfg);
    security::config_security(cfg);
    hooks::config_hooks(cfg);
    sessions::config_sessions(cfg);
    session_import::config_session_import(cfg, settings.server.import_limit_bytes);
    memory_consolidation::config_consolidation(cfg);
    channels::config_channels(cfg);
}
