//! The process's one choice of CPU module: the settings it is made with,
//! the module loaded, the weight types verified on it, and the report.
//!
//! Choosing runs under one lock (two loaders must not both load a
//! module); the report has a lock of its own so status endpoints never wait
//! for a probe.

use std::collections::BTreeSet;
use std::ffi::CStr;
use std::path::Path;
use std::sync::{LazyLock, Mutex, MutexGuard};

use super::super::cpu_backend::{backends_dir, load_module, CpuBackend};
use super::modules::{self, Candidate};
use super::select::{self, Inputs};
use super::supervise::{self, ProbeRun};
use super::types::{
    KernelError, KernelReport, KernelSettings, ModuleReport, BASELINE_TYPES, PIN_ENV,
};
use super::verdicts::{self, VerdictFile};

struct Chosen {
    outcome: Result<&'static CpuBackend, KernelError>,
    /// Weight types verified (or, unverified, accepted) on the module.
    verified: BTreeSet<String>,
}

#[derive(Default)]
struct State {
    settings: KernelSettings,
    chosen: Option<Chosen>,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(Mutex::default);
static REPORT: Mutex<Option<KernelReport>> = Mutex::new(None);

/// A poisoned lock still holds a consistent value here (each is replaced
/// whole); keep going rather than fail every later call.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn configure(settings: KernelSettings) -> bool {
    let mut state = lock(&STATE);
    if state.chosen.is_some() {
        return false;
    }
    state.settings = settings;
    true
}

/// The module computing in this process, chosen (and loaded) on first
/// use for the baseline weight types.
pub fn cpu_backend() -> Result<&'static CpuBackend, String> {
    cpu_backend_for(&[])
}

/// Like [`cpu_backend`], for a model with weights of `types` (ggml names)
/// as well: the first call chooses for them; later calls verify types not
/// verified yet on the module already loaded.
pub fn cpu_backend_for(types: &[String]) -> Result<&'static CpuBackend, String> {
    let mut guard = lock(&STATE);
    let state = &mut *guard;
    let needed = needed_types(types);
    match &mut state.chosen {
        None => {
            let (chosen, report) = choose(&state.settings, &needed);
            log_choice(&report);
            *lock(&REPORT) = Some(report);
            let outcome = chosen.outcome.clone().map_err(|e| e.to_string());
            state.chosen = Some(chosen);
            outcome
        }
        Some(chosen) => {
            let backend = chosen.outcome.clone().map_err(|e| e.to_string())?;
            let missing: Vec<String> = needed
                .iter()
                .filter(|t| !chosen.verified.contains(*t))
                .cloned()
                .collect();
            if !missing.is_empty() {
                verify_more(&state.settings, backend, &missing)?;
                chosen.verified.extend(missing.iter().cloned());
                if let Some(report) = lock(&REPORT).as_mut() {
                    report.types.extend(missing);
                }
            }
            Ok(backend)
        }
    }
}

/// The choice made so far (`None` before anything needed kernels).
pub fn report() -> Option<KernelReport> {
    lock(&REPORT).clone()
}

/// The ggml names of a GGUF's matrix weight types (empty when the file
/// cannot be read: llama.cpp then reports the file itself).
pub fn model_types(path: &Path) -> Vec<String> {
    let ids = super::super::super::bf16::matrix_types(path).unwrap_or_default();
    ids.into_iter().filter_map(type_name).collect()
}

fn type_name(id: u32) -> Option<String> {
    if id >= llama_cpp_sys_2::GGML_TYPE_COUNT {
        return None;
    }
    // SAFETY: ids below the count index ggml's static type table.
    let raw = unsafe { llama_cpp_sys_2::ggml_type_name(id) };
    (!raw.is_null()).then(|| {
        unsafe { CStr::from_ptr(raw) }
            .to_string_lossy()
            .into_owned()
    })
}

/// The model's types first (probed first: they matter most), then the
/// baseline, without repeats.
fn needed_types(model: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    model
        .iter()
        .map(String::as_str)
        .chain(BASELINE_TYPES.iter().copied())
        .filter(|t| seen.insert(*t))
        .map(str::to_owned)
        .collect()
}

