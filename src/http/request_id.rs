//! A request id for every request: answered in `X-Request-Id`, attached to
//! every log line of the request (a tracing span), and named in 5xx bodies,
//! so an operator can find the logged cause of an error a client reports.
//!
//! The id is ours (random); a client-sent `X-Request-Id` is ignored, so log
//! lines never carry client-chosen text.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;

/// The response header carrying the id.
pub const HEADER: &str = "x-request-id";

fn new_id() -> String {
    // 64 random bits: unique enough to find one request in a log. Without
    // randomness, time still tells requests apart.
    let bits = getrandom::u64().unwrap_or_else(|_| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    format!("{bits:016x}")
}

/// The middleware function (wrap with `actix_web::middleware::from_fn`,
/// outermost, so the access log and every error carry the id).
pub async fn assign_request_id(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = new_id();
    let span = tracing::info_span!("request", request_id = %id);
    let mut response = crate::error::request_id::scope(id.clone(), next.call(req))
        .instrument(span)
        .await?;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response
            .headers_mut()
            .insert(HeaderName::from_static(HEADER), value);
    }
    Ok(response)
}
