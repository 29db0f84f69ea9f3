//! Skills in a prompt (spec: "Loading", "Lazy-load"): the pieces the
//! context builder assembles. Pure; the actor feeds it the catalog and the
//! ledger.
//!
//! - `always: true` skills: their bodies in full, every new session.
//! - On-demand skills: the `## Available Skills` index, one line per skill
//!   (name, description, directory — the directory tells the model where
//!   auxiliary scripts and assets live).
//!   - `skills.lazy_load` off: every on-demand skill, alphabetical, not
//!     truncated (the legacy full dump).
//!   - on: the usage-ranked top-K that fits the budget (pinned bodies count
//!     first), then a line pointing at `skill_search`, `$name` and `cat`
//!     for the rest. Rank: hits in the ledger window, then effective
//!     recency = the later of the last delivery and the SKILL.md's mtime,
//!     plus a [`NEW_SKILL_DAYS`]-day boost for a skill changed within that
//!     many days, so a freshly added skill is not stuck behind old ones
//!     with equal hits (cold start). A degraded ledger ranks by recency
//!     alone.
//! - `$skillname` tokens in a message name skills whose bodies to deliver.

use std::sync::OnceLock;

use regex::Regex;

use super::frontmatter::split;
use super::ledger::Ledger;
use super::types::CatalogEntry;

/// The index block's header.
pub(super) const INDEX_HEADER: &str = "## Available Skills";
/// A skill changed within this many days gets the new-skill boost.
pub(super) const NEW_SKILL_DAYS: i64 = 7;
const DAY_SECS: i64 = 86_400;

/// One index line.
pub(super) fn index_line(e: &CatalogEntry) -> String {
    let desc = e
        .meta
        .description
        .as_deref()
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|d| !d.is_empty())
        .map_or(String::new(), |d| format!(": {d}"));
    format!("- {}{desc} (dir: {})", e.name, e.dir.display())
}

fn index_text(lines: &[String], omitted: usize) -> String {
    if lines.is_empty() && omitted == 0 {
        return String::new();
    }
    let mut out = header();
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    if omitted > 0 {
        out.push_str(&tail_note(omitted));
    }
    out
}

fn header() -> String {
    format!("{INDEX_HEADER}\nRead a skill's SKILL.md in its dir when it applies; `$name` in a message loads it.\n")
}

fn tail_note(omitted: usize) -> String {
    format!("({omitted} more skills not listed: find them with skill_search, `$name`, or by reading their SKILL.md.)\n")
}

/// The legacy full index: every on-demand skill, alphabetical.
pub(super) fn full_index(entries: &[CatalogEntry]) -> (String, Vec<String>) {
    let on_demand: Vec<&CatalogEntry> = entries.iter().filter(|e| !e.meta.always).collect();
    let lines: Vec<String> = on_demand.iter().map(|e| index_line(e)).collect();
    (
        index_text(&lines, 0),
        on_demand.iter().map(|e| e.name.clone()).collect(),
    )
}

/// `(hits, effective recency)`: larger ranks first.
pub(super) fn rank_key(e: &CatalogEntry, ledger: Option<&Ledger>, now_secs: i64) -> (u64, i64) {
    let entry = ledger.and_then(|l| l.get(&e.name));
    let hits = entry.map_or(0, |x| x.hits);
    let last = entry.map_or(0, |x| x.last_used.timestamp());
    let modified = e.modified_secs.unwrap_or(0);
    let boost = if now_secs - modified < NEW_SKILL_DAYS * DAY_SECS {
        NEW_SKILL_DAYS * DAY_SECS
    } else {
        0
    };
    (hits, last.max(modified + boost))
}

/// The lazy index: top-ranked on-demand skills within `budget` characters,
/// of which `used` are already taken (the pinned bodies).
pub(super) fn lazy_index(
    entries: &[CatalogEntry],
    ledger: Option<&Ledger>,
    now_secs: i64,
    budget: usize,
    used: usize,
) -> (String, Vec<String>, usize) {
    let mut ranked: Vec<(&CatalogEntry, (u64, i64))> = entries
        .iter()
        .filter(|e| !e.meta.always)
        .map(|e| (e, rank_key(e, ledger, now_secs)))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.name.cmp(&b.0.name)));
    let total = ranked.len();
    let fixed = header().len() + tail_note(total).len();
    let mut room = budget.saturating_sub(used).saturating_sub(fixed);
    let mut lines = Vec::new();
    let mut listed = Vec::new();
    for (e, _) in ranked {
        let line = index_line(e);
        if line.len() + 1 > room {
            break;
        }
        room -= line.len() + 1;
        lines.push(line);
        listed.push(e.name.clone());
    }
    let omitted = total - listed.len();
    (index_text(&lines, omitted), listed, omitted)
}

