//! Credential redaction, and the audit snippet of a blocked write.
//!
//! [`redact_credentials`] replaces secrets of known shapes with
//! `[REDACTED]`: AWS access key ids and secret keys, PEM private keys,
//! Slack / GitHub / GitLab / Stripe / OpenAI / Anthropic / Google /
//! SendGrid / npm / PyPI / Hugging Face tokens, JWTs, bearer and basic
//! authorization values, passwords in URLs, `password=…`-style
//! assignments, and base64 blobs that decode to any of these. Text with
//! nothing to redact comes back byte-identical (the operator command and
//! skill writers rely on that).
//!
//! The shapes are from the issuers' documented formats; labels (`token:`,
//! `password=`) are kept and only the value is replaced, so a redacted
//! config still reads as one.

use std::borrow::Cow;
use std::sync::LazyLock;

use base64::engine::general_purpose::{STANDARD, URL_SAFE};
use base64::Engine;
use regex::{Captures, Regex};

use super::exfil_urls::redact_all_urls;

/// What a redacted secret becomes.
pub const REDACTED: &str = "[REDACTED]";

/// Maximum characters of a blocked value kept in its audit snippet.
pub const SNIPPET_CHARS: usize = 200;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("credential pattern invalid: {e}"))
}

/// Secrets recognisable by their own shape: the whole match goes.
static SHAPES: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        ("private_key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)"),
        ("aws_key_id", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b"),
        ("github", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\b"),
        ("gitlab", r"\bgl(?:pat|dt|rt|ptt|ft|cbt|oas|imt|soat|agent)-[A-Za-z0-9_-]{20,}"),
        ("slack", r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
        ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        ("stripe", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("openai_anthropic", r"\bsk-(?:ant-[a-z0-9]+-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        ("google", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("sendgrid", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
        ("npm", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("pypi", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
        ("huggingface", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ]
    .into_iter()
    .map(|(name, p)| (name, re(p)))
    .collect()
});

/// `Authorization: Bearer …` values (group 2).
static BEARER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{16,})"));
/// `Basic …` values that decode to `user:password` (group 2).
static BASIC: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{8,}={0,2})"));
/// `scheme://user:password@host` (group 2 is the password).
static URL_PASSWORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)(@)"));
/// `password = value`, `"api_key": "value"`, `AWS_SECRET_ACCESS_KEY=value`
/// (group 2 is the value).
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?i)(\b[\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"#,
        r#"auth[_-]?key|credentials?|private[_-]?key|client[_-]?secret|_authtoken)[\w.-]*["']?\s*(?:[:=]|\s(?:is|was)\s)\s*["']?)"#,
        r#"([^\s"',;]{6,})"#
    ))
});
/// AWS secret access keys: 40 base64 characters after an AWS-and-secret
/// label (group 2).
static AWS_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(aws[\w\s-]{0,25}?secret[\w\s-]{0,20}?(?:[:=]|\sis)\s*[\x22']?|secret[\w\s-]{0,15}?for\s+\S+\s*:\s*)([A-Za-z0-9/+]{40})\b",
    )
});
/// Candidate base64 blobs.
static BLOB: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z0-9+/_-]{24,}={0,2}"));

/// Values that only name a secret: placeholders, templates, variables.
fn is_placeholder(value: &str) -> bool {
    let v = value.to_ascii_lowercase();
    v.starts_with(['<', '$', '{', '%', '*', '(', '['])
        || v.contains("your")
        || v.contains("xxxx")
        || v.contains("example")
        || v.contains("redacted")
        || v.contains("changeme")
        || v.contains('(')
        || v.chars().all(|c| c == '*' || c == 'x' || c == '.')
        // `process.env.JWT_SECRET`, `self._token`, `os.environ`: code.
        || (value.contains('.')
            && value.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
            && !value.chars().any(|c| c.is_ascii_digit()))
}

/// A value that looks like a real secret rather than a word: a digit or
/// symbol somewhere, or a long mixed-case run.
fn looks_secret(value: &str) -> bool {
    let digit = value.chars().any(|c| c.is_ascii_digit());
    let symbol = value
        .chars()
        .any(|c| !c.is_alphanumeric() && c != '_' && c != '-');
    let upper = value.chars().any(|c| c.is_ascii_uppercase());
    let lower = value.chars().any(|c| c.is_ascii_lowercase());
    !is_placeholder(value)
        && (digit || symbol || (upper && lower && value.len() >= 12) || value.len() >= 20)
}

fn decodes_to_credentials(blob: &str) -> bool {
    let trimmed = blob.trim_end_matches('=');
    [&STANDARD, &URL_SAFE]
        .iter()
        .filter_map(|e| e.decode(blob).ok().or_else(|| e.decode(trimmed).ok()))
        .filter_map(|bytes| String::from_utf8(bytes).ok())
        .any(|text| redact_once(&text).is_some())
}

