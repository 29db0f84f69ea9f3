//! The application layer: what every face of the daemon works on.
//!
//! Faces — the HTTP API ([`crate::http`]), the operator console
//! ([`crate::console`]), MCP ([`crate::mcp`]), the CLI and the Claude Code
//! hook adapter — sit on this layer and never import each other; this layer
//! imports no face. [`AppState::start`] builds the state once and the HTTP
//! server ([`crate::startup`]) mounts the console and MCP services beside the API.
//!
//! - [`state`]: the [`AppState`], every handle in one value;
//! - [`auth`] and [`request_rules`]: the guard every HTTP-served face sits
//!   behind (Host, Origin, content type, the bearer token), and
//!   [`auth_failures`], which records its refusals bounded;
//! - [`builders`]: the actors' configurations and the effective config,
//!   built one way for the daemon and the one-shot commands;
//! - [`console_hub`]: the console's session limit, shutdown bell and
//!   progress sampler (state the console face reads, the server owns);
//! - [`start`]: starting every actor into an [`AppState`], their
//!   background tasks and their ordered stop — where a new capability that
//!   owns state plugs in;
//! - [`lessons`]: the one lesson writer and remover every face calls;
//! - [`limit`]: the one rule for `limit` parameters, for every face.

pub mod auth;
pub mod auth_failures;
pub mod builders;
pub mod console_hub;
pub mod lessons;
pub mod request_rules;
pub mod start;
pub mod state;

pub use state::AppState;

use crate::error::ApiError;

/// Checks a `limit` parameter: absent → `default`, otherwise 1..=`max`.
pub fn limit(value: Option<u32>, default: u32, max: u32) -> Result<u32, ApiError> {
    match value {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ApiError::validation(
            "invalid_limit",
            format!("limit must be between 1 and {max}, got {n}"),
        )),
    }
}