/// The module directory's candidates, best first, restricted to a pin.
fn candidates(dir: &Path, settings: &KernelSettings) -> Result<Vec<Candidate>, KernelError> {
    let listed = modules::list(dir);
    if listed.is_empty() {
        return Err(KernelError::NoModules(format!(
            "{}: no llama.cpp CPU modules there",
            dir.display()
        )));
    }
    let scored = listed
        .into_iter()
        .map(|(name, path)| {
            let score = modules::read_score(&path).unwrap_or_else(|error| {
                tracing::warn!(module = %path.display(), %error, "not a usable ggml CPU module");
                0
            });
            Candidate { name, path, score }
        })
        .collect();
    let (ranked, unusable) = modules::rank(scored);
    match &settings.pin {
        Some(pin) => modules::apply_pin(ranked, &unusable, pin, PIN_ENV),
        None if ranked.is_empty() => Err(KernelError::NoModules(format!(
            "{}: no llama.cpp CPU module there runs on this processor",
            dir.display()
        ))),
        None => Ok(ranked),
    }
}

pub(super) fn check_pin(settings: &KernelSettings) -> Result<(), KernelError> {
    if settings.pin.is_none() {
        return Ok(());
    }
    // Without a module directory there is nothing to check against; that
    // error is reported when kernels are needed.
    let Ok(dir) = backends_dir() else {
        return Ok(());
    };
    candidates(&dir, settings).map(|_| ())
}

