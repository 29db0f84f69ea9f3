//! Model context windows (spec "Dynamic budget scaling → Fail-safe
//! fallbacks"): a window is a property of the model, so the lookup takes a
//! model id only. Known families come from a built-in table, extended or
//! overridden by config `context.model_windows`; `""`, `auto` and unknown
//! ids resolve to `None`, the 1M reference, so an unknown model never
//! silently shrinks the budget.

use std::collections::BTreeMap;

/// Built-in windows (tokens), matched as a case-insensitive substring of
/// the model id, first match wins (so more specific entries come first).
const KNOWN_WINDOWS: &[(&str, u64)] = &[
    ("[1m]", 1_000_000),
    ("claude-sonnet-4", 200_000),
    ("claude-opus-4", 200_000),
    ("claude-3", 200_000),
    ("claude-haiku", 200_000),
    ("gpt-4.1", 1_000_000),
    ("gpt-4o", 128_000),
    ("gpt-5", 400_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-1.5-pro", 2_000_000),
    ("gemini-2", 1_000_000),
    ("gemini", 1_000_000),
    ("llama-3.1", 128_000),
    ("llama3.1", 128_000),
    ("llama-3.2", 128_000),
    ("qwen2.5", 32_768),
    ("qwen3", 32_768),
    ("mistral-large", 128_000),
    ("deepseek", 128_000),
];

/// The window of `model` in tokens, or `None` for the reference.
/// `overrides` (config `context.model_windows`, exact ids, any case) win
/// over the built-in table.
pub fn resolve_model_window(model: Option<&str>, overrides: &BTreeMap<String, u64>) -> Option<u64> {
    let model = model?.trim();
    if model.is_empty() || model.eq_ignore_ascii_case("auto") {
        return None;
    }
    let lower = model.to_ascii_lowercase();
    if let Some((_, w)) = overrides
        .iter()
        .find(|(k, _)| k.to_ascii_lowercase() == lower)
    {
        return (*w > 0).then_some(*w);
    }
    KNOWN_WINDOWS
        .iter()
        .find(|(pattern, _)| lower.contains(pattern))
        .map(|(_, w)| *w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_unknown_and_auto() {
        let none = BTreeMap::new();
        assert_eq!(
            resolve_model_window(Some("claude-sonnet-4-5"), &none),
            Some(200_000)
        );
        assert_eq!(
            resolve_model_window(Some("claude-sonnet-4-5[1m]"), &none),
            Some(1_000_000)
        );
        assert_eq!(
            resolve_model_window(Some("GPT-4o-mini"), &none),
            Some(128_000)
        );
        assert_eq!(resolve_model_window(Some("auto"), &none), None);
        assert_eq!(resolve_model_window(Some(""), &none), None);
        assert_eq!(resolve_model_window(None, &none), None);
        assert_eq!(resolve_model_window(Some("my-private-model"), &none), None);
        let mut overrides = BTreeMap::new();
        overrides.insert("My-Private-Model".to_owned(), 64_000);
        overrides.insert("gpt-4o".to_owned(), 256_000);
        assert_eq!(
            resolve_model_window(Some("my-private-model"), &overrides),
            Some(64_000)
        );
        assert_eq!(
            resolve_model_window(Some("gpt-4o"), &overrides),
            Some(256_000)
        );
    }
}
