//! Alias folding and the Context Budget report (spec: "Context Budget
//! endpoint", `resolve_ledger_aliases`, `_served_key_by_realpath`).
//!
//! Skills whose SKILL.md resolves to the same real file are one skill
//! under several keys (a symlinked alias). The canonical key is the one
//! reached without a link ("real file beats symlink"), then the
//! alphabetically first. Reads are credited to it and the budget shows one
//! row for it, with the aliases' hits summed in and their keys listed in
//! `folded_from`. Ledger keys that are no live skill (moved or removed)
//! are dropped, never guessed. This needs one path resolution per skill,
//! which is why it is here and not in the O(skills) listing.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::ledger::{LedgerEntry, TTL_DAYS};
use super::types::{BudgetReport, BudgetRow, CatalogEntry};

/// Groups of entry indices sharing a real file, canonical first.
pub(super) fn alias_groups(
    entries: &[CatalogEntry],
    real: &HashMap<String, PathBuf>,
) -> Vec<Vec<usize>> {
    let mut by_file: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
    let mut groups = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match real.get(&e.name) {
            Some(p) => by_file.entry(p.clone()).or_default().push(i),
            None => groups.push(vec![i]),
        }
    }
    for mut members in by_file.into_values() {
        members.sort_by(|&a, &b| {
            let (ea, eb) = (&entries[a], &entries[b]);
            ea.symlinked
                .cmp(&eb.symlinked)
                .then_with(|| ea.name.cmp(&eb.name))
        });
        groups.push(members);
    }
    groups
}

/// Each skill's canonical key.
pub(super) fn canonical_keys(
    entries: &[CatalogEntry],
    real: &HashMap<String, PathBuf>,
) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for group in alias_groups(entries, real) {
        let canonical = entries[group[0]].name.clone();
        for i in group {
            out.insert(entries[i].name.clone(), canonical.clone());
        }
    }
    out
}

/// The budget report.
pub(super) fn budget(
    entries: &[CatalogEntry],
    real: &HashMap<String, PathBuf>,
    ledger: &BTreeMap<String, LedgerEntry>,
    now: DateTime<Utc>,
) -> BudgetReport {
    let mut rows = Vec::new();
    for group in alias_groups(entries, real) {
        let canonical = &entries[group[0]];
        let tracked: Vec<(&str, &LedgerEntry)> = group
            .iter()
            .filter_map(|&i| {
                let name = entries[i].name.as_str();
                ledger.get(name).map(|e| (name, e))
            })
            .collect();
        let deliveries =
            (!tracked.is_empty()).then(|| tracked.iter().map(|(_, e)| e.hits).sum::<u64>());
        let last = tracked.iter().map(|(_, e)| e.last_used).max();
        let folded: Vec<String> = tracked
            .iter()
            .filter(|(n, _)| *n != canonical.name)
            .map(|(n, _)| (*n).to_owned())
            .collect();
        rows.push(BudgetRow {
            key: canonical.name.clone(),
            name: canonical
                .meta
                .name
                .clone()
                .unwrap_or_else(|| canonical.name.clone()),
            size_bytes: canonical.size_bytes,
            deliveries,
            chars: canonical.size_bytes.saturating_mul(deliveries.unwrap_or(0)),
            inject_on_trigger: canonical.meta.inject_on_trigger,
            always: canonical.meta.always,
            owned: canonical.owned,
            source: canonical.source,
            idle_days: last.map(|t| (now - t).num_days().max(0)),
            folded_from: (!folded.is_empty()).then_some(folded),
        });
    }
    rows.sort_by(|a, b| b.chars.cmp(&a.chars).then_with(|| a.key.cmp(&b.key)));
    BudgetReport {
        window_days: TTL_DAYS,
        total_chars: rows.iter().map(|r| r.chars).sum(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::frontmatter::SkillMeta;
    use chrono::{Duration, TimeZone};

    fn entry(name: &str, size: u64, symlinked: bool) -> CatalogEntry {
        CatalogEntry {
            size_bytes: size,
            symlinked,
            ..CatalogEntry::for_test(name, SkillMeta::default())
        }
    }

    #[test]
    fn folding_orphans_and_untracked() {
        let now = Utc.with_ymd_and_hms(2026, 3, 10, 0, 0, 0).unwrap();
        let entries = vec![
            entry("a-link", 100, true),
            entry("b", 10, false),
            entry("real", 100, false),
            entry("z-link", 100, true),
            entry("cold", 5, false),
        ];
        let real: HashMap<String, PathBuf> = [
            ("a-link", "/r"),
            ("real", "/r"),
            ("z-link", "/r"),
            ("b", "/b"),
            ("cold", "/c"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), PathBuf::from(v)))
        .collect();
        let hit = |hits, days| LedgerEntry {
            hits,
            first_used: now - Duration::days(20),
            last_used: now - Duration::days(days),
        };
        let ledger: BTreeMap<String, LedgerEntry> = [
            ("real".to_owned(), hit(2, 3)),
            ("a-link".to_owned(), hit(3, 1)),
            ("b".to_owned(), hit(0, 2)),
            ("gone".to_owned(), hit(50, 0)),
        ]
        .into();
        let r = budget(&entries, &real, &ledger, now);
        assert_eq!(r.window_days, 30);
        let keys: Vec<&str> = r.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["real", "b", "cold"]);
        let real_row = &r.rows[0];
        assert_eq!(real_row.deliveries, Some(5));
        assert_eq!(real_row.chars, 500);
        assert_eq!(real_row.idle_days, Some(1));
        assert_eq!(
            real_row.folded_from.as_deref(),
            Some(&["a-link".to_owned()][..])
        );
        assert_eq!(r.rows[1].deliveries, Some(0), "tracked with zero hits");
        assert_eq!(r.rows[2].deliveries, None, "untracked is not zero");
        assert_eq!(r.rows[2].idle_days, None);
        assert_eq!(r.total_chars, r.rows.iter().map(|r| r.chars).sum::<u64>());
        let keys = canonical_keys(&entries, &real);
        assert_eq!(keys["z-link"], "real");
        assert_eq!(keys["a-link"], "real");
        // Two links, no real file: alphabetical.
        let only_links = vec![entry("y", 1, true), entry("x", 1, true)];
        let real: HashMap<String, PathBuf> = [
            ("x".to_owned(), PathBuf::from("/q")),
            ("y".to_owned(), PathBuf::from("/q")),
        ]
        .into();
        assert_eq!(canonical_keys(&only_links, &real)["y"], "x");
    }
}
