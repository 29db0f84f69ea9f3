//! A daemon for a bench to measure: the real [`Application`] on a free
//! loopback port, serving from its own thread (its own actix system), so
//! the bench drives it from outside through the public surfaces, as a
//! gateway or Claude Code would.

use std::net::SocketAddr;
use std::thread::JoinHandle;

use anyhow::Context;

use crate::config::Settings;
use crate::home::DataHome;
use crate::startup::Application;

/// A running daemon and how to stop it.
pub(super) struct BenchDaemon {
    address: SocketAddr,
    token: String,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: JoinHandle<anyhow::Result<()>>,
}

impl BenchDaemon {
    /// Builds and starts the daemon of `home` with `settings` (its port is
    /// set to 0: a free one).
    pub(super) fn start(home: DataHome, mut settings: Settings) -> anyhow::Result<Self> {
        settings.server.port = 0;
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let app = Application::build(home, settings).await?;
                let _ = ready_tx.send((app.address(), app.token().to_owned()));
                app.run_until_stopped(async move {
                    let _ = stop_rx.await;
                })
                .await
            })
        });
        match ready_rx.recv() {
            Ok((address, token)) => Ok(Self {
                address,
                token,
                stop,
                thread,
            }),
            // The thread ended before it served: its error says why.
            Err(_) => match thread.join() {
                Ok(Err(e)) => Err(e.context("the daemon did not start")),
                _ => anyhow::bail!("the daemon did not start"),
            },
        }
    }

    /// Where it listens.
    pub(super) fn address(&self) -> SocketAddr {
        self.address
    }

    /// Its API token.
    pub(super) fn token(&self) -> &str {
        &self.token
    }

    /// Shuts it down in order and waits for its thread.
    pub(super) fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        match self.thread.join() {
            Ok(result) => result.context("the daemon's shutdown"),
            Err(_) => anyhow::bail!("the daemon thread panicked"),
        }
    }
}
