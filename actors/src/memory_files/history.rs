//! Daily history files: names, entries, the decay tiers and pruning
//! (spec: "Decaying Memory (`read_recent_history`)", "History Pruning").
//!
//! Pure functions only; [`super::files::MemoryDir`] does the I/O.
//!
//! ## File format
//! `history/YYYY-MM-DD.md` (local date), append-only:
//!
//! ```text
//! # 2026-03-14
//!
//! ## 09:15
//! Summary of the morning session…
//!
//! ## 14:02
//! …
//! ```
//!
//! Each `## ` heading opens an entry; its text is the entry's time. Legacy
//! files written by hand are read leniently: without `## ` headings every
//! top-level bullet is an entry, and without bullets the whole body is one.

use chrono::NaiveDate;

/// Days walked back from today (`range(181)`): ages 0..=180.
pub(crate) const WINDOW_DAYS: i64 = 181;
/// Default width of the full-detail tier (`days=14`: ages 0..=13).
pub(crate) const FULL_DAYS: u32 = 14;
/// Ages below this (and at least the full tier) keep the first entry.
pub(crate) const COMPRESSED_UNTIL: i64 = 61;
/// What a cut-off text ends with (a zero cap yields only this).
pub(crate) const TRUNCATED_MARKER: &str = "…[truncated]";

/// One history entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The heading text (`09:15`), if the entry had one.
    pub(crate) time: Option<String>,
    /// The entry's text, trimmed.
    pub(crate) text: String,
}

/// How a day is rendered, by its age in days.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    /// Every entry with its timestamp.
    Full,
    /// Day header, first entry and `…N more entries`.
    Compressed,
    /// Date and entry count only.
    CountOnly,
    /// Not read (future dates and ages of 181 days or more).
    Outside,
}

/// The tier of a day `age` days old when the full tier is `full_days` wide.
pub(crate) fn tier_for(age: i64, full_days: u32) -> Tier {
    match age {
        a if !(0..WINDOW_DAYS).contains(&a) => Tier::Outside,
        a if a < i64::from(full_days) => Tier::Full,
        a if a < COMPRESSED_UNTIL => Tier::Compressed,
        _ => Tier::CountOnly,
    }
}

/// The date a history file is named for: exactly `YYYY-MM-DD.md` with a real
/// calendar date, else `None` (such files are never pruned).
pub(crate) fn parse_file_name(name: &str) -> Option<NaiveDate> {
    let stem = name.strip_suffix(".md")?;
    let b = stem.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return None;
    }
    NaiveDate::parse_from_str(stem, "%Y-%m-%d").ok()
}

/// The file name of `date`'s history.
pub(crate) fn file_name(date: NaiveDate) -> String {
    format!("{}.md", date.format("%Y-%m-%d"))
}

/// Splits a history file into entries (see the module docs for the format).
pub(crate) fn parse_entries(body: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut preamble = String::new();
    let mut current: Option<(String, String)> = None;
    let mut seen_title = false;
    for line in body.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            if let Some((time, text)) = current.take() {
                entries.push(entry(Some(time), &text));
            }
            current = Some((heading.trim().to_owned(), String::new()));
        } else if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
        } else if line.starts_with("# ") && !seen_title && preamble.trim().is_empty() {
            seen_title = true;
        } else {
            preamble.push_str(line);
            preamble.push('\n');
        }
    }
    if let Some((time, text)) = current.take() {
        entries.push(entry(Some(time), &text));
    }
    let mut out = if entries.is_empty() {
        split_bullets(&preamble)
    } else {
        let mut out = Vec::new();
        if !preamble.trim().is_empty() {
            out.push(entry(None, &preamble));
        }
        out.extend(entries);
        out
    };
    out.retain(|e| !e.text.is_empty());
    out
}

fn entry(time: Option<String>, text: &str) -> Entry {
    Entry {
        time: time.filter(|t| !t.is_empty()),
        text: text.trim().to_owned(),
    }
}