fn basic_is_credentials(value: &str) -> bool {
    STANDARD
        .decode(value)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .is_some_and(|s| s.contains(':') && !s.contains(char::is_whitespace) && s.len() >= 3)
}

/// Applies `re`, replacing group 2 by [`REDACTED`] when `keep` says so.
fn replace_value(text: &str, re: &Regex, redact_it: impl Fn(&str) -> bool) -> Option<String> {
    let mut changed = false;
    let out = re.replace_all(text, |c: &Captures<'_>| {
        let value = c.get(2).map_or("", |m| m.as_str());
        if redact_it(value) {
            changed = true;
            format!("{}{REDACTED}{}", &c[1], c.get(3).map_or("", |m| m.as_str()))
        } else {
            c[0].to_owned()
        }
    });
    changed.then(|| out.into_owned())
}

/// Decides whether a captured value is a real secret.
type ValueTest = dyn Fn(&str) -> bool;

/// One pass of every credential rule; `None` when nothing matched.
fn redact_once(text: &str) -> Option<String> {
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    let mut changed = false;
    for (_, shape) in SHAPES.iter() {
        if shape.is_match(&current) {
            current = Cow::Owned(shape.replace_all(&current, REDACTED).into_owned());
            changed = true;
        }
    }
    let steps: [(&Regex, &ValueTest); 5] = [
        (&URL_PASSWORD, &|v: &str| !is_placeholder(v)),
        (&BEARER, &|v: &str| !is_placeholder(v) && v != REDACTED),
        (&BASIC, &basic_is_credentials),
        (&AWS_SECRET, &|v: &str| !is_placeholder(v)),
        (&ASSIGNMENT, &|v: &str| {
            v != REDACTED && !v.starts_with("[REDACTED") && looks_secret(v)
        }),
    ];
    for (re, pred) in steps {
        if let Some(next) = replace_value(&current, re, pred) {
            current = Cow::Owned(next);
            changed = true;
        }
    }
    changed.then(|| current.into_owned())
}

/// Replaces credential-shaped substrings with `[REDACTED]`; text with no
/// credential comes back unchanged, byte for byte.
pub fn redact_credentials(text: &str) -> String {
    let direct = redact_once(text);
    let base = direct.as_deref().unwrap_or(text);
    let mut blob_changed = false;
    let out = BLOB.replace_all(base, |c: &Captures<'_>| {
        let blob = &c[0];
        if decodes_to_credentials(blob) {
            blob_changed = true;
            REDACTED.to_owned()
        } else {
            blob.to_owned()
        }
    });
    if blob_changed {
        out.into_owned()
    } else {
        base.to_owned()
    }
}

/// The audit-safe snippet of a blocked value: every URL replaced (a URL in
/// a blocked write is presumed to be the exfiltration endpoint, and a
/// dashboard that renders or prefetches it would complete the beacon),
/// credentials redacted, then cut to [`SNIPPET_CHARS`] characters on a
/// char boundary.
pub fn redact(text: &str) -> String {
    let scrubbed = redact_credentials(&redact_all_urls(text));
    match scrubbed.char_indices().nth(SNIPPET_CHARS) {
        Some((cut, _)) => format!("{}…", &scrubbed[..cut]),
        None => scrubbed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_v1_cases_still_redact() {
        let text = "send AKIAABCDEFGHIJKLMNOP and password=hunter22 to https://evil.example/x?k=1 \
                    with token ghp_abcdefghijklmnopqrstuvwxyz0123456789 and xoxb-1234567890-abcdef";
        let out = redact(text);
        for leaked in ["AKIA", "hunter22", "evil.example", "ghp_", "xoxb-"] {
            assert!(!out.contains(leaked), "{leaked}: {out}");
        }
        assert!(out.contains("[REDACTED_URL]"));
    }

    #[test]
    fn keys_and_bearer_tokens_go_labels_stay() {
        let text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY----- \
                    Authorization: Bearer abcdefghijklmnop1234";
        let out = redact_credentials(text);
        assert!(!out.contains("MIIEabc"), "{out}");
        assert!(!out.contains("abcdefghijklmnop1234"), "{out}");
        assert!(out.contains("Authorization: Bearer [REDACTED]"), "{out}");
    }

    #[test]
    fn base64_wrapped_secrets_are_found() {
        let blob = STANDARD.encode("aws_access_key_id=AKIAIOSFODNN7EXAMPLE");
        let out = redact_credentials(&format!("config: {blob}"));
        assert_eq!(out, "config: [REDACTED]");
    }

    #[test]
    fn clean_text_is_byte_identical() {
        for t in [
            "let password = prompt_password(\"Password: \")?;",
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "API_KEY=${API_KEY}",
        ] {
            assert_eq!(redact_credentials(t), t);
        }
    }

    #[test]
    fn snippets_are_bounded_on_char_boundaries() {
        let long = "é".repeat(1000);
        assert_eq!(redact(&long).chars().count(), SNIPPET_CHARS + 1);
    }
}
