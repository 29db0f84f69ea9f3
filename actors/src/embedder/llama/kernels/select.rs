//! Which module computes: the ranked candidates are taken in order, each
//! one's verdicts looked up (cache) or established (probe), and the first
//! one that passes every needed weight type wins. Pure apart from the
//! closures it is given, so the rules are unit-tested with fakes.
//!
//! Rules, per candidate:
//! - a needed type that crashed or computed wrong numbers (cached or just
//!   probed) rules the module out;
//! - needed types with no verdict yet are probed, in one child; a probe
//!   that establishes nothing (timeout, no child) rules the module out for
//!   this start only (nothing is cached);
//! - without a probe command (library use, tests of other crates) untested
//!   types are accepted unverified: ggml's own choice, as before;
//! - a module with AMX kernels (feature `AMX_INT8`) is passed over unless
//!   it is pinned: see the module docs of `kernels` for why.

use std::collections::BTreeMap;
use std::path::Path;

use super::modules::Candidate;
use super::supervise::ProbeRun;
use super::types::{ModuleReport, Verification};
use super::verdicts::{TypeVerdict, VerdictFile};

/// The feature that marks ggml's AMX kernels.
pub(super) const AMX_FEATURE: &str = "AMX_INT8";

/// What the decision needs besides the cache.
pub(super) struct Inputs<'a> {
    /// Candidates, best first (already restricted to a pin).
    pub candidates: &'a [Candidate],
    /// ggml type names the computation will use.
    pub needed: &'a [String],
    /// [`super::verdicts::cpu_identity`] of this machine.
    pub cpu: &'a str,
    /// Whether the single candidate is pinned (AMX allowed, no fallback).
    pub pinned: bool,
    /// Now, RFC 3339 (for new cache entries).
    pub now: &'a str,
}

/// The outcome.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Decision {
    /// The winner and how sure we are of it.
    pub chosen: Option<(Candidate, Verification)>,
    /// What was found about each candidate looked at, in order.
    pub modules: Vec<ModuleReport>,
    /// Whether `cache` changed (to be saved).
    pub cache_changed: bool,
}

/// Probes one module for some types.
pub(super) type ProbeFn<'a> = &'a dyn Fn(&Candidate, &[String]) -> ProbeRun;
/// Hashes a module file.
pub(super) type HashFn<'a> = &'a dyn Fn(&Path) -> std::io::Result<String>;

/// Takes candidates in order until one passes (see the module docs).
pub(super) fn decide(
    inputs: &Inputs<'_>,
    cache: &mut VerdictFile,
    hash: HashFn<'_>,
    probe: Option<ProbeFn<'_>>,
) -> Decision {
    let mut modules = Vec::new();
    let mut cache_changed = false;
    for candidate in inputs.candidates {
        let report = |verdict: &str, detail: Option<String>, cached: bool| ModuleReport {
            module: candidate.name.clone(),
            score: candidate.score,
            verdict: verdict.to_owned(),
            detail,
            cached,
        };
        let blake3 = match hash(&candidate.path) {
            Ok(h) => h,
            Err(e) => {
                modules.push(report(
                    "failed",
                    Some(format!("cannot read the module: {e}")),
                    false,
                ));
                continue;
            }
        };
        let known: BTreeMap<String, TypeVerdict> = cache
            .find(&blake3, inputs.cpu)
            .map(|e| e.types.clone())
            .unwrap_or_default();
        let mut features = cache
            .find(&blake3, inputs.cpu)
            .map(|e| e.features.clone())
            .unwrap_or_default();
        if let Some(bad) = first_failure(inputs.needed, &known) {
            modules.push(report(
                verdict_word(&bad.1),
                Some(failure_detail(&bad)),
                true,
            ));
            continue;
        }
        let missing: Vec<String> = inputs
            .needed
            .iter()
            .filter(|t| !known.contains_key(*t))
            .cloned()
            .collect();
        let mut results = known;
        let mut cached = true;
        if !missing.is_empty() {
            let Some(probe) = probe else {
                modules.push(report(
                    "unverified",
                    Some("no probe configured".into()),
                    false,
                ));
                return Decision {
                    chosen: Some((candidate.clone(), Verification::Unverified)),
                    modules,
                    cache_changed,
                };
            };
            cached = false;
            match probe(candidate, &missing) {
                ProbeRun::Done {
                    features: found,
                    results: fresh,
                } => {
                    cache.record(
                        &file_name(&candidate.path),
                        &blake3,
                        inputs.cpu,
                        &found,
                        &fresh,
                        inputs.now,
                    );
                    cache_changed = true;
                    if !found.is_empty() {
                        features = found;
                    }
                    results.extend(fresh);
                }
                ProbeRun::NotRun(why) => {
                    modules.push(report("not verified", Some(why), false));
                    continue;
                }
            }
        }
        if let Some(bad) = first_failure(inputs.needed, &results) {
            modules.push(report(
                verdict_word(&bad.1),
                Some(failure_detail(&bad)),
                cached,
            ));
            continue;
        }
        if let Some(untested) = inputs.needed.iter().find(|t| !results.contains_key(*t)) {
            // The child stopped before this type without a failure on a
            // needed one: treat like a probe that established nothing.
            modules.push(report(
                "not verified",
                Some(format!("{untested} was not tested")),
                cached,
            ));
            continue;
        }
        if !inputs.pinned && features.iter().any(|f| f == AMX_FEATURE) {
            modules.push(report(
                "passed over",
                Some(
                    "AMX kernels are used only when pinned (see kirocrew's docs on the CPU module)"
                        .into(),
                ),
                cached,
            ));
            continue;
        }
        modules.push(report(
            "ok",
            Some(ok_detail(inputs.needed, &results)),
            cached,
        ));
        return Decision {
            chosen: Some((candidate.clone(), Verification::Verified)),
            modules,
            cache_changed,
        };
    }
    Decision {
        chosen: None,
        modules,
        cache_changed,
    }
}

/// The first needed type with a failing verdict.
fn first_failure(
    needed: &[String],
    results: &BTreeMap<String, TypeVerdict>,
) -> Option<(String, TypeVerdict)> {
    needed.iter().find_map(|t| {
        results
            .get(t)
            .filter(|v| v.is_failure())
            .map(|v| (t.clone(), v.clone()))
    })
}

fn verdict_word(verdict: &TypeVerdict) -> &'static str {
    match verdict {
        TypeVerdict::Crashed { .. } => "crashed",
        TypeVerdict::Wrong { .. } => "wrong",
        TypeVerdict::Ok { .. } | TypeVerdict::Untestable { .. } => "ok",
    }
}

/// `SIGILL computing q8_0` (a crash's text names the type, or the load
/// that killed it) or `f16: wrong results (…)`.
fn failure_detail((ty, verdict): &(String, TypeVerdict)) -> String {
    match verdict {
        TypeVerdict::Crashed { how, .. } => how.clone(),
        other => format!("{ty}: {}", other.describe()),
    }
}

/// `f32 f16 q8_0 verified` (and what could not be tested).
fn ok_detail(needed: &[String], results: &BTreeMap<String, TypeVerdict>) -> String {
    let (tested, untestable): (Vec<&String>, Vec<&String>) = needed
        .iter()
        .partition(|t| matches!(results.get(*t), Some(TypeVerdict::Ok { .. })));
    let join = |v: Vec<&String>| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ");
    let mut text = format!("{} verified", join(tested));
    if !untestable.is_empty() {
        text.push_str(&format!("; {} not testable", join(untestable)));
    }
    text
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
