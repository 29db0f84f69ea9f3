//! One literal pass that tells which rules can match a view at all.
//!
//! Each compiled rule already skips ahead with its own literal prefilter,
//! but that is one pass over the view per rule: with the table's ~100
//! rules and up to four views per text, those passes were a fifth of the
//! screen's worst case (perf, `screen/obfuscated_benign_2000`). Every match
//! of a rule starts with one of its prefix literals whenever
//! `regex-syntax`'s extractor finds a finite set of them; one
//! Aho-Corasick pass over all rules' literals then marks the rules worth
//! running, and the others are skipped without reading the view again.
//! A rule with no finite prefix set (one that may start anywhere) is
//! always run: the prefilter only ever skips a rule that cannot match.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, MatchKind};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::ParserBuilder;

/// The shared prefilter of a rule table.
pub(crate) struct Prefilter {
    /// All rules' prefix literals, each once (`None` when no rule has a
    /// finite set).
    ac: Option<AhoCorasick>,
    /// For each literal (by pattern id), the rules it starts.
    owners: Vec<Vec<usize>>,
    /// Rules without a finite prefix set: always candidates.
    always: Vec<usize>,
    /// How many rules the table holds.
    rules: usize,
}

impl Prefilter {
    /// Builds the prefilter of `patterns` (the rules' regexes exactly as
    /// compiled, in table order).
    pub(crate) fn new(patterns: &[String]) -> Self {
        let mut by_literal: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
        let mut always = Vec::new();
        for (idx, pattern) in patterns.iter().enumerate() {
            match prefixes(pattern) {
                Some(literals) => {
                    for lit in literals {
                        by_literal.entry(lit).or_default().push(idx);
                    }
                }
                None => always.push(idx),
            }
        }
        let (literals, owners): (Vec<_>, Vec<_>) = by_literal.into_iter().unzip();
        let ac = (!literals.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&literals)
                // The literals come from compiled-in patterns: a failure
                // here is a bug the table's unit tests catch.
                .unwrap_or_else(|e| panic!("rule prefilter: {e}"))
        });
        Self {
            ac,
            owners,
            always,
            rules: patterns.len(),
        }
    }

    /// Which rules may match `view` (by table index).
    pub(crate) fn candidates(&self, view: &str) -> Vec<bool> {
        let mut out = vec![false; self.rules];
        for &idx in &self.always {
            out[idx] = true;
        }
        if let Some(ac) = &self.ac {
            for m in ac.find_overlapping_iter(view) {
                for &idx in &self.owners[m.pattern().as_usize()] {
                    out[idx] = true;
                }
            }
        }
        out
    }

    /// How many rules have a finite prefix set (the tests check that the
    /// prefilter still pays).
    #[cfg(test)]
    pub(crate) fn filtered(&self) -> usize {
        self.rules - self.always.len()
    }
}

/// Every match of `pattern` starts with one of these byte strings, or
/// `None` when no finite, non-empty set says so.
fn prefixes(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = ParserBuilder::new().build().parse(pattern).ok()?;
    let mut extractor = Extractor::new();
    extractor.kind(ExtractKind::Prefix);
    let seq = extractor.extract(&hir);
    let literals = seq.literals()?;
    if literals.is_empty() || literals.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    Some(literals.iter().map(|l| l.as_bytes().to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pf(patterns: &[&str]) -> Prefilter {
        Prefilter::new(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn a_rule_runs_only_where_one_of_its_prefixes_occurs() {
        let p = pf(&[
            r"(?-u:\b)(?:ignore|disregard) .{0,20}rules",
            r"忽略.{0,5}指令",
        ]);
        assert_eq!(p.filtered(), 2);
        assert_eq!(
            p.candidates("please disregard the old rules"),
            [true, false]
        );
        assert_eq!(p.candidates("请忽略之前的指令"), [false, true]);
        assert_eq!(p.candidates("nothing to see"), [false, false]);
    }

    #[test]
    fn a_rule_that_may_start_anywhere_always_runs() {
        let p = pf(&[r"[a-z]+ says", r".*y"]);
        assert_eq!(p.filtered(), 0);
        assert_eq!(p.candidates(""), [true, true]);
    }
}
