//! # kirocrew
//!
//! The service shell around `kirocrew-actors`: configuration, the data home,
//! the HTTP API, the CLI and the daemon lifecycle. `main.rs` only parses the
//! command line and calls into [`cli`].
//!
//! Layering: `http` and `cli` talk to actors only through their handles;
//! `error` maps every actor error to an HTTP status and a stable code.

pub mod claude_code;
pub mod cli;
pub mod config;
pub mod console;
pub mod consolidation;
pub mod context;
pub mod daemon_client;
pub mod embedding;
pub mod error;
pub mod home;
pub mod http;
pub mod lessons;
pub mod lifecycle;
pub mod mcp;
pub mod memory_layers;
pub mod migration;
pub mod skills;
pub mod startup;
pub mod telemetry;
