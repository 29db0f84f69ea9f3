//! The CLI's grammar: [`Cli`] and its [`Command`]s (clap), apart from the
//! dispatch in `cli/mod.rs`, so the operator shell's line parser
//! (`console_line`) reads the same grammar without importing the dispatch.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use super::{consolidation, context, hook, install, mcp, security, serve};
use crate::commands::{config_cmd, doctor, embedding, hooks, learn, memory, skills};
use crate::tools::bench;

/// kirocrew: memory, skills and hooks for AI agents.
#[derive(Debug, Parser)]
#[command(name = "kirocrew", version, about)]
pub struct Cli {
    /// Data home (default: $KIROCREW_HOME, else ~/.kiro/crew).
    #[arg(long, global = true, env = "KIROCREW_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the daemon (HTTP API on 127.0.0.1).
    Serve(serve::ServeArgs),
    /// Inspect and manage long-term memory.
    #[command(subcommand)]
    Memory(memory::MemoryCommand),
    /// Read or change configuration.
    #[command(subcommand)]
    Config(config_cmd::ConfigCommand),
    /// Check the installation and the data home.
    Doctor(doctor::DoctorArgs),
    /// Teach, list and remove lessons (learned corrections).
    #[command(subcommand)]
    Learn(learn::LearnCommand),
    /// List, search, create and edit skills; see what they cost.
    #[command(subcommand)]
    Skills(skills::SkillsCommand),
    /// Preview the context a session would get, with its receipt.
    #[command(subcommand)]
    Context(context::ContextCommand),
    /// Show and test hooks (config rules and script hooks).
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    /// The running daemon's embedding model and its progress.
    #[command(subcommand)]
    Embedding(embedding::EmbeddingCommand),
    /// The operator shell on the running daemon's websocket console.
    Console(ConsoleArgs),
    /// Measure performance.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Answer an agent's hook event (`hook claude-code`: Claude Code's hook
    /// JSON on stdin, the answer on stdout).
    #[command(subcommand)]
    Hook(hook::HookCommand),
    /// Wire kirocrew into an agent (`install claude-code`: hooks + MCP server).
    #[command(subcommand)]
    Install(install::IntegrationCommand),
    /// Remove exactly what `install` added.
    #[command(subcommand)]
    Uninstall(install::IntegrationCommand),
    /// The MCP server on stdin/stdout, forwarding to the running daemon
    /// (`--start` starts one when none answers).
    Mcp(mcp::McpArgs),
    /// Show the running daemon's consolidation state, or consolidate a
    /// session now.
    #[command(subcommand)]
    Consolidation(consolidation::ConsolidationCommand),
    /// Screen text for prompt injection, redact credentials (stdin → stdout),
    /// show security events, audit stored memory.
    #[command(subcommand)]
    Security(security::SecurityCommand),
    /// Verify one llama.cpp CPU module on this CPU (kirocrew runs this as a
    /// child process before computing with a module; not for people).
    #[command(name = "probe-cpu-module", hide = true)]
    ProbeCpuModule(ProbeArgs),
}

/// `kirocrew probe-cpu-module` arguments.
#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    /// The module file to load (exactly this one).
    #[arg(long)]
    pub module: PathBuf,
    /// ggml weight types to multiply (`q8_0,f16`).
    #[arg(long, value_delimiter = ',')]
    pub types: Vec<String>,
}

/// `kirocrew console` options.
#[derive(Debug, clap::Args)]
pub struct ConsoleArgs {
    /// Run one command (CLI syntax, e.g. "memory search deploy") and exit.
    #[arg(long, value_name = "LINE", conflicts_with = "follow")]
    pub exec: Option<String>,
    /// Print a live stream until interrupted: audit, security, progress, log.
    #[arg(long, value_name = "STREAM")]
    pub follow: Option<String>,
    /// The level of `--follow log`: error, warn, info, debug.
    #[arg(long, default_value = "info", requires = "follow")]
    pub level: String,
}