/// The body of a SKILL.md text: the frontmatter removed, outer blank lines
/// trimmed.
pub(super) fn body_of(text: &str) -> String {
    split(text).body.trim_matches(['\n', '\r']).to_owned()
}

fn dollar_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?:^|[^\w$])\$([A-Za-z0-9][A-Za-z0-9_./-]*)")
            .unwrap_or_else(|e| panic!("dollar token pattern: {e}"))
    })
}

/// The `$name` tokens of `message`, in order, without repeats.
pub(super) fn dollar_tokens(message: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for cap in dollar_re().captures_iter(message) {
        let name = cap[1].trim_end_matches(['.', '/', '-']).to_owned();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::frontmatter::SkillMeta;
    use chrono::{TimeZone, Utc};

    fn entry(name: &str, always: bool, modified: i64) -> CatalogEntry {
        let meta = SkillMeta {
            always,
            description: Some(format!("about {name}")),
            ..SkillMeta::default()
        };
        CatalogEntry {
            modified_secs: Some(modified),
            ..CatalogEntry::for_test(name, meta)
        }
    }

    #[test]
    fn full_index_lists_every_on_demand_skill() {
        let entries = vec![
            entry("a", false, 0),
            entry("pin", true, 0),
            entry("b/c", false, 0),
        ];
        let (text, listed) = full_index(&entries);
        assert_eq!(listed, ["a", "b/c"]);
        assert!(text.starts_with(INDEX_HEADER));
        assert!(text.contains("- b/c: about b/c (dir: /s/b/c)\n"));
        assert!(!text.contains("pin"));
        assert_eq!(full_index(&[]).0, "");
    }

    #[test]
    fn lazy_index_ranks_by_hits_then_recency_within_budget() {
        let now = Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::load(&dir.path().join("u.json"), now);
        ledger.record("used", now - chrono::Duration::days(3));
        let old = now.timestamp() - 100 * DAY_SECS;
        let entries = vec![
            entry("aaa-old", false, old),
            entry("new", false, now.timestamp() - DAY_SECS),
            entry("used", false, old),
            entry("zzz-old", false, old),
        ];
        let (text, listed, omitted) =
            lazy_index(&entries, Some(&ledger), now.timestamp(), 10_000, 0);
        assert_eq!(listed, ["used", "new", "aaa-old", "zzz-old"]);
        assert_eq!(omitted, 0);
        assert!(!text.contains("more skills"));
        // Degraded: recency only.
        let (_, listed, _) = lazy_index(&entries, None, now.timestamp(), 10_000, 0);
        assert_eq!(listed, ["new", "aaa-old", "used", "zzz-old"]);
        // A tight budget keeps the top and points at the tail.
        let one = index_text(&[index_line(&entries[2])], 0).len() + tail_note(4).len();
        let (text, listed, omitted) =
            lazy_index(&entries, Some(&ledger), now.timestamp(), one + 5, 0);
        assert_eq!((listed.len(), omitted), (1, 3));
        assert!(text.len() <= one + 5, "{}", text.len());
        assert!(text.contains("3 more skills"));
        let (_, listed, _) = lazy_index(&entries, Some(&ledger), now.timestamp(), one + 5, one);
        assert!(listed.is_empty(), "pinned bodies used the budget");
    }

    #[test]
    fn dollar_tokens_and_bodies() {
        assert_eq!(
            dollar_tokens("use $deploy and $utils/tiny-url. Also $deploy, a$b, $$x"),
            ["deploy", "utils/tiny-url"]
        );
        assert_eq!(dollar_tokens("$start of line"), ["start"]);
        assert!(dollar_tokens("costs $ 5").is_empty());
        assert_eq!(
            body_of("---\nname: a\n---\n\n# Body\ntext\n\n"),
            "# Body\ntext"
        );
        assert_eq!(body_of("# No frontmatter\n"), "# No frontmatter");
    }
}
