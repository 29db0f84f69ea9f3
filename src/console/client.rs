//! A console client (tokio-tungstenite): what `kirocrew console` and
//! `kirocrew bench console` speak to `/api/console` with. It sends the
//! token in the `Authorization` header, reads the `hello`, and matches
//! answers to requests by id; event frames that arrive meanwhile are kept,
//! in order, for [`ConsoleClient::next_event`].

use std::collections::VecDeque;
use std::net::SocketAddr;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::daemon_client::DaemonClientError;

/// Frames kept while waiting for an answer, at most (older events are
/// dropped and counted, like the daemon's own lag).
const MAX_PENDING_EVENTS: usize = 10_000;

/// What went wrong talking to the console.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleClientError {
    /// The daemon could not be reached or refused the token.
    #[error(transparent)]
    Daemon(#[from] DaemonClientError),
    /// The connection ended (with the daemon's close reason, if any).
    #[error("the console connection closed{}", .0.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed(Option<String>),
    /// The command failed (`error.code`, `error.message`).
    #[error("{code}: {message}")]
    Command {
        /// Stable code.
        code: String,
        /// Words.
        message: String,
    },
    /// The daemon sent something that is not the protocol.
    #[error("unexpected frame from the daemon: {0}")]
    Protocol(String),
}

/// A connected, authenticated console session.
pub struct ConsoleClient {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    events: VecDeque<Value>,
    /// Events dropped from the local queue because nobody read them.
    pub dropped: u64,
    /// The daemon's `hello` frame.
    pub hello: Value,
}

impl ConsoleClient {
    /// Connects to the daemon at `address` with `token`.
    pub async fn connect(
        address: SocketAddr,
        token: Option<&str>,
        token_file: &str,
    ) -> Result<Self, ConsoleClientError> {
        let url = format!("ws://{address}/api/console");
        let unreachable = |reason: String| DaemonClientError::Unreachable {
            address: address.to_string(),
            reason,
        };
        let mut request = url
            .into_client_request()
            .map_err(|e| unreachable(e.to_string()))?;
        if let Some(token) = token {
            let value = format!("Bearer {token}")
                .parse()
                .map_err(|_| unreachable("the token file holds an invalid token".into()))?;
            request.headers_mut().insert("Authorization", value);
        }
        let (ws, _) = match tokio_tungstenite::connect_async(request).await {
            Ok(connected) => connected,
            Err(tungstenite::Error::Http(response)) => {
                let status = response.status().as_u16();
                if status == 401 {
                    return Err(DaemonClientError::BadToken {
                        address: address.to_string(),
                        token_file: token_file.to_owned(),
                    }
                    .into());
                }
                let body: Value = response
                    .body()
                    .as_deref()
                    .and_then(|b| serde_json::from_slice(b).ok())
                    .unwrap_or(Value::Null);
                let field = |k: &str| body.pointer(&format!("/error/{k}")).and_then(Value::as_str);
                return Err(DaemonClientError::Api {
                    status,
                    code: field("code").unwrap_or("http_error").to_owned(),
                    message: field("message").unwrap_or("the console refused").to_owned(),
                }
                .into());
            }
            Err(e) => return Err(unreachable(e.to_string()).into()),
        };
        let mut client = Self {
            ws,
            next_id: 0,
            events: VecDeque::new(),
            dropped: 0,
            hello: Value::Null,
        };
        let hello = client.frame().await?;
        if hello["type"] != "hello" {
            return Err(ConsoleClientError::Protocol(hello.to_string()));
        }
        client.hello = hello;
        Ok(client)
    }

    /// Runs `cmd` with `args`; answers its `result`.
    pub async fn request(&mut self, cmd: &str, args: Value) -> Result<Value, ConsoleClientError> {
        self.next_id += 1;
        let id = self.next_id;
        let frame = json!({"id": id, "cmd": cmd, "args": args}).to_string();
        self.ws
            .send(Message::text(frame))
            .await
            .map_err(|e| ConsoleClientError::Closed(Some(e.to_string())))?;
        loop {
            let frame = self.frame().await?;
            if frame["type"] == "response" && frame["id"] == json!(id) {
                if frame["ok"] == true {
                    return Ok(frame["result"].clone());
                }
                let text = |k: &str| frame["error"][k].as_str().unwrap_or_default().to_owned();
                return Err(ConsoleClientError::Command {
                    code: text("code"),
                    message: text("message"),
                });
            }
            self.keep(frame);
        }
    }

    /// The next `event` or `lagged` frame.
    pub async fn next_event(&mut self) -> Result<Value, ConsoleClientError> {
        if let Some(event) = self.events.pop_front() {
            return Ok(event);
        }
        loop {
            let frame = self.frame().await?;
            if frame["type"] == "event" || frame["type"] == "lagged" {
                return Ok(frame);
            }
        }
    }

    /// Closes the session politely.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }

    fn keep(&mut self, frame: Value) {
        if frame["type"] != "event" && frame["type"] != "lagged" {
            return;
        }
        if self.events.len() >= MAX_PENDING_EVENTS {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(frame);
    }

    /// The next text frame as JSON (pings are answered by tungstenite).
    async fn frame(&mut self) -> Result<Value, ConsoleClientError> {
        loop {
            match self.ws.next().await {
                None => return Err(ConsoleClientError::Closed(None)),
                Some(Err(e)) => return Err(ConsoleClientError::Closed(Some(e.to_string()))),
                Some(Ok(Message::Text(text))) => {
                    return serde_json::from_str(text.as_str())
                        .map_err(|_| ConsoleClientError::Protocol(text.to_string()))
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(ConsoleClientError::Closed(
                        frame
                            .map(|f| f.reason.as_str().to_owned())
                            .filter(|r| !r.is_empty()),
                    ))
                }
                Some(Ok(_)) => {}
            }
        }
    }
}
