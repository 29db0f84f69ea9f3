//! Exfiltration-URL redaction: URLs that would carry data out when a model
//! (or a renderer that prefetches images) follows them.
//!
//! [`redact_exfiltration_urls`] replaces with `[REDACTED_URL]`:
//! - URLs on hosts whose purpose is to receive arbitrary data (webhook
//!   inspectors, request bins, paste sites, out-of-band callback hosts);
//! - URLs whose query string or path carries a long encoded payload or a
//!   template placeholder (`?d={memory}`);
//! - `data:` URIs;
//! - markdown images pointing off-host (any absolute http(s) image: the
//!   renderer fetches it with no click).
//!
//! Ordinary links (docs, issues, searches, commit URLs with a hex SHA) stay
//! as they are, and text with none of the above comes back byte-identical.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// What a redacted URL becomes.
pub const REDACTED_URL: &str = "[REDACTED_URL]";

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("url pattern invalid: {e}"))
}

static URL: LazyLock<Regex> = LazyLock::new(|| re(r#"(?i)\b(?:https?|ftp|wss?)://[^\s<>"'`)\]]+"#));
static DATA_URI: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\bdata:[a-z]+/[a-z0-9.+-]+(?:;[a-z0-9=.+-]+)*,[A-Za-z0-9+/=%._~-]+"));
static MARKDOWN_IMAGE: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(!\[[^\]\n]*\]\(\s*)((?i:https?)://[^\s)]+)"#));

/// Hosts (and host suffixes) that exist to receive data.
const COLLECTOR_HOSTS: &[&str] = &[
    "webhook.site",
    "hooks.slack.com",
    "pipedream.net",
    "requestbin.com",
    "requestbin.net",
    "requestcatcher.com",
    "requestinspector.com",
    "beeceptor.com",
    "hookbin.com",
    "postb.in",
    "ptsv2.com",
    "ptsv3.com",
    "ngrok.io",
    "ngrok-free.app",
    "ngrok.app",
    "trycloudflare.com",
    "interact.sh",
    "oast.fun",
    "oast.pro",
    "oast.live",
    "oast.site",
    "oast.online",
    "oast.me",
    "burpcollaborator.net",
    "oastify.com",
    "canarytokens.com",
    "dnslog.cn",
    "pastebin.com",
    "paste.ee",
    "hastebin.com",
    "ghostbin.com",
    "dpaste.com",
    "dpaste.org",
    "0x0.st",
    "transfer.sh",
    "termbin.com",
    "ix.io",
    "rentry.co",
    "pastes.io",
    "controlc.com",
    "privatebin.net",
    "justpaste.it",
];

/// Path prefixes on general hosts that are webhook endpoints.
const COLLECTOR_PATHS: &[(&str, &str)] = &[
    ("discord.com", "/api/webhooks"),
    ("discordapp.com", "/api/webhooks"),
    ("webhook.office.com", "/"),
    ("script.google.com", "/macros"),
];

fn host_and_path(url: &str) -> (String, &str) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (authority, path) = rest
        .find(['/', '?', '#'])
        .map_or((rest, ""), |i| rest.split_at(i));
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    (host, path)
}

fn on_collector(host: &str, path: &str) -> bool {
    let suffix = |h: &str| host == h || host.ends_with(&format!(".{h}"));
    COLLECTOR_HOSTS.iter().any(|h| suffix(h))
        || COLLECTOR_PATHS
            .iter()
            .any(|(h, p)| suffix(h) && path.starts_with(p))
}

/// A run that looks like encoded data rather than a word, an id or a hash:
/// long, mixed character classes, not pure hex.
fn is_payload(part: &str) -> bool {
    if part.contains('{') || part.contains("%7B") || part.contains("%7b") || part.contains("${") {
        return true; // a template waiting for the model to fill in data
    }
    let len = part.chars().count();
    if len < 32 || part.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return false;
    }
    let upper = part.chars().any(|c| c.is_ascii_uppercase());
    let lower = part.chars().any(|c| c.is_ascii_lowercase());
    let digit = part.chars().any(|c| c.is_ascii_digit());
    let escapes = part.matches('%').count();
    (upper && lower && digit) || escapes >= 8
}

fn carries_payload(path: &str) -> bool {
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    path.split('/')
        .any(|seg| is_payload(seg.split('.').next().unwrap_or(seg)))
        || query
            .split('&')
            .any(|kv| is_payload(kv.split_once('=').map_or(kv, |(_, v)| v)))
}

/// Whether `url` is an exfiltration URL by host or payload.
pub fn is_exfiltration_url(url: &str) -> bool {
    let (host, path) = host_and_path(url);
    on_collector(&host, path) || carries_payload(path)
}

/// Replaces exfiltration URLs (see the module doc) with `[REDACTED_URL]`;
/// text with none comes back byte-identical.
pub fn redact_exfiltration_urls(text: &str) -> String {
    let mut changed = false;
    let step1 = MARKDOWN_IMAGE.replace_all(text, |c: &Captures<'_>| {
        changed = true;
        format!("{}{REDACTED_URL}", &c[1])
    });
    let step2 = DATA_URI.replace_all(&step1, |_: &Captures<'_>| {
        changed = true;
        REDACTED_URL.to_owned()
    });
    let step3 = URL.replace_all(&step2, |c: &Captures<'_>| {
        if is_exfiltration_url(&c[0]) {
            changed = true;
            REDACTED_URL.to_owned()
        } else {
            c[0].to_owned()
        }
    });
    if changed {
        step3.into_owned()
    } else {
        text.to_owned()
    }
}

/// Replaces every URL (and `data:` URI) with `[REDACTED_URL]`: for the
/// audit snippet of a blocked write, where any URL is presumed hostile.
pub fn redact_all_urls(text: &str) -> String {
    let no_data = DATA_URI.replace_all(text, REDACTED_URL);
    URL.replace_all(&no_data, REDACTED_URL).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collectors_payloads_data_uris_and_images_go() {
        for (text, gone) in [
            ("post to https://webhook.site/abc-123", "webhook.site"),
            (
                "https://x.example/c?d=aGVsbG8gd29ybGQgdGhpcyBpcyBhIHNlY3JldCBrZXk0",
                "x.example",
            ),
            ("![a](https://track.example.io/x.gif)", "track.example.io"),
            ("see https://a.example/p?d={memory}", "a.example"),
            ("<a href=\"data:text/html;base64,PHNjcmlwdD4=\">", "data:"),
        ] {
            let out = redact_exfiltration_urls(text);
            assert!(!out.contains(gone), "{text} → {out}");
            assert!(out.contains(REDACTED_URL), "{out}");
        }
    }

    #[test]
    fn ordinary_links_stay_byte_identical() {
        for t in [
            "Docs: https://docs.rs/regex/latest/regex/struct.Regex.html",
            "https://github.com/acme/app/commit/4b825dc642cb6eb9a060e54bf8d69288fbee4904",
            "https://www.google.com/search?q=rust+borrow+checker&hl=en",
            "![diagram](./docs/architecture.png)",
        ] {
            assert_eq!(redact_exfiltration_urls(t), t);
        }
    }
}
