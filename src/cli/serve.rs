//! `kirocrew serve`: the daemon.

use std::process::ExitCode;

use clap::Args;

use crate::home::DataHome;
use crate::startup::{shutdown_signal, Application};
use crate::telemetry;

/// Options of `kirocrew serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to bind (default: server.bind, 127.0.0.1).
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<String>,
    /// Port (default: server.port; 0 picks a free one).
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
}

/// Runs the daemon until SIGTERM/SIGINT.
pub(super) fn run(home: DataHome, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut loaded = crate::app::builders::load_config(&home)?;
    telemetry::init(loaded.settings.log.format == "json", "info,sqlx=warn");
    for warning in &loaded.warnings {
        tracing::warn!("{warning}");
    }
    if let Some(bind) = args.bind {
        if bind.parse::<std::net::IpAddr>().is_err() {
            anyhow::bail!("--bind {bind:?} is not an IP address");
        }
        loaded.settings.server.bind = bind;
    }
    if let Some(port) = args.port {
        loaded.settings.server.port = port;
    }
    tracing::info!(home = %home.root().display(), "starting kirocrew");
    actix_rt::System::new().block_on(async move {
        let app = Application::build(home, loaded.settings).await?;
        app.run_until_stopped(shutdown_signal()).await
    })?;
    Ok(ExitCode::SUCCESS)
}
