//! A small OpenAI-compatible chat-completions server on 127.0.0.1 for the
//! consolidation tests (the real HTTP path of `OpenAiClient`): it records
//! every request body and answers with whatever the test's responder
//! returns — a good answer, a malformed one, an error status, a slow or a
//! truncated one. Shared by the actor tests and the HTTP tests
//! (`tests/api` includes this file by path).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// 200 with a completion whose message content is this text.
    Answer(String),
    /// 200 with a completion cut at the token limit.
    Truncated(String),
    /// This status and raw body.
    Status(u16, String),
    /// Wait, then answer.
    Slow(Duration, Box<Reply>),
}

type Responder = Box<dyn FnMut(&Value) -> Reply + Send>;

/// The running server.
#[derive(Clone)]
pub(crate) struct ChatServer {
    /// `http://127.0.0.1:<port>/v1`.
    pub(crate) base_url: String,
    requests: Arc<Mutex<Vec<Value>>>,
    responder: Arc<Mutex<Responder>>,
}

impl ChatServer {
    /// Starts the server answering with `responder`.
    pub(crate) fn start(responder: impl FnMut(&Value) -> Reply + Send + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = Self {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            requests: Arc::new(Mutex::new(Vec::new())),
            responder: Arc::new(Mutex::new(Box::new(responder))),
        };
        let shared = server.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = shared.clone();
                std::thread::spawn(move || shared.serve(stream));
            }
        });
        server
    }

    /// Replaces the responder.
    pub(crate) fn respond(&self, responder: impl FnMut(&Value) -> Reply + Send + 'static) {
        *self.responder.lock().unwrap() = Box::new(responder);
    }

    /// Every request body so far.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    fn serve(&self, stream: TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        self.requests.lock().unwrap().push(request.clone());
        let reply = (self.responder.lock().unwrap())(&request);
        write_reply(stream, reply);
    }
}

fn write_reply(mut stream: TcpStream, reply: Reply) {
    let (status, body) = match reply {
        Reply::Slow(wait, reply) => {
            std::thread::sleep(wait);
            return write_reply(stream, *reply);
        }
        Reply::Answer(content) => (200, completion(&content, "stop")),
        Reply::Truncated(content) => (200, completion(&content, "length")),
        Reply::Status(status, body) => (status, body),
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

fn completion(content: &str, finish: &str) -> String {
    json!({
        "id": "c1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
    })
    .to_string()
}

/// Whether a request is the history path's (by its system prompt).
pub(crate) fn is_history(request: &Value) -> bool {
    request["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.contains("diary"))
}

/// The user message of a request (the transcript).
pub(crate) fn user_message(request: &Value) -> String {
    request["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