/// Top-level bullets as entries; continuation lines stay with their bullet.
fn split_bullets(body: &str) -> Vec<Entry> {
    let is_bullet = |l: &str| l.starts_with("- ") || l.starts_with("* ") || l.starts_with("+ ");
    if !body.lines().any(is_bullet) {
        return vec![entry(None, body)];
    }
    let mut out: Vec<String> = Vec::new();
    let mut lead = String::new();
    for line in body.lines() {
        if is_bullet(line) {
            out.push(line[2..].to_owned());
        } else if let Some(last) = out.last_mut() {
            last.push('\n');
            last.push_str(line);
        } else {
            lead.push_str(line);
            lead.push('\n');
        }
    }
    let mut entries = Vec::new();
    if !lead.trim().is_empty() {
        entries.push(entry(None, &lead));
    }
    entries.extend(out.iter().map(|t| entry(None, t)));
    entries
}

/// The text appended to a day file for one entry: a `## HH:MM` heading and
/// the text. Lines of the text that would read as headings are escaped so
/// an entry can never split into two.
pub(crate) fn format_entry(time: &str, text: &str) -> String {
    let mut out = format!("\n## {time}\n");
    for line in text.trim().lines() {
        if line.starts_with('#') {
            out.push('\\');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The title line a new day file starts with.
pub(crate) fn day_title(date: NaiveDate) -> String {
    format!("# {}\n", date.format("%Y-%m-%d"))
}

fn bullet(entry: &Entry) -> String {
    let text = entry.text.replace('\n', "\n  ");
    match &entry.time {
        Some(time) => format!("- [{time}] {text}"),
        None => format!("- {text}"),
    }
}

/// One day's block in the tier its age selects, or `None` for an empty day
/// or one outside the window.
pub(crate) fn render_day(date: NaiveDate, entries: &[Entry], tier: Tier) -> Option<String> {
    let first = entries.first()?;
    let date = date.format("%Y-%m-%d");
    match tier {
        Tier::Outside => None,
        Tier::Full => {
            let lines: Vec<String> = entries.iter().map(bullet).collect();
            Some(format!("### {date}\n{}", lines.join("\n")))
        }
        Tier::Compressed => {
            let more = entries.len() - 1;
            let tail = match more {
                0 => String::new(),
                1 => "\n…1 more entry".to_owned(),
                n => format!("\n…{n} more entries"),
            };
            Some(format!("### {date}\n{}{tail}", bullet(first)))
        }
        Tier::CountOnly => {
            let n = entries.len();
            let noun = if n == 1 { "entry" } else { "entries" };
            Some(format!("#### {date} ({n} {noun})"))
        }
    }
}

/// Cuts `text` to at most `cap` characters (at the last line break in the
/// final fifth, when there is one) and appends [`TRUNCATED_MARKER`]. A zero
/// cap on non-empty text yields the marker alone, as the reference does.
pub(crate) fn cap_text(text: &str, cap: usize) -> String {
    if text.chars().count() <= cap {
        return text.to_owned();
    }
    let cut = text.char_indices().nth(cap).map_or(text.len(), |(i, _)| i);
    let head = &text[..cut];
    let head = match head.rfind('\n') {
        Some(nl) if nl >= cut - cut / 5 => &head[..nl],
        _ => head,
    };
    if head.is_empty() {
        TRUNCATED_MARKER.to_owned()
    } else {
        format!("{head}\n{TRUNCATED_MARKER}")
    }
}

/// The history files to delete: dated names more than `keep_days` days
/// older than `today` ("older than keep_days": a file exactly `keep_days`
/// old is the last one kept). Names that are not dates are never selected.
pub(crate) fn prune_selection<'a>(
    names: impl IntoIterator<Item = &'a str>,
    today: NaiveDate,
    keep_days: u32,
) -> Vec<String> {
    let mut doomed: Vec<String> = names
        .into_iter()
        .filter(|name| {
            parse_file_name(name)
                .is_some_and(|date| (today - date).num_days() > i64::from(keep_days))
        })
        .map(str::to_owned)
        .collect();
    doomed.sort();
    doomed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn tier_boundaries() {
        assert_eq!(tier_for(-1, 14), Tier::Outside);
        assert_eq!(tier_for(0, 14), Tier::Full);
        assert_eq!(tier_for(13, 14), Tier::Full);
        assert_eq!(tier_for(14, 14), Tier::Compressed);
        assert_eq!(tier_for(60, 14), Tier::Compressed);
        assert_eq!(tier_for(61, 14), Tier::CountOnly);
        assert_eq!(tier_for(180, 14), Tier::CountOnly);
        assert_eq!(tier_for(181, 14), Tier::Outside);
        assert_eq!(tier_for(3, 3), Tier::Compressed);
        assert_eq!(tier_for(70, 90), Tier::Full);
    }

    #[test]
    fn file_names_must_be_real_dates() {
        assert_eq!(parse_file_name("2026-03-14.md"), Some(d("2026-03-14")));
        for bad in [
            "2026-3-14.md",
            "2026-02-30.md",
            "2026-03-14.md.bak",
            "notes.md",
            "2026-03-14",
            "2026_03_14.md",
            "+202-03-14.md",
            "２０２６-03-14.md",
        ] {
            assert_eq!(parse_file_name(bad), None, "{bad}");
        }
        assert_eq!(file_name(d("2026-01-02")), "2026-01-02.md");
    }

    #[test]
    fn entries_by_heading() {
        let body = "# 2026-03-14\n\n## 09:15\nMorning work.\nSecond line.\n\n## 14:02\nAfternoon.\n## 15:00\n\n";
        let entries = parse_entries(body);
        assert_eq!(
            entries,
            vec![
                Entry {
                    time: Some("09:15".into()),
                    text: "Morning work.\nSecond line.".into()
                },
                Entry {
                    time: Some("14:02".into()),
                    text: "Afternoon.".into()
                },
            ]
        );
    }

    #[test]
    fn legacy_bullets_and_plain_text() {
        let bullets = "# Tuesday\n- fixed the build\n  (it was the linker)\n* wrote docs\n";
        let entries = parse_entries(bullets);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].text, "fixed the build\n  (it was the linker)");
        assert_eq!(parse_entries("Just one paragraph.\n").len(), 1);
        assert!(parse_entries("# 2026-01-01\n\n").is_empty());
        assert!(parse_entries("").is_empty());
    }

    #[test]
    fn appended_entries_round_trip_and_cannot_split() {
        let mut file = day_title(d("2026-03-14"));
        file.push_str(&format_entry(
            "09:15",
            "first\n## not a heading\n# nor this",
        ));
        file.push_str(&format_entry("10:00", "second"));
        let entries = parse_entries(&file);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].text, "first\n\\## not a heading\n\\# nor this");
        assert_eq!(entries[1].time.as_deref(), Some("10:00"));
    }

    #[test]
    fn rendering_per_tier() {
        let entries = parse_entries("## 09:00\na\n## 10:00\nb\n## 11:00\nc\n");
        let date = d("2026-03-14");
        assert_eq!(
            render_day(date, &entries, Tier::Full).unwrap(),
            "### 2026-03-14\n- [09:00] a\n- [10:00] b\n- [11:00] c"
        );
        assert_eq!(
            render_day(date, &entries, Tier::Compressed).unwrap(),
            "### 2026-03-14\n- [09:00] a\n…2 more entries"
        );
        assert_eq!(
            render_day(date, &entries, Tier::CountOnly).unwrap(),
            "#### 2026-03-14 (3 entries)"
        );
        assert_eq!(render_day(date, &entries, Tier::Outside), None);
        assert_eq!(render_day(date, &[], Tier::Full), None);
        assert_eq!(
            render_day(date, &entries[..2], Tier::Compressed).unwrap(),
            "### 2026-03-14\n- [09:00] a\n…1 more entry"
        );
    }

    #[test]
    fn caps() {
        assert_eq!(cap_text("short", 10), "short");
        assert_eq!(cap_text("", 0), "");
        assert_eq!(cap_text("abc", 0), TRUNCATED_MARKER);
        assert_eq!(
            cap_text("héllo wörld", 5),
            format!("héllo\n{TRUNCATED_MARKER}")
        );
        assert_eq!(
            cap_text("line one\nline two", 10),
            format!("line one\n{TRUNCATED_MARKER}")
        );
    }

    #[test]
    fn prune_keeps_365_and_skips_non_dates() {
        let today = d("2026-06-01");
        let names = [
            file_name(today - chrono::Duration::days(364)),
            file_name(today - chrono::Duration::days(365)),
            file_name(today - chrono::Duration::days(366)),
            file_name(today - chrono::Duration::days(900)),
            "notes.md".to_owned(),
            "1999-01-01.txt".to_owned(),
            "1999-02-31.md".to_owned(),
        ];
        let doomed = prune_selection(names.iter().map(String::as_str), today, 365);
        assert_eq!(doomed, vec![names[3].clone(), names[2].clone()]);
    }
}
