//! The OpenAI-compatible backend against a chat-completions server the
//! test starts on 127.0.0.1: good, malformed, slow, failing and oversized
//! answers.

mod common;

use std::time::Duration;

use common::chat_server::{ChatServer, Reply};
use kirocrew_actors::llm::{LlmClient, LlmError, LlmRequest, OpenAiClient, OpenAiConfig};
use serde_json::json;

fn request() -> LlmRequest {
    LlmRequest {
        system: "answer JSON".into(),
        user: "hello".into(),
        schema: json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
        max_tokens: 32,
    }
}

fn client(server: &ChatServer, configure: impl FnOnce(&mut OpenAiConfig)) -> OpenAiClient {
    let mut config = OpenAiConfig::new(server.base_url.clone(), "test-model");
    config.api_key = Some("sk-test".into());
    config.timeout = Duration::from_secs(10);
    config.retries = 0;
    config.backoff = Duration::from_millis(10);
    configure(&mut config);
    OpenAiClient::new(config)
}

#[test]
fn a_good_answer_is_returned_and_the_request_carries_the_schema() {
    let server = ChatServer::start(|_| Reply::Answer(r#"{"a":1}"#.into()));
    let answer = client(&server, |_| {}).complete(&request()).unwrap();
    assert_eq!(answer, r#"{"a":1}"#);
    let sent = &server.requests()[0];
    assert_eq!(sent["model"], "test-model");
    assert_eq!(sent["messages"][1]["content"], "hello");
    assert_eq!(sent["response_format"]["type"], "json_schema");
    assert_eq!(
        sent["response_format"]["json_schema"]["schema"],
        request().schema
    );
}

#[test]
fn malformed_and_truncated_responses_are_errors() {
    let server = ChatServer::start(|_| Reply::Status(200, "<html>oops</html>".into()));
    let c = client(&server, |_| {});
    assert!(matches!(
        c.complete(&request()),
        Err(LlmError::Malformed(_))
    ));
    server.respond(|_| Reply::Truncated(r#"{"a":"#.into()));
    assert_eq!(c.complete(&request()), Err(LlmError::Truncated));
}

#[test]
fn a_slow_endpoint_times_out_after_the_retries() {
    let server = ChatServer::start(|_| {
        Reply::Slow(Duration::from_secs(3), Box::new(Reply::Answer("{}".into())))
    });
    let c = client(&server, |c| {
        c.timeout = Duration::from_millis(300);
        c.retries = 1;
    });
    assert!(matches!(c.complete(&request()), Err(LlmError::Timeout(_))));
    // The first attempt and one retry.
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_errors_are_retried_and_client_errors_are_not() {
    let mut calls = 0;
    let server = ChatServer::start(move |_| {
        calls += 1;
        if calls < 3 {
            Reply::Status(503, "busy".into())
        } else {
            Reply::Answer("{}".into())
        }
    });
    let c = client(&server, |c| c.retries = 2);
    assert_eq!(c.complete(&request()).unwrap(), "{}");
    assert_eq!(server.requests().len(), 3);

    let server = ChatServer::start(|_| Reply::Status(400, "bad model".into()));
    let c = client(&server, |c| c.retries = 2);
    match c.complete(&request()) {
        Err(LlmError::Status { status, message }) => {
            assert_eq!(status, 400);
            assert_eq!(message, "bad model");
        }
        other => panic!("expected a 400, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_oversized_response_is_refused() {
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(10_000));
    let server = ChatServer::start(move |_| Reply::Answer(big.clone()));
    let c = client(&server, |c| c.max_response_bytes = 4_096);
    assert_eq!(c.complete(&request()), Err(LlmError::TooLarge(4_096)));
}
