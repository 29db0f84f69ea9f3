//! Talking to the running daemon from a short-lived command.
//!
//! The daemon is the single owner of memory.db and the episodic index, so
//! commands that act *for an agent* (the MCP stdio server, the Claude Code
//! hook adapter, the operator console) do not open the store themselves:
//! they find the daemon through the record it writes at start
//! (`daemon.json`: address and pid) and the API token beside it, and speak
//! HTTP to it. This module is that one way in, so every such command reports
//! "no daemon" and "wrong token" in the same words.
//!
//! Blocking on purpose (ureq): its callers are one-shot processes with one
//! request in flight, where an async runtime would only add start-up time.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;

use crate::home::DataHome;
use crate::lifecycle;

/// Largest response body read from the daemon (context blocks are a few
/// hundred KiB at most; anything larger is a fault, not data).
const MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

/// Why a request to the daemon did not produce an answer.
#[derive(Debug, thiserror::Error)]
pub enum DaemonClientError {
    /// No `daemon.json` in the data home: no daemon was started there (or
    /// it stopped cleanly).
    #[error("no kirocrew daemon is running for {home} (start one with `kirocrew serve`)")]
    NotRunning {
        /// The data home looked in.
        home: String,
    },
    /// The record names an address nobody answers on (a daemon that was
    /// killed leaves its record behind).
    #[error("the kirocrew daemon at {address} does not answer ({reason}); start one with `kirocrew serve`")]
    Unreachable {
        /// The recorded address.
        address: String,
        /// What the connection attempt said.
        reason: String,
    },
    /// The daemon refused the token (401).
    #[error("the kirocrew daemon at {address} refused the API token in {token_file}")]
    BadToken {
        /// The daemon's address.
        address: String,
        /// The token file that was read.
        token_file: String,
    },
    /// The daemon answered with an error status.
    #[error("{code}: {message} (HTTP {status})")]
    Api {
        /// HTTP status.
        status: u16,
        /// The stable error code from the body (`error.code`).
        code: String,
        /// The human message from the body.
        message: String,
    },
    /// The answer could not be read as JSON.
    #[error("unreadable answer from the daemon: {0}")]
    Decode(String),
}

/// A running daemon: where it listens and the token to show it.
#[derive(Debug, Clone)]
pub struct Daemon {
    address: SocketAddr,
    token: Option<String>,
    token_file: String,
    agent: ureq::Agent,
}

impl Daemon {
    /// Finds the daemon of `home` from its record, without contacting it.
    pub fn discover(home: &DataHome, timeout: Duration) -> Result<Self, DaemonClientError> {
        let not_running = || DaemonClientError::NotRunning {
            home: home.root().display().to_string(),
        };
        let record = lifecycle::read_daemon_record(home).ok_or_else(not_running)?;
        let address: SocketAddr = record.address.parse().map_err(|_| not_running())?;
        Ok(Self::at(
            address,
            home.read_token(),
            home.token_file().display().to_string(),
            timeout,
        ))
    }

    /// A client for a daemon at a known address (tests, `--start`).
    pub fn at(
        address: SocketAddr,
        token: Option<String>,
        token_file: String,
        timeout: Duration,
    ) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .user_agent(concat!("kirocrew/", env!("CARGO_PKG_VERSION")))
            .timeout_global(Some(timeout))
            .build()
            .new_agent();
        Self {
            address,
            token,
            token_file,
            agent,
        }
    }

    /// `http://ip:port` of the daemon.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The daemon's address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The API token read from the data home, if there is one.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Checks that the daemon answers and accepts the token (`GET
    /// /api/memory/stats` needs both; `/healthz` would prove only the first).
    pub fn probe(&self) -> Result<(), DaemonClientError> {
        self.get_json("/api/memory/stats").map(|_| ())
    }

    /// `GET path` → the JSON body of a 2xx answer.
    pub fn get_json(&self, path: &str) -> Result<Value, DaemonClientError> {
        let url = format!("{}{path}", self.base_url());
        let mut request = self.agent.get(&url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        self.finish(request.call())
    }

    /// `POST path` with a JSON body → the JSON body of a 2xx answer.
    pub fn post_json(&self, path: &str, body: &Value) -> Result<Value, DaemonClientError> {
        let url = format!("{}{path}", self.base_url());
        let mut request = self.agent.post(&url).content_type("application/json");
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let bytes =
            serde_json::to_vec(body).map_err(|e| DaemonClientError::Decode(e.to_string()))?;
        self.finish(request.send(&bytes[..]))
    }

    fn finish(
        &self,
        sent: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Value, DaemonClientError> {
        let mut response = sent.map_err(|e| DaemonClientError::Unreachable {
            address: self.address.to_string(),
            reason: e.to_string(),
        })?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_vec()
            .map_err(|e| DaemonClientError::Unreachable {
                address: self.address.to_string(),
                reason: e.to_string(),
            })?;
        if status == 401 {
            return Err(DaemonClientError::BadToken {
                address: self.address.to_string(),
                token_file: self.token_file.clone(),
            });
        }
        let body: Value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| DaemonClientError::Decode(e.to_string()))?
        };
        if (200..300).contains(&status) {
            return Ok(body);
        }
        Err(api_error(status, &body))
    }
}

/// The `{"error": {"code", "message"}}` of an error answer (pure).
fn api_error(status: u16, body: &Value) -> DaemonClientError {
    let field = |name: &str| {
        body.pointer(&format!("/error/{name}"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    DaemonClientError::Api {
        status,
        code: field("code").unwrap_or_else(|| format!("http_{status}")),
        message: field("message").unwrap_or_else(|| body.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_answers_keep_the_stable_code() {
        let e = api_error(
            422,
            &json!({"error": {"code": "invalid_key", "message": "bad key"}}),
        );
        assert_eq!(e.to_string(), "invalid_key: bad key (HTTP 422)");
        let bare = api_error(502, &Value::Null);
        assert!(bare.to_string().starts_with("http_502"), "{bare}");
    }

    #[test]
    fn a_home_without_a_record_means_not_running() {
        let dir = tempfile::tempdir().unwrap();
        let home = DataHome::resolve(Some(dir.path().to_path_buf())).unwrap();
        let e = Daemon::discover(&home, Duration::from_secs(1)).unwrap_err();
        assert!(matches!(e, DaemonClientError::NotRunning { .. }), "{e}");
    }

    #[test]
    fn a_dead_address_is_unreachable_not_a_hang() {
        // Bind then drop: the port is closed by the time we connect.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let daemon = Daemon::at(port, None, "t".into(), Duration::from_secs(2));
        let e = daemon.probe().unwrap_err();
        assert!(matches!(e, DaemonClientError::Unreachable { .. }), "{e}");
    }
}
