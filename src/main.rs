//! The `kirocrew` binary: parse the command line, run the command, map its
//! outcome to an exit code.

fn main() -> std::process::ExitCode {
    kirocrew::cli::main()
}
