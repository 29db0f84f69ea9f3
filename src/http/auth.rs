//! The `/api` guard: a Host header naming the bound address, then a bearer
//! token.
//!
//! The Host check defeats DNS rebinding: a web page on `evil.example` that
//! rebinds its name to 127.0.0.1 still sends `Host: evil.example`, so the
//! browser can reach the port but not the API. The token (in
//! `$KIROCREW_HOME/api-token`, mode 0600) keeps other local users and
//! processes without file access out. With `auth.loopback_trusted` a caller
//! on a loopback address may skip the token (never the Host check).

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::web;

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

    fn check(&self, req: &ServiceRequest) -> Result<(), ApiError> {
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
        if self.loopback_trusted && req.peer_addr().is_some_and(|peer| peer.ip().is_loopback()) {
            return Ok(());
        }
        let presented = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::trim);
        match presented {
            Some(token) if constant_time_eq(token.as_bytes(), self.token.as_bytes()) => Ok(()),
            Some(_) => Err(ApiError::Unauthorized("invalid bearer token".into())),
            None => Err(ApiError::Unauthorized(
                "missing Authorization: Bearer <token> (the token is in $KIROCREW_HOME/api-token)"
                    .into(),
            )),
        }
    }
}

/// Compares without an early exit, so response timing does not reveal how
/// much of a guessed token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The middleware function (wrap with `actix_web::middleware::from_fn`).
pub async fn require_auth(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let policy = req
        .app_data::<web::Data<AuthPolicy>>()
        .ok_or_else(|| ApiError::Internal {
            code: "auth_not_configured",
            message: "the auth policy is missing".into(),
        })?;
    policy.check(&req)?;
    next.call(req).await
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
}
