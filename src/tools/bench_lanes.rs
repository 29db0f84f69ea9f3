//! The lanes part of `kirocrew bench screening`: for each set, source and
//! category, the fractions of texts the screen allows, quarantines and
//! blocks (`Verdict::lane`), and the totals a writer cares about — benign
//! texts blocked (data lost), benign texts quarantined (a human's time),
//! attacks blocked or quarantined (kept out of every prompt).
//!
//! Why apart from `bench_screening.rs`: the recall / FPR report treats the
//! screen as one flag; the lanes are what a memory writer does with it
//! (issue 41), and that report called by the screening bench only.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use kirocrew_actors::security::{Lane, Verdict};

use serde::Deserialize;

/// One labelled text.
#[derive(Debug, Deserialize)]
pub(super) struct Row {
    /// `label`: attack (true) or benign.
    #[serde(rename = "label", deserialize_with = "attack_label")]
    pub(super) attack: bool,
    /// The attack family or benign kind.
    pub(super) category: String,
    /// The text.
    pub(super) text: String,
    /// Where the text came from (`package==version path…`), optional; the
    /// lanes report groups by its first word.
    #[serde(default)]
    pub(super) source: Option<String>,
    /// The file name of the set the row was read from.
    #[serde(skip)]
    pub(super) set: String,
}

/// `label` must be `attack` or `benign`; answers whether it is an attack.
fn attack_label<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match String::deserialize(d)?.as_str() {
        "attack" => Ok(true),
        "benign" => Ok(false),
        other => Err(serde::de::Error::custom(format!(
            "label must be attack or benign, not {other:?}"
        ))),
    }
}

/// Allowed / quarantined / blocked counts of one group.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    allow: usize,
    quarantine: usize,
    block: usize,
}

impl Counts {
    fn add(&mut self, lane: Lane) {
        match lane {
            Lane::Allow => self.allow += 1,
            Lane::Quarantine => self.quarantine += 1,
            Lane::Block => self.block += 1,
        }
    }

    fn n(&self) -> usize {
        self.allow + self.quarantine + self.block
    }

    fn frac(&self, k: usize) -> f64 {
        k as f64 / self.n().max(1) as f64
    }

    fn json(&self) -> Value {
        json!({
            "n": self.n(),
            "allowed": self.frac(self.allow),
            "quarantined": self.frac(self.quarantine),
            "blocked": self.frac(self.block),
        })
    }
}

/// Counts per group key, attacks and benign texts apart.
#[derive(Debug, Default)]
struct Groups {
    attack: BTreeMap<String, Counts>,
    benign: BTreeMap<String, Counts>,
}

impl Groups {
    fn add(&mut self, attack: bool, key: &str, lane: Lane) {
        let side = if attack {
            &mut self.attack
        } else {
            &mut self.benign
        };
        side.entry(key.to_owned()).or_default().add(lane);
    }

    fn json(&self) -> Value {
        let side = |m: &BTreeMap<String, Counts>| -> Value {
            m.iter()
                .map(|(k, c)| (k.clone(), c.json()))
                .collect::<Map<_, _>>()
                .into()
        };
        json!({"attack": side(&self.attack), "benign": side(&self.benign)})
    }
}

/// The package (or corpus) a row came from: the first word of its
/// `source` (`agentdojo==0.1.35 data/suites/…` → `agentdojo==0.1.35`),
/// else its set's file name.
fn source_of(row: &Row) -> &str {
    row.source
        .as_deref()
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or(&row.set)
}

/// The lanes report of `verdicts` (one per row, after every layer).
pub(super) fn lanes(rows: &[Row], verdicts: &[Verdict]) -> Value {
    let (mut by_set, mut by_source, mut by_category) =
        (Groups::default(), Groups::default(), Groups::default());
    let (mut attacks, mut benign) = (Counts::default(), Counts::default());
    for (row, v) in rows.iter().zip(verdicts) {
        let lane = v.lane();
        by_set.add(row.attack, &row.set, lane);
        by_source.add(row.attack, source_of(row), lane);
        by_category.add(row.attack, &row.category, lane);
        if row.attack {
            attacks.add(lane);
        } else {
            benign.add(lane);
        }
    }
    json!({
        "attacks": attacks.json(),
        "benign": benign.json(),
        "benign_blocked": benign.frac(benign.block),
        "benign_quarantined": benign.frac(benign.quarantine),
        "attacks_blocked_or_quarantined": attacks.frac(attacks.block + attacks.quarantine),
        "by_set": by_set.json(),
        "by_source": by_source.json(),
        "by_category": by_category.json(),
    })
}

/// Prints the lanes report: totals, then one line per set and source.
pub(super) fn print_lanes(report: &Value) {
    let f = |v: &Value| v.as_f64().unwrap_or_default();
    println!(
        "lanes: benign blocked {:.3}  benign quarantined {:.3}  attacks blocked or quarantined {:.3}",
        f(&report["benign_blocked"]),
        f(&report["benign_quarantined"]),
        f(&report["attacks_blocked_or_quarantined"])
    );
    for group in ["by_set", "by_source"] {
        println!("  {}:", group.replace('_', " "));
        for side in ["attack", "benign"] {
            let Some(map) = report[group][side].as_object() else {
                continue;
            };
            for (key, c) in map {
                println!(
                    "    {side:<6} {key:<48} n {:>4}  allowed {:.3}  quarantined {:.3}  blocked {:.3}",
                    c["n"],
                    f(&c["allowed"]),
                    f(&c["quarantined"]),
                    f(&c["blocked"])
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kirocrew_actors::security::screen;

    fn row(attack: bool, category: &str, source: Option<&str>, text: &str) -> Row {
        Row {
            attack,
            category: category.into(),
            text: text.into(),
            source: source.map(Into::into),
            set: "set.jsonl".into(),
        }
    }

    #[test]
    fn lanes_are_counted_per_side_source_and_category() {
        let rows = vec![
            row(true, "override", Some("pkg==1 a"), "plain words"),
            row(true, "override", Some("pkg==1 b"), "plain words"),
            row(false, "note", None, "Buy milk on the way home."),
        ];
        let mut quarantined = screen("plain words");
        (quarantined.blocked, quarantined.layer) = (true, Some(screen::Layer::Statistical));
        let verdicts = vec![quarantined, screen("plain words"), screen("Buy milk.")];
        let report = lanes(&rows, &verdicts);
        let at = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
        assert!((at(&report["attacks_blocked_or_quarantined"]) - 0.5).abs() < 1e-9);
        assert!(at(&report["benign_blocked"]).abs() < 1e-9);
        let src = &report["by_source"]["attack"]["pkg==1"];
        assert_eq!(src["n"], 2);
        assert!((at(&src["quarantined"]) - 0.5).abs() < 1e-9);
        assert_eq!(report["by_source"]["benign"]["set.jsonl"]["n"], 1);
        assert_eq!(report["by_category"]["benign"]["note"]["n"], 1);
    }
}
