//! `kirocrew mcp [--start]`: the MCP server on stdio, for clients that
//! spawn a command (see [`crate::mcp::stdio`]). It needs the running
//! daemon: when none answers it prints one line on stderr and exits 1 at
//! once (an MCP client shows that line), unless `--start` is given, which
//! starts `kirocrew serve` for this data home in the background first and
//! waits for it to answer.

use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

use crate::daemon_client::Daemon;
use crate::home::DataHome;
use crate::mcp::stdio::{serve_stdio, Proxy};

/// How long each request to the daemon may take while checking it.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `--start` waits for the new daemon to answer (a first start
/// verifies the CPU kernels, which can take several seconds).
const START_WAIT: Duration = Duration::from_secs(60);

/// `kirocrew mcp` options.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Start the daemon in the background when none is running.
    #[arg(long)]
    pub start: bool,
}

/// Finds a daemon that answers and accepts our token.
fn answering(home: &DataHome) -> Result<Daemon, String> {
    let daemon = Daemon::discover(home, PROBE_TIMEOUT).map_err(|e| e.to_string())?;
    daemon.probe().map_err(|e| e.to_string())?;
    Ok(daemon)
}

/// Starts `kirocrew serve` for `home`, detached, logging to
/// `daemon.log` in the data home, and waits until it answers.
fn start_daemon(home: &DataHome) -> Result<Daemon, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find kirocrew itself: {e}"))?;
    home.ensure().map_err(|e| e.to_string())?;
    let log_path = home.root().join("daemon.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
    let err_log = log.try_clone().map_err(|e| e.to_string())?;
    let mut command = std::process::Command::new(exe);
    command
        .arg("--home")
        .arg(home.root())
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err_log);
    // Its own session: the daemon outlives this proxy and the client's
    // process group (a client killing us must not kill it).
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start kirocrew serve: {e}"))?;
    let deadline = Instant::now() + START_WAIT;
    loop {
        if let Ok(daemon) = answering(home) {
            return Ok(daemon);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "kirocrew serve exited ({status}) before answering; see {}",
                log_path.display()
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "kirocrew serve did not answer within {}s; see {}",
                START_WAIT.as_secs(),
                log_path.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs the stdio server.
pub(super) fn run(home: DataHome, args: McpArgs) -> anyhow::Result<ExitCode> {
    // stdout is the protocol: logs go to stderr only (telemetry's writer).
    crate::telemetry::init(false, "warn");
    let daemon = match answering(&home) {
        Ok(daemon) => daemon,
        Err(_) if args.start => match start_daemon(&home) {
            Ok(daemon) => daemon,
            Err(why) => {
                eprintln!("kirocrew mcp: {why}");
                return Ok(ExitCode::FAILURE);
            }
        },
        Err(why) => {
            eprintln!("kirocrew mcp: {why} (or run `kirocrew mcp --start`)");
            return Ok(ExitCode::FAILURE);
        }
    };
    let proxy = Proxy::new(
        format!("{}/mcp", daemon.base_url()),
        daemon.token().map(str::to_owned),
    );
    actix_rt::System::new().block_on(serve_stdio(proxy))?;
    Ok(ExitCode::SUCCESS)
}
