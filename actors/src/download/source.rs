//! Where the embedding model comes from, resolved once at start-up.
//!
//! Spec: "Model Download Manager" (URL resolution order: env var, then the
//! `memory.embed_model_url` config knob, then the built-in default; the
//! sha256 pin is the trust anchor).

use serde::Serialize;

/// The built-in model URL (Qwen3-Embedding-0.6B, Q8_0 GGUF, ~610 MB).
pub const DEFAULT_MODEL_URL: &str =
    "https://huggingface.co/Qwen/Qwen3-Embedding-0.6B-GGUF/resolve/main/Qwen3-Embedding-0.6B-Q8_0.gguf";

/// The sha256 of the built-in model: the spec's trust anchor. A tampered
/// object or mirror can only fail verification against it.
pub const DEFAULT_MODEL_SHA256: &str =
    "06507c7b42688469c4e7298b0a1e16deff06caf291cf0a5b278c308249c3e439";

/// The file name the built-in model is installed under in the models dir.
pub const DEFAULT_MODEL_FILE_NAME: &str = "qwen3-embedding-0.6b.gguf";

/// Environment variable that overrides the model URL.
pub const MODEL_URL_ENV: &str = "KIROCREW_EMBED_MODEL_URL";

/// Environment variable that pins the sha256 of a custom model URL.
pub const MODEL_SHA256_ENV: &str = "KIROCREW_EMBED_MODEL_SHA256";

/// The extension every installed model carries.
const GGUF_EXT: &str = ".gguf";

/// Installed name when a URL yields no usable last path segment.
const FALLBACK_FILE_STEM: &str = "model";

/// Long names are cut so the staging name (which adds pid and nonce) stays
/// well under common 255-byte file name limits.
const MAX_FILE_NAME_LEN: usize = 128;

/// One model to fetch and where it lands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelSource {
    /// HTTP(S) URL of the GGUF file.
    pub url: String,
    /// Expected sha256 (lowercase hex); `None` installs without a checksum
    /// check (only for custom URLs without a configured pin).
    pub sha256: Option<String>,
    /// File name inside the models directory.
    pub file_name: String,
}

impl ModelSource {
    /// The built-in model with its pinned digest.
    pub fn builtin() -> Self {
        Self {
            url: DEFAULT_MODEL_URL.to_owned(),
            sha256: Some(DEFAULT_MODEL_SHA256.to_owned()),
            file_name: DEFAULT_MODEL_FILE_NAME.to_owned(),
        }
    }

    /// [`resolve_source`] with the environment variables of this process.
    pub fn from_env(config_url: &str, config_sha256: &str) -> Self {
        let env_url = std::env::var(MODEL_URL_ENV).ok();
        let env_sha = std::env::var(MODEL_SHA256_ENV).ok();
        resolve_source(
            env_url.as_deref(),
            config_url,
            config_sha256,
            env_sha.as_deref(),
        )
    }
}

/// Picks the model source: env URL, else config URL, else the built-in.
///
/// Empty or blank values count as unset. A custom URL takes the env pin,
/// else the config pin. Without either it is taken for a mirror of the
/// built-in model and verified against the built-in pin, installed under the
/// built-in file name: the spec makes that digest "the trust anchor for
/// every source", so nothing is ever installed unverified. A different model
/// needs its own pin. The built-in URL always keeps the built-in pin.
pub fn resolve_source(
    env_url: Option<&str>,
    config_url: &str,
    config_sha256: &str,
    env_sha256: Option<&str>,
) -> ModelSource {
    let url = non_blank(env_url).or_else(|| non_blank(Some(config_url)));
    let pin = non_blank(env_sha256)
        .or_else(|| non_blank(Some(config_sha256)))
        .map(str::to_ascii_lowercase);

    let url = match url {
        Some(url) if url != DEFAULT_MODEL_URL => url,
        _ => {
            if pin.as_deref().is_some_and(|p| p != DEFAULT_MODEL_SHA256) {
                tracing::warn!(
                    "ignoring the configured sha256 pin: it only applies to a custom model URL"
                );
            }
            return ModelSource::builtin();
        }
    };
    let Some(pin) = pin else {
        return ModelSource {
            url: url.to_owned(),
            ..ModelSource::builtin()
        };
    };
    match &pin {
        pin if !is_sha256_hex(pin) => tracing::warn!(
            url,
            pin = pin.as_str(),
            "configured sha256 pin is not 64 hex digits; every download will fail verification"
        ),
        _ => {}
    }
    ModelSource {
        url: url.to_owned(),
        sha256: Some(pin),
        file_name: file_name_from_url(url),
    }
}

