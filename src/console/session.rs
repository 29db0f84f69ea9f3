//! One console session: a task per websocket connection, from the first
//! frame to the close.
//!
//! A session owns nothing but its connection, so it is a plain task (the
//! shape actix-ws is built for) rather than an actor: one `select!` loop
//! over the client's frames, finished commands, the live streams it
//! subscribed to, a keepalive ticker and the shutdown bell. Commands run as
//! their own tasks (at most [`MAX_IN_FLIGHT`] per session) so a slow one
//! (a hook script) never stops pings, events or a close; answers carry the
//! request's `id`, in whatever order they finish.
//!
//! ## Bounded, never blocking
//! Every stream is a `broadcast` ring: a sender never waits for a session.
//! While this session is busy sending (its client reads slowly, actix-ws
//! holds at most 32 frames), the rings move on without it, and when it next
//! reads a stream it is told how many events it missed (`lagged`). A client
//! that reads nothing for the idle timeout is dropped.

use std::time::{Duration, Instant};

use actix_web::web;
use actix_ws::{AggregatedMessage, CloseCode, CloseReason};
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc, watch};

use super::argv;
use super::commands;
use super::protocol::{
    error_frame, event_frame, hello_frame, lagged_frame, ok_frame, parse_request, str_arg,
    ConsoleError, Request,
};
use super::streams::{next, next_log, stream_arg, Sub, Subs, STREAMS};
use crate::app::auth::AuthPolicy;
use crate::app::console_hub::{PendingSlot, SessionSlot};
use crate::app::AppState;
use crate::telemetry::log_bus::{level_rank, LogSubscription, LEVELS};

/// Commands of one session running at once, at most.
pub const MAX_IN_FLIGHT: usize = 8;

/// How long a closing session waits for the client's close frame.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// How long an unauthenticated connection may take to send its token.
const AUTH_DEADLINE: Duration = Duration::from_secs(10);

/// The console verbs beside the CLI's commands.
pub const VERBS: [&str; 3] = ["auth", "subscribe", "unsubscribe"];

/// Why the loop ended early.
enum End {
    /// The client went away or the connection broke.
    Gone,
    /// Close with this reason.
    Close(CloseCode, &'static str),
}

/// A live session.
pub struct Session {
    ws: actix_ws::Session,
    state: web::Data<AppState>,
    policy: web::Data<AuthPolicy>,
    peer: Option<String>,
    authenticated: bool,
    subs: Subs,
    in_flight: usize,
    done_tx: mpsc::Sender<String>,
    done_rx: mpsc::Receiver<String>,
    closing: watch::Receiver<bool>,
    slot: Slot,
}

/// Where the session stands in the hub's counts.
#[derive(Debug)]
pub enum Slot {
    /// Waiting to authenticate (not counted as a session).
    Waiting(PendingSlot),
    /// An authenticated session.
    Admitted(SessionSlot),
    /// Between the two, for an instant.
    Moving,
}

impl Slot {
    /// Resolves when a waiting connection is sent away to make room.
    async fn evicted(&mut self) {
        match self {
            Slot::Waiting(pending) => pending.evicted().await,
            Slot::Admitted(_) | Slot::Moving => std::future::pending().await,
        }
    }
}

impl Session {
    /// A session on an upgraded connection: `Slot::Admitted` when the
    /// upgrade request already proved the token, else `Slot::Waiting`.
    pub fn new(
        ws: actix_ws::Session,
        state: web::Data<AppState>,
        policy: web::Data<AuthPolicy>,
        peer: Option<String>,
        slot: Slot,
    ) -> Self {
        let authenticated = matches!(slot, Slot::Admitted(_));
        let (done_tx, done_rx) = mpsc::channel(MAX_IN_FLIGHT);
        let closing = state.console.closing();
        Self {
            ws,
            state,
            policy,
            peer,
            authenticated,
            subs: Subs::default(),
            in_flight: 0,
            done_tx,
            done_rx,
            closing,
            slot,
        }
    }

