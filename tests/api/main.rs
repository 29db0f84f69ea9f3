//! Integration tests: the real server on 127.0.0.1:0 with a temporary data
//! home, driven over HTTP like a client would (and the real binary for
//! signals, systemd notification and the CLI).

mod auth;
mod bench_loop;
mod channels;
#[path = "../../actors/tests/common/chat_server.rs"]
mod chat_server;
mod claude_code;
mod cli;
mod config;
mod console;
mod console_cli;
mod console_streams;
mod consolidation;
mod consolidation_cli;
mod consolidation_model;
mod cpu_modules;
mod dashboard;
mod embeddings;
mod episodic;
mod errors;
mod helpers;
mod hooks;
mod layout;
mod lessons;
mod lifecycle;
mod mcp;
mod mcp_python;
mod memory_files;
mod model_server;
mod quarantine;
mod security;
mod security_cli;
mod security_log;
mod semantic;
mod sessions;
mod sessions_layers;
mod skill_screening;
mod skills;
mod text_safety;
mod transport;
mod trust_reads;
