//! The structured editor (`PUT /api/skills/{name}` with fields, `kirocrew
//! skills edit` with flags) and the inject-on-trigger toggle: both rewrite
//! frontmatter without disturbing what they do not model.
//!
//! Preservation rule (spec: "The dashboard's structured skill editor"): the
//! editor models five keys (`name`, `description`, `always`, `triggers`,
//! `inject_on_trigger`). Each other key's block (its line up to the next
//! top-level key, [`super::keys`]) is re-emitted byte for byte, never
//! re-serialized, so lists, nested maps, comments and block scalars keep
//! their exact type and text. A modelled key the edit sets is re-emitted
//! from the edit's value in place of its first block (a comment inside that
//! block goes with it: the editor owns those keys); a modelled key the edit
//! leaves unset (`None`) keeps its original block verbatim. Keys the edit
//! adds go after the last block. Line endings follow the block's (CRLF
//! stays CRLF).
//!
//! The toggle ([`set_inject_line`]) edits only column-0
//! `inject_on_trigger:` lines: an indented one sits inside a block scalar
//! (prose that documents the flag) and is left alone. `inject = true`
//! removes the key, since injecting is the default and an absent key says
//! so honestly; `false` writes `inject_on_trigger: false`.

use serde::Deserialize;

use super::frontmatter::{split, FrontmatterState};
use super::keys::{blocks, line_spans, top_level_key};

/// The keys the structured editor owns.
pub(super) const MODELLED_KEYS: [&str; 5] = [
    "name",
    "description",
    "always",
    "triggers",
    "inject_on_trigger",
];

/// A structured edit: `None` leaves a field (and its original lines) alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillEdit {
    /// `name:` (empty removes it).
    pub name: Option<String>,
    /// `description:` (empty removes it).
    pub description: Option<String>,
    /// `always:` (false removes it).
    pub always: Option<bool>,
    /// `triggers:` (empty removes it).
    pub triggers: Option<Vec<String>>,
    /// `inject_on_trigger:` (true removes it: the default).
    pub inject_on_trigger: Option<bool>,
    /// The Markdown after the frontmatter.
    pub body: Option<String>,
}

/// Why a rewrite cannot be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RewriteRefusal {
    /// The file has no frontmatter block (the toggle refuses these).
    NoFrontmatter,
    /// An opening `---` without a closing one.
    Unterminated,
}

/// Applies `edit` to the SKILL.md text `original`.
pub(super) fn apply_edit(original: &str, edit: &SkillEdit) -> Result<String, RewriteRefusal> {
    let doc = split(original);
    let (head, block, tail, body) = match doc.state {
        FrontmatterState::Unterminated => return Err(RewriteRefusal::Unterminated),
        FrontmatterState::Absent => ("---\n", "", "---\n", doc.body),
        FrontmatterState::Present => {
            let block_end = doc.block_start + doc.block.len();
            let body_start = original.len() - doc.body.len();
            (
                &original[..doc.block_start],
                doc.block,
                &original[block_end..body_start],
                doc.body,
            )
        }
    };
    let nl = if block.contains("\r\n") || head.ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut emitted = [false; 5];
    let mut out = String::with_capacity(original.len() + 64);
    for b in blocks(block) {
        let slot = b
            .key
            .and_then(|k| MODELLED_KEYS.iter().position(|m| *m == k));
        match slot {
            Some(i) if field_set(edit, i) => {
                if !emitted[i] {
                    emitted[i] = true;
                    out.push_str(&emit(edit, i, nl));
                }
            }
            _ => out.push_str(b.text),
        }
    }
    for (i, done) in emitted.iter().enumerate() {
        if !done && field_set(edit, i) {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push_str(nl);
            }
            out.push_str(&emit(edit, i, nl));
        }
    }
    let body = edit.body.as_deref().unwrap_or(body);
    Ok(format!("{head}{out}{tail}{body}"))
}

fn field_set(edit: &SkillEdit, i: usize) -> bool {
    match i {
        0 => edit.name.is_some(),
        1 => edit.description.is_some(),
        2 => edit.always.is_some(),
        3 => edit.triggers.is_some(),
        _ => edit.inject_on_trigger.is_some(),
    }
}

