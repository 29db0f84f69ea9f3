//! Extractor configuration: how unreadable requests are answered.
//!
//! actix-web's defaults answer bad bodies and query strings with plain-text
//! errors; these handlers turn each into an [`ApiError`] with a stable code:
//! a body over the limit is 413, JSON that does not parse is 400
//! `malformed_json`, JSON of the wrong shape (missing field, wrong type) is
//! 422 `invalid_body`, a body that does not arrive within
//! `server.body_timeout_secs` is 408 `request_timeout` ([`super::body_timeout`]),
//! a bad query string 400 `invalid_query`.

use actix_web::error::{JsonPayloadError, PathError, PayloadError, QueryPayloadError};
use actix_web::{web, HttpRequest};

use super::body_timeout::is_body_timeout;
use crate::error::ApiError;

/// JSON body settings with `limit` bytes. The extractor does not check the
/// Content-Type: the guard ([`super::auth`]) already refused every
/// state-changing request whose body is not declared JSON, with a 415 in
/// the house format.
pub fn json_config(limit: usize) -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(limit)
        .content_type_required(false)
        .error_handler(json_error)
}

fn json_error(err: JsonPayloadError, _: &HttpRequest) -> actix_web::Error {
    let api = match &err {
        JsonPayloadError::OverflowKnownLength { length, limit } => ApiError::PayloadTooLarge(
            format!("request body is {length} bytes; the limit is {limit}"),
        ),
        JsonPayloadError::Overflow { limit } => {
            ApiError::PayloadTooLarge(format!("request body exceeds the limit of {limit} bytes"))
        }
        JsonPayloadError::Payload(PayloadError::Overflow) => {
            ApiError::PayloadTooLarge("request body exceeds the limit".into())
        }
        JsonPayloadError::Payload(e) if is_body_timeout(e) => ApiError::RequestTimeout(
            "the request body did not arrive within server.body_timeout_secs".into(),
        ),
        JsonPayloadError::Deserialize(e) if e.is_data() => ApiError::validation(
            "invalid_body",
            format!("request body has the wrong shape: {e}"),
        ),
        JsonPayloadError::Deserialize(e) => ApiError::bad_request(
            "malformed_json",
            format!("request body is not valid JSON: {e}"),
        ),
        other => {
            ApiError::bad_request("invalid_body", format!("cannot read request body: {other}"))
        }
    };
    api.into()
}

/// Query-string settings.
pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|err: QueryPayloadError, _| {
        ApiError::bad_request("invalid_query", format!("invalid query string: {err}")).into()
    })
}

/// Path-segment settings.
pub fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(|err: PathError, _| {
        ApiError::bad_request("invalid_path", format!("invalid path: {err}")).into()
    })
}

/// `?q=&limit=` of the search routes.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchQuery {
    /// The query text.
    pub q: String,
    /// At most this many results (checked with [`limit`]).
    pub limit: Option<u32>,
}

pub use crate::app::limit;
