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

mod args;
mod console;
mod console_line;
mod console_shell;
mod consolidation;
mod context;
mod hook;
mod install;
mod mcp;
mod security;
mod security_audit;
mod serve;

use std::process::ExitCode;

use clap::Parser;

use crate::commands::{config_cmd, doctor, embedding, hooks, learn, memory, skills};
use crate::home::DataHome;
pub use args::{Cli, Command, ProbeArgs};

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
    let kernels = crate::embedder_wiring::kernels::install(&home);
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
        Command::Bench(cmd) => crate::tools::bench::run(cmd),
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The console decides about every CLI command: its grammar offers the
    /// group with the CLI's very subcommands, or `CLI_ONLY` refuses it.
    #[test]
    fn every_cli_command_is_offered_by_the_console_or_refused_by_name() {
        use crate::console::argv::{ConsoleCli, CLI_ONLY};
        let cli = Cli::command();
        let console = ConsoleCli::command();
        for sub in cli.get_subcommands() {
            let name = sub.get_name();
            match console.find_subcommand(name) {
                Some(shared) => {
                    let names = |c: &clap::Command| {
                        c.get_subcommands()
                            .map(|s| s.get_name().to_owned())
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(names(sub), names(shared), "{name}");
                    assert!(!CLI_ONLY.contains(&name), "{name} is both");
                }
                None => assert!(
                    CLI_ONLY.contains(&name),
                    "the console says nothing of `{name}`"
                ),
            }
        }
        for name in CLI_ONLY {
            assert!(
                cli.find_subcommand(name).is_some(),
                "{name} is no CLI command"
            );
        }
    }
}