/// The line for modelled key `i`, or nothing when the value is the default.
fn emit(edit: &SkillEdit, i: usize, nl: &str) -> String {
    let line = match i {
        0 => edit
            .name
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|s| format!("name: {}", yaml_string(s))),
        1 => edit
            .description
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|s| format!("description: {}", yaml_string(s))),
        2 => (edit.always == Some(true)).then(|| "always: true".to_owned()),
        3 => edit.triggers.as_ref().filter(|t| !t.is_empty()).map(|t| {
            let items: Vec<String> = t.iter().map(|s| json_string(s)).collect();
            format!("triggers: [{}]", items.join(", "))
        }),
        _ => (edit.inject_on_trigger == Some(false)).then(|| "inject_on_trigger: false".to_owned()),
    };
    line.map(|l| format!("{l}{nl}")).unwrap_or_default()
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// `s` as a YAML scalar: plain when that reads back as the same string,
/// else double-quoted (a JSON string is a valid YAML double-quoted scalar).
pub(super) fn yaml_string(s: &str) -> String {
    let plain_chars = s
        .chars()
        .all(|c| c.is_alphanumeric() || " -_.,()/;?+=~'".contains(c));
    let starts_ok = s
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '(' || c == '/');
    let reserved = matches!(
        s.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~" | "y" | "n"
    ) || s.parse::<f64>().is_ok();
    if plain_chars && starts_ok && !reserved && s.trim() == s {
        s.to_owned()
    } else {
        json_string(s)
    }
}

/// The toggle's edit: `Ok(None)` when the file already says what was
/// asked.
pub(super) fn set_inject_line(
    original: &str,
    inject: bool,
) -> Result<Option<String>, RewriteRefusal> {
    let doc = split(original);
    match doc.state {
        FrontmatterState::Absent => return Err(RewriteRefusal::NoFrontmatter),
        FrontmatterState::Unterminated => return Err(RewriteRefusal::Unterminated),
        FrontmatterState::Present => {}
    }
    let nl = if doc.block.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut block = String::with_capacity(doc.block.len() + 32);
    let mut written = false;
    for (offset, line) in line_spans(doc.block) {
        if top_level_key(line) == Some("inject_on_trigger") {
            // `false` replaces the first such line in place; duplicates
            // and (for `true`) the key itself go.
            if !inject && !written {
                written = true;
                block.push_str("inject_on_trigger: false");
                block.push_str(nl);
            }
            continue;
        }
        let end = offset + line.len();
        let with_break = doc
            .block
            .get(offset..(end + 1).min(doc.block.len()))
            .unwrap_or(line);
        block.push_str(with_break);
    }
    if !inject && !written {
        if !block.is_empty() && !block.ends_with('\n') {
            block.push_str(nl);
        }
        block.push_str("inject_on_trigger: false");
        block.push_str(nl);
    }
    if block == doc.block {
        return Ok(None);
    }
    let block_end = doc.block_start + doc.block.len();
    Ok(Some(format!(
        "{}{}{}",
        &original[..doc.block_start],
        block,
        &original[block_end..]
    )))
}

#[cfg(test)]
mod tests {
    use super::super::frontmatter::parse;
    use super::*;

    const RICH: &str = "---\n# leading comment\nname: old\nmetadata:\n  author: x\n  nested:\n    deep: [1, 2]\n\n  # inner comment\nallowed-tools:\n- Read\n- Bash\ndescription: >\n  folded old\n  text\nnotes: |\n  inject_on_trigger: false\n  literal\nversion: 1.0 # trailing\n---\n# Body\n";

    fn unmodelled(text: &str) -> Vec<String> {
        blocks(split(text).block)
            .into_iter()
            .filter(|b| !b.key.is_some_and(|k| MODELLED_KEYS.contains(&k)))
            .map(|b| b.text.to_owned())
            .collect()
    }

