//! The request guard: what every request must satisfy before a handler
//! sees it. The rules themselves are plain functions in [`super::request_rules`];
//! this module applies them in order:
//!
//! 1. Every route (API, dashboard, probes, unknown paths): a Host header
//!    naming the bound address, else 403 `host_not_allowed`. This defeats
//!    DNS rebinding: a page on `evil.example` that rebinds its name to
//!    127.0.0.1 still sends `Host: evil.example`.
//! 2. Every state-changing request (POST/PUT/PATCH/DELETE), whatever the
//!    auth mode: an Origin header, when present, naming the daemon, else 403
//!    `origin_forbidden`; and a body, when present, of a JSON content type,
//!    else 415 `unsupported_media_type`. Together these keep web pages from
//!    writing (see [`super::request_rules`]).
//! 3. `/api` only: the bearer token (in `$KIROCREW_HOME/api-token`, mode
//!    0600), else 401. It keeps other local users and processes without file
//!    access out. With `auth.loopback_trusted` a caller on a loopback address
//!    may skip the token (never the rules above).
//!
//! 1–2 run in [`guard_request`] (wrapping the whole app), 3 in
//! [`require_token`] (wrapping the `/api` scope), so routing, not path
//! matching, decides what the token guards.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap};
use actix_web::middleware::Next;
use actix_web::web;

use super::request_rules::{
    bearer_token, has_body, is_json_content_type, is_state_changing, origin_allowed,
};
use super::AppState;
use crate::error::ApiError;

/// What the guard checks against.
#[derive(Debug, Clone)]
pub struct AuthPolicy {
    token: String,
    allowed_hosts: Vec<String>,
    loopback_trusted: bool,
}

impl AuthPolicy {
    /// A policy for a server bound to `bind_ip:port`.
    pub fn new(
        token: String,
        bind_ip: std::net::IpAddr,
        port: u16,
        extra_hosts: &[String],
        loopback_trusted: bool,
    ) -> Self {
        let mut hosts = vec![format!("localhost:{port}")];
        match bind_ip {
            std::net::IpAddr::V4(ip) => hosts.push(format!("{ip}:{port}")),
            std::net::IpAddr::V6(ip) => hosts.push(format!("[{ip}]:{port}")),
        }
        if bind_ip.is_loopback() {
            hosts.push(format!("127.0.0.1:{port}"));
            hosts.push(format!("[::1]:{port}"));
        }
        hosts.extend(extra_hosts.iter().map(|h| h.to_ascii_lowercase()));
        hosts.sort();
        hosts.dedup();
        Self {
            token,
            allowed_hosts: hosts,
            loopback_trusted,
        }
    }

    /// The Host header values that name this server.
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// Rules 1 and 2 (module docs).
    fn check_request(&self, req: &ServiceRequest) -> Result<(), ApiError> {
        let host = req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_ascii_lowercase)
            .or_else(|| {
                req.uri()
                    .authority()
                    .map(|a| a.as_str().to_ascii_lowercase())
            });
        // An absolute-form target (`GET http://other.example/api/…`) names
        // a host too, and must name this one, whatever the Host header says.
        let target = req
            .uri()
            .authority()
            .map(|a| a.as_str().to_ascii_lowercase());
        if let Some(target) = target.filter(|t| !self.allowed_hosts.contains(t)) {
            return Err(ApiError::Forbidden {
                code: "host_not_allowed",
                message: format!(
                    "the request target names {target:?}, not this server; expected one of {}",
                    self.allowed_hosts.join(", ")
                ),
            });
        }
        match host {
            Some(host) if self.allowed_hosts.contains(&host) => {}
            other => {
                return Err(ApiError::Forbidden {
                    code: "host_not_allowed",
                    message: format!(
                        "Host header {:?} does not name this server; expected one of {}",
                        other.unwrap_or_default(),
                        self.allowed_hosts.join(", ")
                    ),
                })
            }
        }
        if is_state_changing(req.method()) {
            check_origin(req.headers(), &self.allowed_hosts)?;
            check_content_type(req.headers())?;
        }
        Ok(())
    }

    /// Rule 3 (module docs).
    fn check_token(&self, req: &ServiceRequest) -> Result<(), ApiError> {
        if self.loopback_trusted && req.peer_addr().is_some_and(|peer| peer.ip().is_loopback()) {
            return Ok(());
        }
        let authorization = req.headers().get(header::AUTHORIZATION);
        match authorization
            .and_then(|h| h.to_str().ok())
            .and_then(bearer_token)
        {
            Some(token) if constant_time_eq(token.as_bytes(), self.token.as_bytes()) => Ok(()),
            Some(_) => Err(ApiError::Unauthorized("invalid bearer token".into())),
            None if authorization.is_some() => Err(ApiError::Unauthorized(
                "the Authorization header must be \"Bearer <token>\"".into(),
            )),
            None => Err(ApiError::Unauthorized(
                "missing Authorization: Bearer <token> (the token is in $KIROCREW_HOME/api-token)"
                    .into(),
            )),
        }
    }
}

impl AuthPolicy {
    /// The operator console's upgrade request (`GET /api/console`): its
    /// Origin, when sent, must name the daemon (a page elsewhere must not
    /// open a session with the browser's help: cross-site websocket
    /// hijacking). Answers whether the request is already authenticated
    /// (a valid bearer header, or a trusted loopback peer); `false` means
    /// the token must come in the first frame. A wrong header is a 401.
    pub(crate) fn check_console_upgrade(
        &self,
        headers: &HeaderMap,
        peer: Option<std::net::SocketAddr>,
    ) -> Result<bool, ApiError> {
        check_origin(headers, &self.allowed_hosts)?;
        if self.loopback_trusted && peer.is_some_and(|p| p.ip().is_loopback()) {
            return Ok(true);
        }
        let Some(authorization) = headers.get(header::AUTHORIZATION) else {
            return Ok(false);
        };
        match authorization.to_str().ok().and_then(bearer_token) {
            Some(token) if self.token_matches(token) => Ok(true),
            _ => Err(ApiError::Unauthorized("invalid bearer token".into())),
        }
    }

