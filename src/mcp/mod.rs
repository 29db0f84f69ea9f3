//! # MCP (issue 15)
//!
//! kirocrew's Model Context Protocol server, built on the official Rust SDK
//! (`rmcp`; no hand-written JSON-RPC). One tool set, two transports:
//!
//! - Streamable HTTP at `/mcp` on the daemon ([`http`]), behind the same
//!   Host/Origin guard and bearer token as `/api`;
//! - stdio through `kirocrew mcp` ([`stdio`]), a thin forwarder to the
//!   daemon's `/mcp` for clients that spawn a command.
//!
//! | tool | does | through |
//! |---|---|---|
//! | `memory_search` | semantic + episodic + Markdown files, one ranked list ([`search`]) | the store's and the files' search |
//! | `memory_remember` | semantic write, source `agent`, confidence required | `write_semantic` (gate, ladder, screening) |
//! | `memory_forget` | tombstone | `delete_semantic` |
//! | `episode_add` | episodic fragment | `write_episodic` |
//! | `learn_add` / `learn_list` / `learn_remove` | lessons | [`crate::app::lessons::teach`], [`crate::app::lessons::remove_lesson`] (as `POST` / `DELETE /api/lessons`) |
//! | `skill_search` | find skills (records nothing) | the skills actor's search |
//! | `skill_read` | a SKILL.md body, counted as a delivery | `SkillLedgerHandle::deliver` |
//! | `context_preview` | session context + receipt for a message | the context builder |
//!
//! Resources: every skill as `skill://<name>`. Every accepted write is
//! also an `mcp_write` audit event with source `mcp` and the client's name
//! ([`calls`]).

pub mod calls;
pub mod http;
pub mod params;
pub mod search;
pub mod server;
pub mod stdio;

pub use http::McpService;
pub use server::KirocrewMcp;
