//! Reading a SKILL.md: the frontmatter block and the five fields kirocrew
//! uses (`name`, `description`, `always`, `triggers`, `inject_on_trigger`).
//!
//! Delimiters: the block exists only when the **first line** is exactly
//! `---` (trailing spaces, tabs and `\r` tolerated, a leading UTF-8 BOM
//! skipped); it ends at the next line that is exactly `---`. A file that
//! opens a block and never closes it has no frontmatter (its fields read as
//! absent) and is listed with an error. This is the rule real SKILL.md
//! consumers apply, so a `---` Markdown rule further down is never taken for
//! a delimiter.
//!
//! Fields: the block is parsed as YAML with a maintained parser
//! (`yaml-rust2`, YAML 1.2) first. Many SKILL.md files in the wild are not
//! valid YAML (an unquoted `: ` inside a description, `argument-hint: [a]
//! [b]`, duplicate keys, tabs); for those the spec's lenient line grammar
//! ([`super::lenient`]) reads the fields instead, and the YAML error is kept
//! so the listing can show it. A bad file never fails the catalog.

use serde::Serialize;
use yaml_rust2::{Yaml, YamlLoader};

use super::lenient::{self, LenientValue};

/// Whether a file has a frontmatter block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontmatterState {
    /// Opening and closing `---` lines.
    Present,
    /// The first line is not `---`.
    Absent,
    /// An opening `---` without a closing one.
    Unterminated,
}

/// A SKILL.md split into its frontmatter block and body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitDoc<'a> {
    /// Present, absent or unterminated.
    pub state: FrontmatterState,
    /// The text between the delimiter lines (line endings kept); empty
    /// unless `state` is `Present`.
    pub block: &'a str,
    /// Byte offset of `block` in the text.
    pub block_start: usize,
    /// Everything after the closing delimiter line (the whole text, BOM
    /// skipped, when there is no block).
    pub body: &'a str,
}

/// Which reader produced a skill's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ParseMode {
    /// Strict YAML.
    Yaml,
    /// The lenient line grammar (the YAML parser refused the block).
    Lenient,
    /// No frontmatter block.
    None,
}

/// The frontmatter fields kirocrew reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillMeta {
    /// `name:` as declared (the skill's key is its path, not this).
    pub name: Option<String>,
    /// `description:`.
    pub description: Option<String>,
    /// `always: true`: injected in full into every new session.
    pub always: bool,
    /// `triggers:` (a list, or one comma-separated string); `!word`
    /// excludes.
    pub triggers: Vec<String>,
    /// False only when the file says `inject_on_trigger: false` (absent or
    /// malformed means inject).
    pub inject_on_trigger: bool,
    /// Which reader produced these fields.
    pub parsed_with: ParseMode,
    /// Why the file is not clean: the YAML error (when the lenient grammar
    /// had to step in) or the unterminated block.
    pub error: Option<String>,
}

impl Default for SkillMeta {
    fn default() -> Self {
        Self {
            name: None,
            description: None,
            always: false,
            triggers: Vec::new(),
            inject_on_trigger: true,
            parsed_with: ParseMode::None,
            error: None,
        }
    }
}

/// A delimiter line: `---` with optional trailing spaces, tabs and `\r`.
fn is_delimiter(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == "---"
}

/// Splits `text` into frontmatter block and body.
pub fn split(text: &str) -> SplitDoc<'_> {
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let rest = &text[bom..];
    let absent = SplitDoc {
        state: FrontmatterState::Absent,
        block: "",
        block_start: bom,
        body: rest,
    };
    let first_end = rest.find('\n').unwrap_or(rest.len());
    if !is_delimiter(&rest[..first_end]) {
        return absent;
    }
    let start = (first_end + 1).min(rest.len());
    let mut pos = start;
    while pos < rest.len() {
        let end = rest[pos..].find('\n').map_or(rest.len(), |i| pos + i);
        if is_delimiter(&rest[pos..end]) {
            let body_start = (end + 1).min(rest.len());
            return SplitDoc {
                state: FrontmatterState::Present,
                block: &rest[start..pos],
                block_start: bom + start,
                body: &rest[body_start..],
            };
        }
        pos = end + 1;
    }
    SplitDoc {
        state: FrontmatterState::Unterminated,
        ..absent
    }
}

/// Parses the fields of a whole SKILL.md text.
pub fn parse(text: &str) -> SkillMeta {
    let doc = split(text);
    match doc.state {
        FrontmatterState::Absent => SkillMeta::default(),
        FrontmatterState::Unterminated => SkillMeta {
            error: Some("the frontmatter block has no closing '---' line".into()),
            ..SkillMeta::default()
        },
        FrontmatterState::Present => parse_block(doc.block),
    }
}

/// Parses a frontmatter block: strict YAML, else the lenient grammar.
pub fn parse_block(block: &str) -> SkillMeta {
    match strict(block) {
        Ok(meta) => meta,
        Err(yaml_error) => {
            let mut meta = from_lenient(&lenient::parse(block));
            meta.error = Some(format!("not valid YAML ({yaml_error}); read leniently"));
            meta
        }
    }
}

fn strict(block: &str) -> Result<SkillMeta, String> {
    let docs = YamlLoader::load_from_str(block).map_err(|e| e.to_string())?;
    let empty = yaml_rust2::yaml::Hash::new();
    let map = match docs.first() {
        None | Some(Yaml::Null) => &empty,
        Some(Yaml::Hash(map)) => map,
        Some(_) => return Err("the frontmatter is not a mapping".into()),
    };
    let get = |key: &str| map.get(&Yaml::String(key.to_owned()));
    Ok(SkillMeta {
        name: get("name").and_then(yaml_scalar),
        description: get("description").and_then(yaml_scalar),
        always: get("always").is_some_and(|v| yaml_flag(v) == Some(true)),
        triggers: get("triggers").map(yaml_list).unwrap_or_default(),
        inject_on_trigger: get("inject_on_trigger").is_none_or(|v| yaml_flag(v) != Some(false)),
        parsed_with: ParseMode::Yaml,
        error: None,
    })
}

