//! The command line: `kirocrew serve | memory … | learn … | skills … | hooks … | context … |
//! config … | doctor | embedding status | console | bench … | security … |
//! consolidation … | hook … | install … | uninstall … | mcp`.
//!
//! Every command takes `--home` (else `$KIROCREW_HOME`, else `~/.kiro/crew`).
//! One-shot commands open the same memory.db as a running daemon (WAL lets
//! both read and write) and never download anything. Errors print one
//! `error: …` line to stderr and exit 1; usage errors exit 2. The
//! `consolidation` commands are the exception to "open the same
//! memory.db": they ask the running daemon, which owns that state.

mod bench;
mod bench_compress;
mod bench_console;
mod bench_consolidate;
mod bench_context;
mod bench_hooks;
mod bench_locomo;
mod bench_screening;
pub(crate) mod config_cmd;
mod console;
mod console_line;
mod console_shell;
mod consolidation;
mod context;
pub(crate) mod doctor;
pub(crate) mod embedding;
mod hook;
pub(crate) mod hooks;
mod install;
pub(crate) mod learn;
mod mcp;
pub(crate) mod memory;
mod memory_commands;
mod memory_files;
mod security;
mod security_audit;
mod security_train;
mod serve;
pub(crate) mod skills;
mod skills_commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::{self, LoadedConfig};
use crate::home::DataHome;

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
    Console(console::ConsoleArgs),
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

/// Parses the process arguments and runs the command.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::ProbeCpuModule(args) = &cli.command {
        // A child of ours: nothing but the probe (no data home, no logs).
        let code = kirocrew_actors::embedder::kernels::run_probe(&args.module, &args.types);
        return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
    }
    let command = match cli.command {
        // Pure text filters: no data home, no model, no kernels.
        Command::Security(cmd) if !cmd.needs_home() => return security::run(cmd),
        other => other,
    };
    let home = DataHome::resolve(cli.home)?;
    // Clients of the running daemon and settings editors: no model, no
    // kernels, no store (a hook runs inside the agent's time budget).
    match command {
        Command::Embedding(cmd) => embedding::run(home, cmd),
        Command::Console(args) => console::run(home, args),
        // Reads the log and stored memory: no model, no kernels.
        Command::Security(cmd) => security::run_on_home(home, cmd),
        Command::Hook(cmd) => hook::run(home, cmd),
        Command::Mcp(args) => mcp::run(home, args),
        Command::Consolidation(cmd) => consolidation::run(home, cmd),
        Command::Install(install::IntegrationCommand::ClaudeCode(args)) => {
            install::install(&home, &args, &mut std::io::stdout().lock())
        }
        Command::Uninstall(install::IntegrationCommand::ClaudeCode(args)) => {
            install::uninstall(&home, &args, &mut std::io::stdout().lock())
        }
        other => run_with_kernels(home, other),
    }
}

fn run_with_kernels(home: DataHome, command: Command) -> anyhow::Result<ExitCode> {
    // Every command that may compute embeddings verifies its CPU kernels.
    let kernels = crate::embedding::kernels::install(&home);
    if matches!(command, Command::Serve(_)) {
        // A wrong pin is a configuration error: refuse to start.
        kirocrew_actors::embedder::kernels::check_pin(&kernels).map_err(anyhow::Error::msg)?;
    }
    match command {
        Command::Serve(args) => serve::run(home, args),
        Command::Memory(cmd) => memory::run(home, cmd),
        Command::Config(cmd) => config_cmd::run(home, cmd),
        Command::Doctor(args) => doctor::run(home, args),
        Command::Learn(cmd) => learn::run(home, cmd),
        Command::Skills(cmd) => skills::run(home, cmd),
        Command::Hooks(cmd) => hooks::run(home, cmd),
        Command::Context(cmd) => context::run(home, cmd),
        Command::Bench(cmd) => bench::run(cmd),
        Command::ProbeCpuModule(_)
        | Command::Security(_)
        | Command::Consolidation(_)
        | Command::Hook(_)
        | Command::Mcp(_)
        | Command::Install(_)
        | Command::Uninstall(_)
        | Command::Embedding(_)
        | Command::Console(_) => Ok(ExitCode::SUCCESS),
    }
}

/// Loads the configuration for `home` with the process environment.
pub(crate) fn load_config(home: &DataHome) -> anyhow::Result<LoadedConfig> {
    let loaded = config::load(home.root(), std::env::vars())?;
    for warning in &loaded.warnings {
        tracing::warn!("{warning}");
    }
    Ok(loaded)
}
