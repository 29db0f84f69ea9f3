//! Security primitives shared by every surface that stores or shows text:
//! prompt-injection screening and credential / exfiltration-URL redaction.
//! Pure functions, no actor: memory writers, migration, the lessons file
//! and the `kirocrew security …` commands call them directly.
//!
//! Spec: "Semantic Memory → Injection detection", "Episodic Memory →
//! Injection screening", the `redact_credentials` / `redact_exfiltration_urls`
//! passages, and issue 12 "Security primitives" (screening v2).
//!
//! The screen works in layers, each reported in the [`Verdict`]:
//!
//! 1. [`normalize`]: NFKC, invisible and bidi characters dropped, lower
//!    case; then a *folded* view with confusables (Cyrillic/Greek look-alikes)
//!    mapped to ASCII, leetspeak undone and spaced-out letters joined.
//! 2. [`decode`]: embedded base64 / hex / percent-encoded runs decoded
//!    (bounded) and screened like the text itself.
//! 3. [`rules`]: instruction-override, role-forgery, boundary-forgery and
//!    exfiltration rules in en, fr, de, es, pt, it, ru, zh and ja.
//! 4. [`speech`]: the discussion guard — a match inside quoted or reported
//!    speech ("the blog explains how attackers make models ignore previous
//!    instructions") does not block, unless the rule is structural; and
//!    [`mention`] tells a chat-template token used from one named in
//!    documentation, a question or code.
//! 5. [`ngram`]: a logistic-regression model over hashed character and
//!    word n-grams, trained on the labelled sets and compiled in; it blocks
//!    a text no rule matched when it is confident (more confident still for
//!    a discussion).
//! 6. [`similarity`]: the optional embedding signal against a bank of
//!    attack exemplars, combined with the rule verdict by
//!    [`similarity::combine`] (the caller supplies the vectors).
//!
//! Files: `normalize.rs`, `decode.rs`, `rules/` (`rule.rs` types,
//! `vocab.rs` per-language words, `table.rs` the compiled rules),
//! `ngram/` (features, model file, trainer, `screen_model.bin`),
//! `speech.rs`, `mention.rs`, `screen.rs` (the verdict), `similarity.rs` (+
//! `exemplars.jsonl`), `redact.rs` (credentials), `exfil_urls.rs`,
//! `inspect.rs` (all detectors over one stored text, for `security audit`),
//! `lane.rs` (allow / quarantine / block from a verdict), `structure.rs`
//! (the string values of JSON, YAML, Python-dict, CSV, e-mail and Markdown
//! table texts, which the statistical layer scores one by one).

mod decode;
pub mod exfil_urls;
pub mod inspect;
pub mod lane;
mod mention;
pub mod ngram;
pub mod normalize;
mod passages;
pub mod redact;
mod rules;
pub mod screen;
pub mod similarity;
mod speech;
mod structure;

pub use exfil_urls::redact_exfiltration_urls;
pub use inspect::{inspect, Finding, FindingKind};
pub use lane::Lane;
pub use redact::{credential_kinds, redact, redact_credentials, SNIPPET_CHARS};
pub use rules::rule::{Category, Rule, Strength};
pub use screen::{
    find_injection, find_injection_in_json, screen, screen_json, screen_parts, screen_parts_as,
    screen_parts_with, screen_rules, statistical_verdict, Layer, StatisticalPolicy, Verdict,
};
pub use similarity::{best_match, combine, exemplars, Exemplar, SimilarityMatch, SimilarityPolicy};

/// Builds the rule table and loads the compiled-in n-gram model now, so
/// the first write of a process does not pay for it (about a quarter of a
/// second on a small machine). The daemon calls it on a background thread
/// at start; a screen that runs before it finishes simply waits for the
/// same one-time build.
pub fn warm() {
    std::sync::LazyLock::force(&rules::table::TABLE);
    let _ = ngram::model();
}
