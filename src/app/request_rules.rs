//! The request rules the guard ([`super::auth`]) enforces, as plain
//! functions over header values so each can be unit-tested.
//!
//! Why these rules: a web page the user visits can make the browser send
//! requests to `127.0.0.1`. The Host check stops DNS-rebinding pages; for
//! cross-origin pages the browser itself refuses to send anything but
//! "simple" requests (`text/plain`, form encodings) without a CORS
//! preflight, which this daemon never grants. So a state-changing request
//! is accepted only when its body (if any) is JSON and its Origin (if any)
//! names the daemon: a page can then neither post a simple request nor pass
//! the preflight, whatever the auth mode.

use actix_web::http::Method;

/// POST, PUT, PATCH and DELETE change state; GET, HEAD and OPTIONS do not.
pub fn is_state_changing(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

/// Whether the request announces a body: a `Content-Length` other than 0,
/// or any `Transfer-Encoding` (a chunked body may turn out empty, but that
/// is not known before reading it, so it counts as a body).
pub fn has_body(content_length: Option<&str>, transfer_encoding: Option<&str>) -> bool {
    if transfer_encoding.is_some() {
        return true;
    }
    match content_length {
        None => false,
        // An unparsable length never reaches us (actix answers 400), but
        // if it did, assume a body rather than skip the check.
        Some(value) => value.trim().parse::<u64>().map_or(true, |n| n > 0),
    }
}

/// Whether a `Content-Type` value is JSON: `application/json`, or an
/// `application/*+json` type (e.g. `application/merge-patch+json`), with
/// any parameters (`; charset=utf-8`). The `+json` family is accepted
/// because it is JSON and, like `application/json`, is not one of the
/// CORS-safelisted types, so a browser must preflight it too.
pub fn is_json_content_type(value: &str) -> bool {
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let Some(subtype) = essence.strip_prefix("application/") else {
        return false;
    };
    let valid_token = !subtype.is_empty()
        && subtype
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
    valid_token && (subtype == "json" || (subtype.len() > 5 && subtype.ends_with("+json")))
}

/// Whether an `Origin` header names the daemon: scheme `http` or `https`
/// and a host:port in `allowed_hosts` (the Host-check list, lowercase). A
/// missing port means the scheme's default, so `http://proxy.example`
/// matches an allowed `proxy.example` or `proxy.example:80`. `null` (sent
/// by sandboxed frames, `file:` pages and some redirects) never matches.
pub fn origin_allowed(origin: &str, allowed_hosts: &[String]) -> bool {
    let origin = origin.trim().to_ascii_lowercase();
    let (authority, default_port) = if let Some(rest) = origin.strip_prefix("http://") {
        (rest, 80)
    } else if let Some(rest) = origin.strip_prefix("https://") {
        (rest, 443)
    } else {
        return false;
    };
    let Some((host, port)) = split_authority(authority) else {
        return false;
    };
    let port = port.unwrap_or(default_port);
    let with_port = format!("{host}:{port}");
    let allowed = |candidate: &str| allowed_hosts.iter().any(|h| h == candidate);
    allowed(&with_port) || (port == default_port && allowed(host))
}

/// Splits `host[:port]` (`[v6]` hosts in brackets). `None` for anything an
/// Origin cannot hold: a path, user info, an empty host, a bad port.
fn split_authority(authority: &str) -> Option<(&str, Option<u16>)> {
    if authority.is_empty() || authority.contains(['/', '?', '#', '@', ' ']) {
        return None;
    }
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        match rest {
            "" => (host, None),
            _ => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() || (!host.starts_with('[') && host.contains(':')) {
        return None;
    }
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
    };
    Some((host, port))
}

/// The token of an `Authorization: Bearer <token>` header. The scheme name
/// is case-insensitive (RFC 7235 §2.1); spaces around the token are
/// ignored. `None` for other schemes or an empty token.
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim_start().split_once([' ', '\t'])?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> Vec<String> {
        [
            "127.0.0.1:7430",
            "[::1]:7430",
            "localhost:7430",
            "proxy.example",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn state_changing_methods() {
        for m in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(is_state_changing(&m), "{m}");
        }
        for m in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert!(!is_state_changing(&m), "{m}");
        }
    }

    #[test]
    fn body_presence() {
        assert!(!has_body(None, None));
        assert!(!has_body(Some("0"), None));
        assert!(has_body(Some("12"), None));
        assert!(has_body(None, Some("chunked")));
        assert!(has_body(Some("0"), Some("chunked")));
        assert!(has_body(Some("nope"), None));
    }

    #[test]
    fn json_content_types() {
        for ok in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/json;charset=UTF-8",
            "application/merge-patch+json",
            "application/vnd.kirocrew.v1+json; q=1",
        ] {
            assert!(is_json_content_type(ok), "{ok}");
        }
        for bad in [
            "",
            "text/plain",
            "text/plain; charset=utf-8",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "text/json",
            "application/jsonp",
            "application/+json",
            "application/json x",
            "application/",
            "json",
        ] {
            assert!(!is_json_content_type(bad), "{bad}");
        }
    }

    #[test]
    fn origins_must_name_the_daemon() {
        let hosts = hosts();
        for ok in [
            "http://127.0.0.1:7430",
            "HTTP://LOCALHOST:7430",
            "http://[::1]:7430",
            "https://127.0.0.1:7430",
            "http://proxy.example",
            "http://proxy.example:80",
            "https://proxy.example",
        ] {
            assert!(origin_allowed(ok, &hosts), "{ok}");
        }
        for bad in [
            "null",
            "",
            "http://evil.example",
            "http://127.0.0.1",
            "http://127.0.0.1:7431",
            "http://localhost:7430.evil.example",
            "http://evil.example#localhost:7430",
            "http://user@localhost:7430",
            "http://localhost:7430/",
            "ftp://localhost:7430",
            "file://",
            "http://proxy.example:8080",
            "http://::1:7430",
            "http://[::1]7430",
            "http://localhost:",
            "http://:7430",
            "http://localhost:99999",
        ] {
            assert!(!origin_allowed(bad, &hosts), "{bad}");
        }
    }

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER   abc  "), Some("abc"));
        assert_eq!(bearer_token("Bearer\tabc"), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearerabc"), None);
    }
}
