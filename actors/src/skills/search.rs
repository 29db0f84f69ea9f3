//! `skill_search` (spec: "skill_search MCP tool"): name, description and
//! triggers first; the bodies only when no metadata matched, and bounded
//! (at most [`BODY_SCAN_SKILLS`] files, [`BODY_SCAN_BYTES`] of each).
//! Searching is not using: nothing is recorded in the ledger.
//!
//! Matching is case-insensitive substring matching per query word; a hit's
//! score is the number of query words it contains.

use std::path::Path;

use super::error::SkillError;
use super::triggers::truncate_chars;
use super::types::{CatalogEntry, SearchHit};

/// Longest query, in characters.
pub(super) const MAX_QUERY_CHARS: usize = 500;
/// Most hits one search returns.
pub(super) const MAX_LIMIT: usize = 50;
/// Most bodies one search reads.
pub(super) const BODY_SCAN_SKILLS: usize = 500;
/// Most bytes read of one body.
pub(super) const BODY_SCAN_BYTES: usize = 64 * 1024;

/// The query's lowercase words (at least one).
pub(super) fn query_words(query: &str) -> Result<Vec<String>, SkillError> {
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(SkillError::InvalidQuery(format!(
            "longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    let mut words: Vec<String> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '/'))
        .map(|w| w.trim_matches(['-', '_', '/']).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    words.dedup();
    if words.is_empty() {
        return Err(SkillError::InvalidQuery("the query has no words".into()));
    }
    Ok(words)
}

fn score(text: &str, words: &[String]) -> usize {
    words.iter().filter(|w| text.contains(w.as_str())).count()
}

/// Searches `entries`; `read_body` yields a skill's body text.
pub(super) fn search(
    entries: &[CatalogEntry],
    words: &[String],
    limit: usize,
    read_body: impl Fn(&Path) -> Option<String>,
) -> Vec<SearchHit> {
    let limit = limit.clamp(1, MAX_LIMIT);
    let mut hits: Vec<SearchHit> = entries
        .iter()
        .filter_map(|e| {
            let meta = format!(
                "{} {} {} {}",
                e.name,
                e.meta.name.as_deref().unwrap_or(""),
                e.meta.description.as_deref().unwrap_or(""),
                e.meta.triggers.join(" ")
            )
            .to_lowercase();
            let s = score(&meta, words);
            (s > 0).then(|| hit(e, "metadata", s, None))
        })
        .collect();
    if hits.is_empty() {
        hits = entries
            .iter()
            .take(BODY_SCAN_SKILLS)
            .filter_map(|e| {
                let body = read_body(&e.path)?;
                let cut = floor_char_boundary(&body, BODY_SCAN_BYTES);
                let lower = body[..cut].to_lowercase();
                let s = score(&lower, words);
                if s == 0 {
                    return None;
                }
                let snippet = body[..cut]
                    .lines()
                    .find(|l| {
                        let l = l.to_lowercase();
                        words.iter().any(|w| l.contains(w.as_str()))
                    })
                    .map(|l| truncate_chars(l, 200));
                Some(hit(e, "body", s, snippet))
            })
            .collect();
    }
    hits.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.name.cmp(&b.name)));
    hits.truncate(limit);
    hits
}

fn hit(
    e: &CatalogEntry,
    matched_in: &'static str,
    score: usize,
    snippet: Option<String>,
) -> SearchHit {
    SearchHit {
        name: e.name.clone(),
        description: e.meta.description.clone(),
        path: e.path.display().to_string(),
        matched_in,
        score,
        snippet,
    }
}

fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    (0..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::frontmatter::SkillMeta;

    fn entry(name: &str, description: &str) -> CatalogEntry {
        let meta = SkillMeta {
            description: Some(description.into()),
            ..SkillMeta::default()
        };
        CatalogEntry::for_test(name, meta)
    }

    #[test]
    fn metadata_first_then_bounded_bodies() {
        let entries = vec![
            entry("deploy", "Ship a release"),
            entry("pdf", "Fill PDF forms"),
        ];
        let read = |p: &Path| {
            Some(if p.starts_with("/s/pdf") {
                "## Steps\nuse qpdf to merge\n".to_owned()
            } else {
                "release notes".to_owned()
            })
        };
        let w = query_words("PDF release").unwrap();
        let hits = search(&entries, &w, 10, read);
        assert_eq!(hits.len(), 2);
        assert!(hits.iter().all(|h| h.matched_in == "metadata"));
        let hits = search(&entries, &query_words("qpdf").unwrap(), 10, read);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].name, "pdf");
        assert_eq!(hits[0].matched_in, "body");
        assert_eq!(hits[0].snippet.as_deref(), Some("use qpdf to merge"));
        assert!(search(&entries, &query_words("nothing").unwrap(), 10, read).is_empty());
        assert!(query_words(" ,; ").is_err());
        assert!(query_words(&"x".repeat(501)).is_err());
        assert_eq!(
            search(&entries, &query_words("e").unwrap(), 1, read).len(),
            1
        );
    }
}