    #[test]
    fn editing_modelled_fields_keeps_every_other_key_byte_identical() {
        let edit = SkillEdit {
            name: Some("new-name".into()),
            description: Some("Use when: deploying".into()),
            always: Some(true),
            triggers: Some(vec!["deploy".into(), "!draft".into()]),
            inject_on_trigger: Some(false),
            body: None,
        };
        let out = apply_edit(RICH, &edit).unwrap();
        assert_eq!(unmodelled(&out), unmodelled(RICH));
        assert!(out.ends_with("---\n# Body\n"));
        let m = parse(&out);
        assert_eq!(
            m.parsed_with,
            super::super::frontmatter::ParseMode::Yaml,
            "{out}"
        );
        assert_eq!(m.name.as_deref(), Some("new-name"));
        assert_eq!(m.description.as_deref(), Some("Use when: deploying"));
        assert!(m.always);
        assert_eq!(m.triggers, ["deploy", "!draft"]);
        assert!(!m.inject_on_trigger);
        // The description took the first description block's place.
        assert!(out.find("description:").unwrap() < out.find("notes:").unwrap());
    }

    #[test]
    fn unset_fields_keep_their_lines_and_defaults_remove_keys() {
        let edit = SkillEdit {
            always: Some(false),
            ..SkillEdit::default()
        };
        let src = "---\nname: a\nalways: true # pinned\ndescription: |\n  keep\n---\nbody";
        let out = apply_edit(src, &edit).unwrap();
        assert_eq!(out, "---\nname: a\ndescription: |\n  keep\n---\nbody");
    }

    #[test]
    fn crlf_and_absent_frontmatter() {
        let edit = SkillEdit {
            description: Some("d".into()),
            ..SkillEdit::default()
        };
        let out = apply_edit("---\r\nname: a\r\nx: 1\r\n---\r\nbody", &edit).unwrap();
        assert_eq!(
            out,
            "---\r\nname: a\r\nx: 1\r\ndescription: d\r\n---\r\nbody"
        );
        let out = apply_edit("# Just body\n", &edit).unwrap();
        assert_eq!(out, "---\ndescription: d\n---\n# Just body\n");
        assert_eq!(
            apply_edit("---\nname: a\n", &edit),
            Err(RewriteRefusal::Unterminated)
        );
    }

    #[test]
    fn yaml_strings_read_back() {
        for s in [
            "plain words",
            "true",
            "1.0",
            "a: b",
            "#x",
            "- dash",
            "it's",
            "multi\nline",
            " pad",
            "é ü",
        ] {
            let out = apply_edit(
                "---\n---\n",
                &SkillEdit {
                    description: Some(s.into()),
                    ..Default::default()
                },
            )
            .unwrap();
            assert_eq!(parse(&out).description.as_deref(), Some(s), "{out}");
        }
    }

    #[test]
    fn toggle_edits_only_column_zero_lines() {
        let src = "---\nname: a\ndescription: |\n  inject_on_trigger: true stays prose\ninject_on_trigger: true\n---\nbody\ninject_on_trigger: x\n";
        let off = set_inject_line(src, false).unwrap().unwrap();
        assert_eq!(
            off,
            "---\nname: a\ndescription: |\n  inject_on_trigger: true stays prose\ninject_on_trigger: false\n---\nbody\ninject_on_trigger: x\n"
        );
        assert!(!parse(&off).inject_on_trigger);
        let on = set_inject_line(&off, true).unwrap().unwrap();
        assert_eq!(
            on,
            "---\nname: a\ndescription: |\n  inject_on_trigger: true stays prose\n---\nbody\ninject_on_trigger: x\n"
        );
        assert_eq!(set_inject_line(&on, true).unwrap(), None);
        assert_eq!(set_inject_line(&off, false).unwrap(), None);
        let first = "---\ninject_on_trigger: false\nname: a\n---\n";
        assert_eq!(set_inject_line(first, false).unwrap(), None);
        assert_eq!(
            set_inject_line("no frontmatter", false),
            Err(RewriteRefusal::NoFrontmatter)
        );
        assert_eq!(
            set_inject_line("---\nname: a\n", false),
            Err(RewriteRefusal::Unterminated)
        );
        let crlf = set_inject_line("---\r\nname: a\r\n---\r\n", false)
            .unwrap()
            .unwrap();
        assert_eq!(
            crlf,
            "---\r\nname: a\r\ninject_on_trigger: false\r\n---\r\n"
        );
    }
}
