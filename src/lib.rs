//! # kirocrew
//!
//! The service shell around `kirocrew-actors`: configuration, the data home,
//! the HTTP API, the CLI and the daemon lifecycle. `main.rs` only parses the
//! command line and calls into [`cli`].
//!
//! Layering (checked by `tests/api/layout.rs`; the README's Development
//! section has the map): shared pieces and the `*_wiring` modules that
//! start actors for the daemon, the app layer ([`app`], [`commands`]), then
//! the faces ([`http`], [`console`], [`mcp`], [`claude_code`], [`cli`],
//! [`tools`]) and [`startup`]. Faces talk to actors only through their
//! handles; [`error`] maps every actor error to an HTTP status and a
//! stable code.

pub mod app;
pub mod claude_code;
pub mod cli;
pub mod commands;
pub mod config;
pub mod console;
pub mod consolidator_wiring;
pub mod context;
pub mod daemon_client;
pub mod embedder_wiring;
pub mod error;
pub mod home;
pub mod http;
pub mod lifecycle;
pub mod mcp;
pub mod memory_layers;
pub mod migration;
pub mod skills_wiring;
pub mod startup;
pub mod telemetry;
pub mod tools;
