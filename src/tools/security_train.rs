//! `kirocrew security train`: trains the statistical screening layer (the
//! n-gram logistic regression of `security::ngram`) on labelled JSONL sets
//! and writes the model file.
//!
//! Why a command: the compiled-in model (`actors/src/security/ngram/
//! screen_model.bin`) must be reproducible from the committed data, by
//! anyone, with the same code that scores it; and an operator with their
//! own labelled texts can train and try a model of their own. `--check`
//! sets are scored with the new model (rules + model at each threshold,
//! the `bench screening` report), which is how the threshold is chosen on
//! sets left out of training.
//!
//! Regenerate the compiled-in model (from the repository root):
//! `kirocrew security train --out actors/src/security/ngram/screen_model.bin`
//! (with no `--set`, the sets of `ngram::TRAINING_SETS`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Args;

use super::bench_lanes::Row;
use super::bench_screening::{measure, print_report, read_rows, screen_rows};
use kirocrew_actors::security::ngram::{self, train_texts, NgramModel, TrainOptions};
use kirocrew_actors::security::normalize::plain;
use kirocrew_actors::security::screen::{
    statistical_verdict, Passages, StatisticalPolicy, Verdict,
};

/// Options of `kirocrew security train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Labelled JSONL sets to train on (repeat; default: the sets the
    /// compiled-in model is trained on, found under ./actors).
    #[arg(long = "set")]
    pub sets: Vec<PathBuf>,
    /// Where to write the model file.
    #[arg(long)]
    pub out: PathBuf,
    /// Labelled sets to score with the new model (not trained on).
    #[arg(long = "check")]
    pub checks: Vec<PathBuf>,
    /// Also print every `--check` text the screen gets wrong.
    #[arg(long)]
    pub errors: bool,
    /// Write one JSON line per `--check` text (label, category, the rules'
    /// verdict, the model's probability) for calibration elsewhere.
    #[arg(long)]
    pub scores: Option<PathBuf>,
    /// Full passes over the data.
    #[arg(long, default_value_t = TrainOptions::default().epochs)]
    pub epochs: usize,
    /// Inverse regularization strength.
    #[arg(long, default_value_t = TrainOptions::default().c)]
    pub c: f32,
}

/// The default training sets, relative to the repository root.
fn default_sets() -> Vec<PathBuf> {
    ngram::TRAINING_SETS
        .iter()
        .map(|s| Path::new("actors").join(s))
        .collect()
}

/// Runs the command.
pub(crate) fn run(args: TrainArgs) -> anyhow::Result<ExitCode> {
    crate::telemetry::init(false, "warn");
    if args.epochs == 0 || !(args.c.is_finite() && args.c > 0.0) {
        bail!("--epochs must be at least 1 and --c a positive number");
    }
    let sets = if args.sets.is_empty() {
        default_sets()
    } else {
        args.sets.clone()
    };
    let rows = read_rows(&sets)?;
    let texts: Vec<(&str, bool)> = rows.iter().map(|r| (r.text.as_str(), r.attack)).collect();
    let opts = TrainOptions {
        c: args.c,
        epochs: args.epochs,
        ..TrainOptions::default()
    };
    let started = std::time::Instant::now();
    let Some(model) = train_texts(&texts, &opts) else {
        bail!("the training sets need both attacks and benign texts");
    };
    let bytes = model.to_bytes();
    std::fs::write(&args.out, &bytes).with_context(|| format!("writing {}", args.out.display()))?;
    // Checked as stored (rounded, smallest weights dropped), not as trained.
    let model = NgramModel::from_bytes(&bytes)?;
    let attacks = rows.iter().filter(|r| r.attack).count();
    println!(
        "trained on {} texts ({attacks} attacks) in {:.1} s; {} weights kept, {} bytes → {}",
        rows.len(),
        started.elapsed().as_secs_f64(),
        model.weights.iter().filter(|w| **w != 0.0).count(),
        bytes.len(),
        args.out.display()
    );
    if !args.checks.is_empty() {
        let check = read_rows(&args.checks)?;
        let parts = screen_rows(&check, Some(&model), Passages::Scored);
        print_report(&measure(&check, &parts, None));
        if args.errors {
            print_errors(&check, &parts);
        }
        if let Some(path) = &args.scores {
            write_scores(path, &check, &parts, &model)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One JSON line per check text: what the rules said and the model's
/// probability — for a withdrawable block the veto score the screen
/// computed, for any other block the whole text's, so a calibration can
/// weigh both (`vetoable` tells which).
fn write_scores(
    path: &Path,
    rows: &[Row],
    parts: &[(Verdict, Option<f32>)],
    model: &NgramModel,
) -> anyhow::Result<()> {
    let mut out = String::new();
    for (row, (rules, score)) in rows.iter().zip(parts) {
        let p = score.or_else(|| ngram::score_with(model, &plain(&row.text)));
        let line = serde_json::json!({
            "label": if row.attack { "attack" } else { "benign" },
            "category": row.category,
            "rules_blocked": rules.blocked,
            "vetoable": rules.blocked && score.is_some(),
            "rule": rules.rule,
            "discussion": rules.discussion,
            "cjk": rules.cjk,
            "p": p,
            "text": row.text,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))
}

/// One line per check text the screen (rules + the new model) gets wrong.
fn print_errors(rows: &[Row], parts: &[(Verdict, Option<f32>)]) {
    let policy = StatisticalPolicy::default();
    for (row, (rules, score)) in rows.iter().zip(parts) {
        let v = statistical_verdict(rules.clone(), *score, &policy);
        if v.blocked == row.attack {
            continue;
        }
        let what = if row.attack {
            "missed"
        } else {
            "false positive"
        };
        let head: String = row.text.chars().take(110).collect();
        println!(
            "{what:<14} {:<22} {:<11} p={:.2} {}  {}",
            row.category,
            v.rule.unwrap_or("-"),
            score.unwrap_or(f32::NAN),
            if v.discussion { "(discussion)" } else { "" },
            head.replace('\n', " ")
        );
    }
}
