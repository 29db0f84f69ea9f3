//! Top-level keys of a frontmatter block, and the blocks they start.
//!
//! A top-level key line starts at column 0 with `key:` followed by a space,
//! a tab or the end of the line, and is neither a comment (`#`) nor a
//! sequence entry (`- `). A key's *block* runs from its line up to the next
//! top-level key line: the inverse of the key test rather than a list of
//! continuation shapes, so indented lines, interior blank lines, indentless
//! `- item` entries and comments all stay with the key they follow (spec:
//! the structured editor's preservation rule). The toggle, the editor and
//! the lenient reader share this one test.

/// The key of `line` (given without its line break) if it is a top-level
/// key line.
pub(super) fn top_level_key(line: &str) -> Option<&str> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let first = line.chars().next()?;
    if first.is_whitespace() || first == '#' || line == "-" || line.starts_with("- ") {
        return None;
    }
    let bytes = line.as_bytes();
    let colon = line
        .char_indices()
        .find(|&(i, c)| c == ':' && matches!(bytes.get(i + 1), None | Some(b' ') | Some(b'\t')))?;
    let key = line[..colon.0].trim_end();
    let key = key
        .strip_prefix('"')
        .and_then(|k| k.strip_suffix('"'))
        .or_else(|| key.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
        .unwrap_or(key);
    (!key.is_empty()).then_some(key)
}

/// One block of a frontmatter: its key (`None` for lines before the first
/// key) and its raw text, line endings included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct KeyBlock<'a> {
    /// The top-level key, or `None` for the preamble.
    pub key: Option<&'a str>,
    /// The block's lines exactly as in the file.
    pub text: &'a str,
}

/// Splits a frontmatter block into its preamble and key blocks; the texts
/// concatenate back to `block` exactly.
pub(super) fn blocks(block: &str) -> Vec<KeyBlock<'_>> {
    let mut out: Vec<KeyBlock<'_>> = Vec::new();
    let mut start = 0;
    let mut key: Option<&str> = None;
    for (offset, line) in line_spans(block) {
        if let Some(k) = top_level_key(line) {
            if offset > start {
                out.push(KeyBlock {
                    key,
                    text: &block[start..offset],
                });
            }
            start = offset;
            key = Some(k);
        }
    }
    if block.len() > start {
        out.push(KeyBlock {
            key,
            text: &block[start..],
        });
    }
    out
}

/// Each line's byte offset and text (without `\n`; a `\r` stays).
pub(super) fn line_spans(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split_inclusive('\n').map(move |raw| {
        let at = offset;
        offset += raw.len();
        (at, raw.strip_suffix('\n').unwrap_or(raw))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_test() {
        assert_eq!(top_level_key("name: x"), Some("name"));
        assert_eq!(top_level_key("name:"), Some("name"));
        assert_eq!(top_level_key("allowed-tools:\tRead"), Some("allowed-tools"));
        assert_eq!(top_level_key("\"quoted\": 1\r"), Some("quoted"));
        assert_eq!(top_level_key("  inject_on_trigger: false"), None);
        assert_eq!(top_level_key("# name: x"), None);
        assert_eq!(top_level_key("- item: x"), None);
        assert_eq!(top_level_key("https://example.com"), None);
        assert_eq!(top_level_key(": x"), None);
        assert_eq!(top_level_key(""), None);
    }

    #[test]
    fn blocks_cover_the_text() {
        let fm = "# lead\nname: a\nmeta:\n  k: v\n\n# note\n- loose\ntags:\n- x\n";
        let b = blocks(fm);
        let keys: Vec<_> = b.iter().map(|b| b.key).collect();
        assert_eq!(keys, [None, Some("name"), Some("meta"), Some("tags")]);
        assert_eq!(b[2].text, "meta:\n  k: v\n\n# note\n- loose\n");
        assert_eq!(b.iter().map(|b| b.text).collect::<String>(), fm);
    }
}