/// A scalar's text (numbers and booleans as written); `None` for null and
/// collections.
fn yaml_scalar(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn yaml_flag(value: &Yaml) -> Option<bool> {
    match value {
        Yaml::Boolean(b) => Some(*b),
        Yaml::String(s) => text_flag(s),
        _ => None,
    }
}

fn yaml_list(value: &Yaml) -> Vec<String> {
    match value {
        Yaml::Array(items) => items.iter().filter_map(yaml_scalar).collect(),
        other => yaml_scalar(other)
            .map(|s| split_commas(&s))
            .unwrap_or_default(),
    }
}

/// `true`/`yes`/`on` and `false`/`no`/`off` (any case): the YAML 1.1
/// booleans authors still write; anything else is no flag at all.
pub(crate) fn text_flag(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn split_commas(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn from_lenient(fields: &lenient::Fields) -> SkillMeta {
    let scalar = |key: &str| match fields.get(key) {
        Some(LenientValue::Scalar(s)) => Some(s.clone()),
        _ => None,
    };
    let flag = |key: &str| scalar(key).as_deref().and_then(text_flag);
    SkillMeta {
        name: scalar("name"),
        description: scalar("description"),
        always: flag("always") == Some(true),
        triggers: match fields.get("triggers") {
            Some(LenientValue::List(items)) => items.clone(),
            Some(LenientValue::Scalar(s)) => split_commas(s),
            None => Vec::new(),
        },
        inject_on_trigger: flag("inject_on_trigger") != Some(false),
        parsed_with: ParseMode::Lenient,
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_follow_the_first_line_rule() {
        let d = split("---\nname: a\n---\nbody\n");
        assert_eq!(d.state, FrontmatterState::Present);
        assert_eq!(d.block, "name: a\n");
        assert_eq!(d.body, "body\n");
        let d = split("\u{feff}---  \r\nname: a\r\n---\t\r\nbody");
        assert_eq!(d.state, FrontmatterState::Present);
        assert_eq!(d.block, "name: a\r\n");
        assert_eq!(d.body, "body");
        assert_eq!(
            split("\n---\nname: a\n---\n").state,
            FrontmatterState::Absent
        );
        assert_eq!(
            split("# T\n---\nx: y\n---\n").state,
            FrontmatterState::Absent
        );
        let d = split("---\nname: a\nbody\n");
        assert_eq!(d.state, FrontmatterState::Unterminated);
        assert_eq!(d.body, "---\nname: a\nbody\n");
        assert_eq!(split("---\n---\n").state, FrontmatterState::Present);
        assert_eq!(split("---").state, FrontmatterState::Unterminated);
    }

    #[test]
    fn strict_yaml_reads_the_five_fields() {
        let m = parse(
            "---\nname: x\ndescription: >-\n  one\n  two\nalways: true\ntriggers: [deploy, '!draft']\ninject_on_trigger: false\n---\n",
        );
        assert_eq!(m.parsed_with, ParseMode::Yaml);
        assert_eq!(m.name.as_deref(), Some("x"));
        assert_eq!(m.description.as_deref(), Some("one two"));
        assert!(m.always);
        assert_eq!(m.triggers, ["deploy", "!draft"]);
        assert!(!m.inject_on_trigger);
        assert_eq!(m.error, None);
    }

    #[test]
    fn malformed_or_absent_inject_means_inject() {
        for fm in [
            "",
            "inject_on_trigger: maybe\n",
            "inject_on_trigger: [false]\n",
            "inject_on_trigger:\n",
        ] {
            let m = parse(&format!("---\nname: a\n{fm}---\n"));
            assert!(m.inject_on_trigger, "{fm:?}");
        }
        let m = parse("---\ninject_on_trigger: 'False'\n---\n");
        assert!(!m.inject_on_trigger);
    }

    #[test]
    fn invalid_yaml_falls_back_and_keeps_the_error() {
        let m = parse("---\nname: prd\ndescription: Use when: (1) a PRD is needed\n---\nbody");
        assert_eq!(m.parsed_with, ParseMode::Lenient);
        assert_eq!(
            m.description.as_deref(),
            Some("Use when: (1) a PRD is needed")
        );
        assert!(m
            .error
            .as_deref()
            .is_some_and(|e| e.contains("not valid YAML")));
        // Duplicate keys: YAML 1.2 refuses them; the last one wins.
        let m = parse("---\nname: a\nname: b\n---\n");
        assert_eq!(m.name.as_deref(), Some("b"));
        // Tabs as indentation.
        let m = parse("---\nname: t\ndescription: >\n\tfirst\n\tsecond\n---\n");
        assert_eq!(m.description.as_deref(), Some("first second\n"));
    }

    #[test]
    fn unterminated_and_absent() {
        let m = parse("---\nname: a\n");
        assert_eq!(m.name, None);
        assert!(m.error.is_some());
        assert_eq!(parse("# Title\n").parsed_with, ParseMode::None);
        // A non-mapping block (a bare scalar) goes to the lenient reader.
        let m = parse("---\njust text\n---\n");
        assert_eq!(m.parsed_with, ParseMode::Lenient);
        assert_eq!(m.name, None);
    }

    #[test]
    fn triggers_as_a_comma_string() {
        let m = parse("---\ntriggers: deploy, release ,rollback\n---\n");
        assert_eq!(m.triggers, ["deploy", "release", "rollback"]);
    }
}
