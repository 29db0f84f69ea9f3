//! The frontmatter parser against real SKILL.md files
//! (`../shared/corpus/skills`): every file parses, and `name` /
//! `description` agree with what PyYAML read (the manifest's `expected`),
//! except for the differences listed in [`DIFFERENCES`], each with its
//! reason. The list is exact: a listed file that starts agreeing fails the
//! test too. Skipped with a printed reason when the corpus is absent.
//!
//! The parser was not tuned to these files: it is the strict YAML crate
//! plus the spec's lenient grammar, and it also runs on files never seen.

use std::path::{Path, PathBuf};

use kirocrew_actors::skills::frontmatter::{parse, split, FrontmatterState, ParseMode};
use serde_json::Value;

mod common;

/// Files where kirocrew reads differently from PyYAML, and why.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "openclaw__skills/skills/bjesuiter/prd/SKILL.md",
        "PyYAML rejects the unquoted `Use when: (1)` in a plain description; the lenient grammar reads the column-0 fields",
    ),
    (
        "openclaw__skills/skills/cnyezi/a-stock-analysis/SKILL.md",
        "PyYAML rejects `Use when:` inside a plain description; read leniently",
    ),
    (
        "openclaw__skills/skills/hhhh124hhhh/a-beginner-s-guide-to-chatgpt-prompt-engineering-d-558bdbec/SKILL.md",
        "a description starting with `,` is no YAML node; the lenient grammar keeps the text",
    ),
    (
        "openclaw__skills/skills/hhhh124hhhh/ai-image-prompts-for-eye-catching-marketing-creati-4e43d568/SKILL.md",
        "PyYAML's reader refuses the C1 control character U+0080 (mojibake); yaml-rust2 (YAML 1.2) accepts it as text, so the fields are read strictly",
    ),
    (
        "openclaw__skills/skills/limone-eth/molthunt/SKILL.md",
        "the block runs into Markdown (its closing `---` was lost); `## name:` is a comment, so only the description is recovered",
    ),
    (
        "openclaw__skills/skills/mitchellbernstein/factory-ai/SKILL.md",
        "inline JSON metadata with an unbalanced `}` breaks the YAML; the other fields are read leniently",
    ),
    (
        "openclaw__skills/skills/peetzweg/trmnl-display/SKILL.md",
        "`argument-hint: [title] [message]` is not YAML; read leniently",
    ),
    (
        "openclaw__skills/skills/ray-778/host-ping-detect/SKILL.md",
        "PyYAML rejects `(IP: 39.106.7.8)` in a plain description; read leniently",
    ),
    (
        "openclaw__skills/skills/steipete/discord/SKILL.md",
        "PyYAML rejects `tool: send messages` in a plain description; read leniently",
    ),
    (
        "openclaw__skills/skills/vishnubedi3/plan-executor/SKILL.md",
        "PyYAML rejects an unquoted `: ` in the description (CRLF file); read leniently",
    ),
];

fn corpus() -> Option<PathBuf> {
    common::shared_asset("corpus/skills/manifest.jsonl")?
        .parent()
        .map(Path::to_path_buf)
}

#[test]
fn every_corpus_file_parses_and_agrees_except_the_listed_differences() {
    let Some(dir) = corpus() else { return };
    let manifest = std::fs::read_to_string(dir.join("manifest.jsonl")).expect("manifest");
    let mut checked = 0;
    let mut differing = Vec::new();
    for line in manifest.lines().filter(|l| !l.trim().is_empty()) {
        let m: Value = serde_json::from_str(line).expect("manifest line");
        let path = m["path"].as_str().expect("path");
        let bytes = std::fs::read(dir.join(path)).expect("corpus file");
        let text = String::from_utf8_lossy(&bytes);
        let meta = parse(&text);
        checked += 1;

        // The delimiter rule is the manifest's.
        let state = split(&text).state;
        let want_state = match m["frontmatter"].as_str() {
            Some("present") => FrontmatterState::Present,
            Some("absent") => FrontmatterState::Absent,
            _ => FrontmatterState::Unterminated,
        };
        assert_eq!(state, want_state, "{path}");
        if state == FrontmatterState::Unterminated {
            assert!(
                meta.error.is_some(),
                "{path}: an unterminated block is listed with its error"
            );
        }
        if state == FrontmatterState::Absent {
            assert_eq!(meta.parsed_with, ParseMode::None, "{path}");
        }

        let want_name = m["expected"]["name"].as_str();
        let want_desc = m["expected"]["description"].as_str();
        let agrees = meta.name.as_deref() == want_name && meta.description.as_deref() == want_desc;
        match DIFFERENCES.iter().find(|(p, _)| *p == path) {
            None => assert!(
                agrees,
                "{path}: got name {:?} description {:?}, PyYAML read {want_name:?} {want_desc:?}",
                meta.name, meta.description
            ),
            Some((_, reason)) => {
                assert!(
                    !agrees,
                    "{path} now agrees with PyYAML; drop it from DIFFERENCES ({reason})"
                );
                // Every difference is a recovery: PyYAML read nothing.
                assert!(m["expected"]["error"].is_string(), "{path}");
                assert!(
                    meta.description.is_some(),
                    "{path}: the description is recovered"
                );
                differing.push(path.to_owned());
            }
        }
    }
    assert!(checked >= 90, "only {checked} files in the manifest");
    assert_eq!(
        differing.len(),
        DIFFERENCES.len(),
        "a listed file is not in the manifest"
    );
}

#[test]
fn lenient_recoveries_read_the_intended_text() {
    let Some(dir) = corpus() else { return };
    let read = |p: &str| {
        parse(&String::from_utf8_lossy(
            &std::fs::read(dir.join(p)).expect("file"),
        ))
    };
    let prd = read("openclaw__skills/skills/bjesuiter/prd/SKILL.md");
    assert_eq!(prd.parsed_with, ParseMode::Lenient);
    assert_eq!(prd.name.as_deref(), Some("prd"));
    assert!(prd
        .description
        .as_deref()
        .is_some_and(|d| d.contains("Use when: (1) Creating")));
    assert!(prd
        .error
        .as_deref()
        .is_some_and(|e| e.contains("not valid YAML")));
    let ping = read("openclaw__skills/skills/ray-778/host-ping-detect/SKILL.md");
    assert!(ping
        .description
        .as_deref()
        .is_some_and(|d| d.contains("(IP: 39.106.7.8)")));
    let crlf = read("openclaw__skills/skills/vishnubedi3/plan-executor/SKILL.md");
    assert!(crlf
        .description
        .as_deref()
        .is_some_and(|d| !d.contains('\r')));
}