    /// Whether `token` is the API token (constant time).
    pub(crate) fn token_matches(&self, token: &str) -> bool {
        constant_time_eq(token.as_bytes(), self.token.as_bytes())
    }
}

fn check_origin(headers: &HeaderMap, allowed_hosts: &[String]) -> Result<(), ApiError> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let text = origin.to_str().unwrap_or_default();
    if origin_allowed(text, allowed_hosts) {
        return Ok(());
    }
    Err(ApiError::Forbidden {
        code: "origin_forbidden",
        message: format!(
            "Origin {text:?} is not this daemon; requests that change data are refused from other sites"
        ),
    })
}

fn check_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if !has_body(
        text(header::CONTENT_LENGTH),
        text(header::TRANSFER_ENCODING),
    ) {
        return Ok(());
    }
    match headers.get(header::CONTENT_TYPE) {
        Some(value) if is_json_content_type(value.to_str().unwrap_or_default()) => Ok(()),
        Some(value) => Err(ApiError::UnsupportedMediaType(format!(
            "the request body must be JSON (Content-Type: application/json), not {:?}",
            String::from_utf8_lossy(value.as_bytes())
        ))),
        None => Err(ApiError::UnsupportedMediaType(
            "the request body must be JSON; send Content-Type: application/json".into(),
        )),
    }
}

/// Compares without an early exit, so response timing does not reveal how
/// much of a guessed token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn policy(req: &ServiceRequest) -> Result<&AuthPolicy, ApiError> {
    req.app_data::<web::Data<AuthPolicy>>()
        .map(|p| p.get_ref())
        .ok_or_else(|| ApiError::Internal {
            code: "auth_not_configured",
            cause: "the auth policy is missing from the app data".into(),
        })
}

/// Host, Origin and content-type rules, for every route (wrap the whole app
/// with `actix_web::middleware::from_fn`).
pub async fn guard_request(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let verdict = policy(&req).and_then(|p| p.check_request(&req));
    match verdict {
        Ok(()) => Ok(next.call(req).await?.map_into_left_body()),
        Err(e) => {
            if matches!(e, ApiError::Forbidden { .. }) {
                record_refusal(&req, &e);
            }
            Ok(req.error_response(e).map_into_right_body())
        }
    }
}

/// The bearer token, for the `/api` scope.
pub async fn require_token(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let verdict = policy(&req).and_then(|p| p.check_token(&req));
    match verdict {
        Ok(()) => Ok(next.call(req).await?.map_into_left_body()),
        Err(e) => {
            record_refusal(&req, &e);
            Ok(req.error_response(e).map_into_right_body())
        }
    }
}

/// An auth failure or a refused Host/Origin is a security event (spec: the
/// security event log records every auth failure), bounded per source and
/// minute ([`super::auth_failures`]). Recorded without waiting: a flood of
/// bad requests must not queue behind the log.
fn record_refusal(req: &ServiceRequest, err: &ApiError) {
    let Some(state) = req.app_data::<web::Data<AppState>>() else {
        return;
    };
    let peer = req.peer_addr().map(|a| a.ip().to_string());
    state.auth_failures.note(
        "http",
        peer.as_deref(),
        serde_json::json!({
            "code": err.code(),
            "method": req.method().as_str(),
            "path": req.path(),
            "peer": peer,
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_compares_exactly() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    #[test]
    fn loopback_binds_accept_all_loopback_names() {
        let p = AuthPolicy::new("t".into(), "127.0.0.1".parse().unwrap(), 7430, &[], false);
        for host in ["localhost:7430", "127.0.0.1:7430", "[::1]:7430"] {
            assert!(p.allowed_hosts.contains(&host.to_owned()), "{host}");
        }
        assert!(!p.allowed_hosts.contains(&"evil.example:7430".to_owned()));
    }

    #[test]
    fn content_type_is_required_only_with_a_body() {
        let mut headers = HeaderMap::new();
        assert!(check_content_type(&headers).is_ok());
        headers.insert(header::CONTENT_LENGTH, "0".parse().unwrap());
        assert!(check_content_type(&headers).is_ok());
        headers.insert(header::CONTENT_LENGTH, "2".parse().unwrap());
        let err = check_content_type(&headers).unwrap_err();
        assert_eq!(err.code(), "unsupported_media_type");
        headers.insert(header::CONTENT_TYPE, "text/plain".parse().unwrap());
        assert_eq!(
            check_content_type(&headers).unwrap_err().code(),
            "unsupported_media_type"
        );
        headers.insert(
            header::CONTENT_TYPE,
            "application/json; charset=utf-8".parse().unwrap(),
        );
        assert!(check_content_type(&headers).is_ok());
    }

    #[test]
    fn origin_is_checked_only_when_sent() {
        let hosts = vec!["127.0.0.1:7430".to_owned()];
        let mut headers = HeaderMap::new();
        assert!(check_origin(&headers, &hosts).is_ok());
        headers.insert(header::ORIGIN, "http://127.0.0.1:7430".parse().unwrap());
        assert!(check_origin(&headers, &hosts).is_ok());
        headers.insert(header::ORIGIN, "null".parse().unwrap());
        assert_eq!(
            check_origin(&headers, &hosts).unwrap_err().code(),
            "origin_forbidden"
        );
    }
}