/// A safe installed file name from a URL's last path segment.
///
/// Query and fragment are dropped; anything outside `[A-Za-z0-9._-]` becomes
/// `_`; leading dots are stripped (no hidden files, no `..`); the name is cut
/// to a bounded length and always ends in `.gguf`, the only format the
/// embedder loads.
pub fn file_name_from_url(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    let path = path.split_once("://").map_or(path, |(_, rest)| rest);
    // The first segment after the scheme is the host, never a file name.
    let segment = path
        .split_once('/')
        .map_or("", |(_, p)| p)
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let cleaned: String = segment
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = cleaned.trim_start_matches('.').trim_end_matches('.');
    let mut name = if name.is_empty() {
        FALLBACK_FILE_STEM.to_owned()
    } else {
        name.to_owned()
    };
    if !name.to_ascii_lowercase().ends_with(GGUF_EXT) {
        name.push_str(GGUF_EXT);
    }
    if name.len() > MAX_FILE_NAME_LEN {
        // Only ASCII is left, so byte slicing cannot split a character.
        let ext = &name[name.len() - GGUF_EXT.len()..];
        name = format!("{}{ext}", &name[..MAX_FILE_NAME_LEN - GGUF_EXT.len()]);
    }
    name
}

/// Whether `s` is a lowercase 64-digit hex sha256.
pub(super) fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn non_blank(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIRROR: &str = "https://mirror.example/models/Qwen3-Q8.gguf";

    fn pin() -> String {
        "ab".repeat(32)
    }

    #[test]
    fn defaults_to_the_builtin_source() {
        assert_eq!(resolve_source(None, "", "", None), ModelSource::builtin());
        assert_eq!(
            resolve_source(Some("  "), " ", "", None),
            ModelSource::builtin()
        );
    }

    #[test]
    fn env_url_beats_config_url() {
        let s = resolve_source(Some(MIRROR), "https://other.example/x.gguf", "", None);
        assert_eq!(s.url, MIRROR);
        // Unpinned: a mirror of the built-in model, held to its pin.
        assert_eq!(s.file_name, DEFAULT_MODEL_FILE_NAME);
        assert_eq!(s.sha256.as_deref(), Some(DEFAULT_MODEL_SHA256));
        let pinned = resolve_source(Some(MIRROR), "", &pin(), None);
        assert_eq!(pinned.file_name, "Qwen3-Q8.gguf");
    }

    #[test]
    fn config_url_beats_builtin() {
        let s = resolve_source(None, MIRROR, "", None);
        assert_eq!(s.url, MIRROR);
    }

    #[test]
    fn env_pin_beats_config_pin_and_is_lowercased() {
        let env_pin = "CD".repeat(32);
        let s = resolve_source(None, MIRROR, &pin(), Some(&env_pin));
        assert_eq!(s.sha256.as_deref(), Some("cd".repeat(32).as_str()));
        let s = resolve_source(None, MIRROR, &pin(), None);
        assert_eq!(s.sha256.as_deref(), Some(pin().as_str()));
    }

    #[test]
    fn the_builtin_url_keeps_the_builtin_pin() {
        let s = resolve_source(None, DEFAULT_MODEL_URL, &pin(), Some(&pin()));
        assert_eq!(s, ModelSource::builtin());
    }

    #[test]
    fn file_names_are_sanitized() {
        assert_eq!(file_name_from_url("https://h/a/b/m.gguf?x=1#f"), "m.gguf");
        assert_eq!(
            file_name_from_url("https://h/a/model.bin"),
            "model.bin.gguf"
        );
        assert_eq!(file_name_from_url("https://h/a/M.GGUF"), "M.GGUF");
        assert_eq!(file_name_from_url("https://h/a/..%2Fetc"), "_2Fetc.gguf");
        assert_eq!(
            file_name_from_url("https://h/a/my model.gguf"),
            "my_model.gguf"
        );
        assert_eq!(file_name_from_url("https://h/"), "model.gguf");
        assert_eq!(file_name_from_url("https://h"), "model.gguf");
        assert_eq!(file_name_from_url("https://h/a/..."), "model.gguf");
        assert_eq!(file_name_from_url("https://h/a/.gguf"), "gguf.gguf");
        assert_eq!(file_name_from_url("https://h/a/x."), "x.gguf");
    }

    #[test]
    fn long_file_names_are_cut_but_keep_the_extension() {
        let long = format!("https://h/{}.gguf", "a".repeat(300));
        let name = file_name_from_url(&long);
        assert_eq!(name.len(), MAX_FILE_NAME_LEN);
        assert!(name.ends_with(".gguf"));
        let long = format!("https://h/{}", "b".repeat(300));
        let name = file_name_from_url(&long);
        assert_eq!(name.len(), MAX_FILE_NAME_LEN);
        assert!(name.ends_with(".gguf"));
    }

    #[test]
    fn sha256_hex_shape() {
        assert!(is_sha256_hex(DEFAULT_MODEL_SHA256));
        assert!(!is_sha256_hex(&"AB".repeat(32)));
        assert!(!is_sha256_hex("abc"));
    }
}