    /// Serves the connection until it ends.
    pub async fn run(mut self, mut stream: actix_ws::AggregatedMessageStream) {
        let idle = self.state.console.idle_timeout();
        let started = Instant::now();
        let mut last_heard = Instant::now();
        // Pings often enough that a live client answers well within `idle`.
        let mut keepalive = tokio::time::interval((idle / 3).min(Duration::from_secs(30)));
        keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut auth_check = tokio::time::interval(Duration::from_secs(1));
        let end = if self.authenticated {
            self.hello().await
        } else {
            Ok(())
        };
        let end = match end {
            Err(end) => end,
            Ok(()) => loop {
                let step = tokio::select! {
                    _ = self.closing.changed() => Err(End::Close(CloseCode::Away, "daemon shutting down")),
                    msg = stream.recv() => {
                        last_heard = Instant::now();
                        self.on_frame(msg).await
                    }
                    Some(frame) = self.done_rx.recv() => {
                        self.in_flight -= 1;
                        self.send(frame).await
                    }
                    _ = keepalive.tick() => {
                        if last_heard.elapsed() > idle {
                            Err(End::Close(CloseCode::Normal, "idle timeout"))
                        } else {
                            self.ping().await
                        }
                    }
                    () = self.slot.evicted(), if !self.authenticated => {
                        Err(End::Close(CloseCode::Again, "too many connections are waiting to authenticate; send the token at once"))
                    }
                    _ = auth_check.tick(), if !self.authenticated => {
                        if started.elapsed() > AUTH_DEADLINE {
                            Err(End::Close(CloseCode::Policy, "no token: send {\"cmd\": \"auth\", \"args\": {\"token\": ...}} first"))
                        } else {
                            Ok(())
                        }
                    }
                    ev = next(&mut self.subs.audit) => self.forward("audit", ev, |s| &mut s.audit).await,
                    ev = next(&mut self.subs.security) => self.forward("security", ev, |s| &mut s.security).await,
                    ev = next(&mut self.subs.progress) => self.forward("progress", ev, |s| &mut s.progress).await,
                    ev = next_log(&mut self.subs.log) => self.forward("log", ev, |s| &mut s.log).await,
                };
                if let Err(end) = step {
                    break end;
                }
            },
        };
        if let End::Close(code, reason) = end {
            let reason = CloseReason {
                code,
                description: Some(reason.to_owned()),
            };
            // The closing handshake: the connection stays open (this clone
            // keeps the response stream alive) until the client answers the
            // close frame, or CLOSE_GRACE passes. Closing the socket at once
            // would make a client that is still replying to earlier pings
            // get a reset and lose the close frame and its reason.
            let keep_open = self.ws.clone();
            let handshake = async {
                // The client may be gone already; nothing to do then.
                let _ = self.ws.close(Some(reason)).await;
                while let Some(Ok(msg)) = stream.recv().await {
                    if matches!(msg, AggregatedMessage::Close(_)) {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(CLOSE_GRACE, handshake).await;
            drop(keep_open);
        }
    }

    async fn hello(&mut self) -> Result<(), End> {
        let mut commands: Vec<&str> = argv::COMMANDS.to_vec();
        commands.extend(VERBS);
        let frame = hello_frame(env!("CARGO_PKG_VERSION"), &commands, &STREAMS);
        self.send(frame).await
    }

    /// Sends one frame. A client that reads nothing for the idle timeout
    /// is dropped; shutdown does not wait for a stalled client.
    async fn send(&mut self, frame: String) -> Result<(), End> {
        let idle = self.state.console.idle_timeout();
        tokio::select! {
            sent = self.ws.text(frame) => sent.map_err(|_| End::Gone),
            _ = self.closing.changed() => Err(End::Close(CloseCode::Away, "daemon shutting down")),
            _ = tokio::time::sleep(idle) => Err(End::Gone),
        }
    }

    async fn ping(&mut self) -> Result<(), End> {
        self.ws.ping(b"kirocrew").await.map_err(|_| End::Gone)
    }

    async fn on_frame(
        &mut self,
        msg: Option<Result<AggregatedMessage, actix_ws::ProtocolError>>,
    ) -> Result<(), End> {
        match msg {
            None => Err(End::Gone),
            Some(Err(actix_ws::ProtocolError::Overflow)) => Err(End::Close(
                CloseCode::Size,
                "frame larger than the transport reads (1 MiB); requests are limited to 64 KiB",
            )),
            Some(Err(_)) => Err(End::Close(CloseCode::Protocol, "websocket protocol error")),
            Some(Ok(AggregatedMessage::Close(_))) => Err(End::Close(CloseCode::Normal, "bye")),
            Some(Ok(AggregatedMessage::Ping(bytes))) => {
                self.ws.pong(&bytes).await.map_err(|_| End::Gone)
            }
            Some(Ok(AggregatedMessage::Pong(_))) => Ok(()),
            Some(Ok(AggregatedMessage::Binary(_))) if !self.authenticated => {
                Err(End::Close(CloseCode::Policy, "authenticate first"))
            }
            Some(Ok(AggregatedMessage::Binary(_))) => {
                let frame = error_frame(
                    &Value::Null,
                    "binary_frame",
                    "send requests as JSON text frames",
                );
                self.send(frame).await
            }
            Some(Ok(AggregatedMessage::Text(text))) => self.on_text(&text).await,
        }
    }

    async fn on_text(&mut self, text: &str) -> Result<(), End> {
        let request = parse_request(text);
        if !self.authenticated {
            // Nothing is answered before the token.
            return match request {
                Ok(r) if r.cmd == "auth" => self.authenticate(&r).await,
                _ => Err(End::Close(
                    CloseCode::Policy,
                    "authenticate first: {\"cmd\": \"auth\", \"args\": {\"token\": ...}}",
                )),
            };
        }
        let request = match request {
            Ok(r) => r,
            Err(e) => return self.send(error_frame(&e.id, e.code, &e.message)).await,
        };
        match request.cmd.as_str() {
            "auth" => {
                self.send(ok_frame(&request.id, json!({"authenticated": true})))
                    .await
            }
            "subscribe" => {
                let frame = match self.subscribe(&request) {
                    Ok(result) => ok_frame(&request.id, result),
                    Err(e) => error_frame(&request.id, e.code, &e.message),
                };
                self.send(frame).await
            }
            "unsubscribe" => {
                let frame = match self.unsubscribe(&request) {
                    Ok(result) => ok_frame(&request.id, result),
                    Err(e) => error_frame(&request.id, e.code, &e.message),
                };
                self.send(frame).await
            }
            _ => self.start_command(request).await,
        }
    }

    async fn authenticate(&mut self, request: &Request) -> Result<(), End> {
        let valid = str_arg(&request.args, "token").is_some_and(|t| self.policy.token_matches(t));
        if !valid {
            self.state.auth_failures.note(
                "console",
                self.peer.as_deref(),
                json!({"code": "unauthorized", "path": "/api/console", "peer": self.peer}),
            );
            return Err(End::Close(CloseCode::Policy, "invalid token"));
        }
        self.slot = match std::mem::replace(&mut self.slot, Slot::Moving) {
            Slot::Waiting(pending) => match pending.promote(&self.state.console) {
                Some(admitted) => Slot::Admitted(admitted),
                None => {
                    let message = format!(
                        "{} console sessions are open, the most server.console_max_sessions allows; close one and retry",
                        self.state.console.max_sessions()
                    );
                    self.send(error_frame(&request.id, "console_busy", &message))
                        .await?;
                    return Err(End::Close(CloseCode::Again, "console busy"));
                }
            },
            admitted => admitted,
        };
        self.authenticated = true;
        self.hello().await?;
        self.send(ok_frame(&request.id, json!({"authenticated": true})))
            .await
    }

    async fn start_command(&mut self, request: Request) -> Result<(), End> {
        if self.in_flight >= MAX_IN_FLIGHT {
            let frame = error_frame(
                &request.id,
                "too_many_requests",
                &format!(
                    "at most {MAX_IN_FLIGHT} commands run at once per session; wait for an answer"
                ),
            );
            return self.send(frame).await;
        }
        let command = match argv::parse_command(&request.cmd, &request.args) {
            Ok(command) => command,
            Err(e) => {
                return self
                    .send(error_frame(&request.id, e.code, &e.message))
                    .await
            }
        };
        self.in_flight += 1;
        let state = self.state.clone();
        let done = self.done_tx.clone();
        actix_rt::spawn(async move {
            let frame = match commands::run(&state, command).await {
                Ok(out) => ok_frame(&request.id, json!(out)),
                Err(e) => error_frame(&request.id, e.code, &e.message),
            };
            // The session may have ended meanwhile.
            let _ = done.send(frame).await;
        });
        Ok(())
    }

    fn subscribe(&mut self, request: &Request) -> Result<Value, ConsoleError> {
        let stream = stream_arg(request)?;
        match stream {
            "audit" => self.subs.audit = Some(Sub::new(self.state.store.subscribe_events())),
            "security" => self.subs.security = Some(Sub::new(self.state.security_log.subscribe())),
            "progress" => {
                self.subs.progress = Some(Sub::new(self.state.console.subscribe_progress()))
            }
            _ => {
                let level = str_arg(&request.args, "level").unwrap_or("info");
                let rank = level_rank(level).ok_or_else(|| {
                    ConsoleError::new(
                        "invalid_argument",
                        format!("level {level:?} is not one of {}", LEVELS.join(", ")),
                    )
                })?;
                self.subs.log = Some(Sub::new(LogSubscription::new(rank)));
                return Ok(json!({"stream": stream, "level": LEVELS[rank]}));
            }
        }
        Ok(json!({"stream": stream}))
    }

    fn unsubscribe(&mut self, request: &Request) -> Result<Value, ConsoleError> {
        let stream = stream_arg(request)?;
        let was = match stream {
            "audit" => self.subs.audit.take().is_some(),
            "security" => self.subs.security.take().is_some(),
            "progress" => self.subs.progress.take().is_some(),
            _ => self.subs.log.take().is_some(),
        };
        Ok(json!({"stream": stream, "was_subscribed": was}))
    }

    /// Sends one event, or tells the client what it missed.
    async fn forward<T: serde::Serialize, R>(
        &mut self,
        stream: &'static str,
        received: Result<T, broadcast::error::RecvError>,
        sub: impl Fn(&mut Subs) -> &mut Option<Sub<R>>,
    ) -> Result<(), End> {
        match received {
            Ok(event) => self.send(event_frame(stream, &event)).await,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                let total = match sub(&mut self.subs) {
                    Some(s) => {
                        s.missed += n;
                        s.missed
                    }
                    None => n,
                };
                self.send(lagged_frame(stream, n, total)).await
            }
            Err(broadcast::error::RecvError::Closed) => {
                *sub(&mut self.subs) = None;
                Ok(())
            }
        }
    }
}