/// Runs the decision with the settings' probe and cache.
fn decide(
    settings: &KernelSettings,
    candidates: &[Candidate],
    needed: &[String],
    cpu: &str,
    pinned: bool,
) -> select::Decision {
    let mut cache = settings
        .verdicts
        .as_deref()
        .map(VerdictFile::load)
        .unwrap_or_else(VerdictFile::empty);
    let now = chrono::Utc::now().to_rfc3339();
    let run = |c: &Candidate, types: &[String]| -> ProbeRun {
        match &settings.probe {
            Some(command) => supervise::run(command, &c.path, types, settings.timeout),
            None => ProbeRun::NotRun("no probe configured".into()),
        }
    };
    let probe: Option<select::ProbeFn<'_>> =
        settings.probe.as_ref().map(|_| &run as select::ProbeFn<'_>);
    let inputs = Inputs {
        candidates,
        needed,
        cpu,
        pinned,
        now: &now,
    };
    let decision = select::decide(&inputs, &mut cache, &verdicts::file_blake3, probe);
    if let (true, Some(path)) = (decision.cache_changed, &settings.verdicts) {
        if let Err(error) = cache.save(path) {
            tracing::warn!(path = %path.display(), %error, "CPU kernel verdicts not saved; probing again next start");
        }
    }
    decision
}

fn choose(settings: &KernelSettings, needed: &[String]) -> (Chosen, KernelReport) {
    let cpu = verdicts::this_cpu();
    let mut report = KernelReport {
        module: None,
        path: None,
        features: Vec::new(),
        verification: None,
        pinned: settings.pin.is_some(),
        types: Vec::new(),
        fallback: None,
        error: None,
        cpu: cpu.clone(),
        candidates: Vec::new(),
    };
    let fail = |mut report: KernelReport, error: KernelError| {
        report.error = Some(error.to_string());
        let chosen = Chosen {
            outcome: Err(error),
            verified: BTreeSet::new(),
        };
        (chosen, report)
    };
    let dir = match backends_dir() {
        Ok(dir) => dir,
        Err(e) => return fail(report, KernelError::NoModules(e)),
    };
    let candidates = match candidates(&dir, settings) {
        Ok(c) => c,
        Err(e) => return fail(report, e),
    };
    let decision = decide(settings, &candidates, needed, &cpu, settings.pin.is_some());
    report.candidates = decision.modules;
    let Some((winner, verification)) = decision.chosen else {
        let error = match &settings.pin {
            Some(pin) => KernelError::PinFailed {
                module: pin.clone(),
                why: summary(&report.candidates),
                env: PIN_ENV.to_owned(),
            },
            None => KernelError::NonePassed {
                tried: summary(&report.candidates),
            },
        };
        return fail(report, error);
    };
    match load_module(&dir, &winner.name, &winner.path) {
        Ok(backend) => {
            let backend: &'static CpuBackend = Box::leak(Box::new(backend));
            report.module = Some(winner.name.clone());
            report.path = Some(winner.path.display().to_string());
            report.features = backend.features.clone();
            report.verification = Some(verification);
            report.types = needed.to_vec();
            report.fallback = fallback(&report.candidates, &winner.name);
            let chosen = Chosen {
                outcome: Ok(backend),
                verified: needed.iter().cloned().collect(),
            };
            (chosen, report)
        }
        Err(e) => fail(report, KernelError::Load(e)),
    }
}

/// Probes the loaded module for types a later model needs.
fn verify_more(
    settings: &KernelSettings,
    backend: &CpuBackend,
    missing: &[String],
) -> Result<(), String> {
    let candidate = Candidate {
        name: backend.name.clone(),
        path: backend.module.clone(),
        score: 0,
    };
    let cpu = verdicts::this_cpu();
    // Pinned: the module is loaded already, so no other may be chosen.
    let decision = decide(settings, &[candidate], missing, &cpu, true);
    match decision.chosen {
        Some(_) => Ok(()),
        None => Err(KernelError::NewTypes {
            module: backend.name.clone(),
            why: summary(&decision.modules),
        }
        .to_string()),
    }
}

/// `zen4: crashed (q8_0: …); haswell: ok`.
fn summary(modules: &[ModuleReport]) -> String {
    if modules.is_empty() {
        return "no candidates".into();
    }
    modules
        .iter()
        .map(|m| match &m.detail {
            Some(d) => format!("{}: {} ({d})", m.module, m.verdict),
            None => format!("{}: {}", m.module, m.verdict),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why the winner is not the best-ranked candidate, if it is not.
fn fallback(modules: &[ModuleReport], winner: &str) -> Option<String> {
    let before: Vec<ModuleReport> = modules
        .iter()
        .take_while(|m| m.module != winner)
        .cloned()
        .collect();
    (!before.is_empty()).then(|| summary(&before))
}

fn log_choice(report: &KernelReport) {
    let passed_over = report
        .candidates
        .iter()
        .filter(|m| report.module.as_deref() != Some(m.module.as_str()));
    for m in passed_over {
        tracing::warn!(module = %m.module, verdict = %m.verdict, detail = m.detail.as_deref().unwrap_or(""), cached = m.cached, "llama.cpp CPU module not used");
    }
    match (&report.module, &report.error) {
        (Some(module), _) => tracing::info!(
            %module,
            verification = ?report.verification,
            fallback = report.fallback.as_deref().unwrap_or(""),
            "llama.cpp CPU module chosen"
        ),
        (None, Some(error)) => {
            tracing::warn!(%error, "no llama.cpp CPU module; embeddings are off")
        }
        (None, None) => {}
    }
}

/// Whether the CPU module in use has AVX512-BF16 kernels (false when no
/// module could be loaded: nothing will run then anyway).
pub fn bf16_kernels() -> bool {
    cpu_backend().is_ok_and(CpuBackend::has_bf16_kernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(module: &str, verdict: &str, detail: Option<&str>) -> ModuleReport {
        ModuleReport {
            module: module.into(),
            score: 1,
            verdict: verdict.into(),
            detail: detail.map(Into::into),
            cached: false,
        }
    }

    #[test]
    fn the_model_types_come_first_then_the_baseline() {
        let needed = needed_types(&["q4_K".into(), "f32".into(), "q4_K".into()]);
        assert_eq!(needed, ["q4_K", "f32", "f16", "bf16", "q8_0"]);
        assert_eq!(needed_types(&[]), BASELINE_TYPES);
    }

    #[test]
    fn a_fallback_names_what_was_passed_over() {
        let modules = [
            m("crashy", "crashed", Some("SIGILL computing q8_0")),
            m("zen4", "ok", None),
        ];
        assert_eq!(
            fallback(&modules, "zen4").as_deref(),
            Some("crashy: crashed (SIGILL computing q8_0)")
        );
        assert_eq!(fallback(&modules[1..], "zen4"), None);
        assert_eq!(summary(&[]), "no candidates");
    }

    #[test]
    fn ggml_type_names_by_id() {
        assert_eq!(type_name(8).as_deref(), Some("q8_0"));
        assert_eq!(type_name(1).as_deref(), Some("f16"));
        assert_eq!(type_name(10_000), None);
    }
}
