//! The candidate CPU modules of a directory and their order.
//!
//! ggml ranks its `libggml-cpu-<variant>` modules by the score each one's
//! `ggml_backend_score` gives for the running CPU (0: it needs an
//! instruction the CPU lacks; more features, higher score), which is what
//! `ggml_backend_load_best` does (ggml-backend-reg.cpp). That is kept as
//! the order of preference; the caller then verifies candidates in that
//! order. Reading a score means opening the module (as ggml itself does
//! while ranking): the score function is built without the variant's
//! instruction flags exactly so that it can run on any CPU.

use std::path::{Path, PathBuf};

use super::types::{KernelError, KernelSettings, ProbeCommand, PIN_ENV, PROBE_TIMEOUT};

/// One `libggml-cpu-<name>` module that can run on this CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    /// The variant (`icelake`): the file name without prefix and suffix.
    pub name: String,
    /// The module file.
    pub path: PathBuf,
    /// ggml's score for this CPU.
    pub score: i32,
}

/// `libggml-cpu-` on Linux.
fn file_prefix() -> String {
    format!("{}ggml-cpu-", std::env::consts::DLL_PREFIX)
}

/// The variant name of a module file name, if it is one.
pub fn variant_of(file_name: &str) -> Option<&str> {
    file_name
        .strip_prefix(file_prefix().as_str())?
        .strip_suffix(std::env::consts::DLL_SUFFIX)
        .filter(|v| !v.is_empty())
}

/// The module files of `dir` as (variant, path), sorted by variant.
pub(super) fn list(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            variant_of(&name).map(|v| (v.to_owned(), e.path()))
        })
        .collect();
    found.sort();
    found
}

/// ggml's score of a module for this CPU, or why there is none (not a
/// loadable library, or no `ggml_backend_score`: ggml skips those too).
pub(super) fn read_score(path: &Path) -> Result<i32, String> {
    type Score = unsafe extern "C" fn() -> std::os::raw::c_int;
    // SAFETY: this is what ggml's own `ggml_backend_load_best` does with
    // every module in-process: open it (RTLD_NOW | RTLD_LOCAL, as ggml) and
    // call `ggml_backend_score`, whose signature is `ggml_backend_score_t`
    // (ggml-backend-impl.h) and which ggml builds without the variant's
    // instruction flags so that it runs on any CPU. The library is closed
    // when `lib` drops; nothing of it is kept.
    unsafe {
        let lib = libloading::os::unix::Library::open(
            Some(path),
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
        )
        .map_err(|e| e.to_string())?;
        let score = lib
            .get::<Score>(b"ggml_backend_score\0")
            .map_err(|_| "no ggml_backend_score".to_owned())?;
        Ok(score())
    }
}

/// Orders modules as ggml would prefer them: highest score first (ties by
/// name, for a stable order); modules scoring 0 cannot run and are left
/// out. Returns (usable, unusable names).
pub(super) fn rank(scored: Vec<Candidate>) -> (Vec<Candidate>, Vec<String>) {
    let (mut usable, unusable): (Vec<_>, Vec<_>) = scored.into_iter().partition(|c| c.score > 0);
    usable.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.name.cmp(&b.name)));
    (usable, unusable.into_iter().map(|c| c.name).collect())
}

/// Normalizes a pin (`icelake`, or the file name `libggml-cpu-icelake.so`)
/// to the variant name; empty means no pin.
pub fn parse_pin(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    Some(variant_of(raw).unwrap_or(raw).to_owned())
}

// Beside the pin parsing it uses (the settings type itself is plain data
// in `types.rs`).
impl KernelSettings {
    /// Settings with the pin read from [`PIN_ENV`].
    pub fn from_env(probe: Option<ProbeCommand>, verdicts: Option<PathBuf>) -> Self {
        Self {
            probe,
            verdicts,
            pin: std::env::var(PIN_ENV).ok().as_deref().and_then(parse_pin),
            timeout: PROBE_TIMEOUT,
        }
    }
}

/// Restricts the ranked candidates to the pinned one. An unknown name, or
/// one this CPU cannot run, is an error naming what there is.
pub(super) fn apply_pin(
    ranked: Vec<Candidate>,
    unusable: &[String],
    pin: &str,
    env: &str,
) -> Result<Vec<Candidate>, KernelError> {
    if let Some(found) = ranked.iter().find(|c| c.name == pin) {
        return Ok(vec![found.clone()]);
    }
    let available: Vec<&str> = ranked.iter().map(|c| c.name.as_str()).collect();
    if unusable.iter().any(|n| n == pin) {
        return Err(KernelError::PinUnusable {
            env: env.to_owned(),
            pin: pin.to_owned(),
            available: available.join(", "),
        });
    }
    let mut all: Vec<&str> = available
        .iter()
        .copied()
        .chain(unusable.iter().map(String::as_str))
        .collect();
    all.sort_unstable();
    Err(KernelError::PinUnknown {
        env: env.to_owned(),
        pin: pin.to_owned(),
        available: all.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(name: &str, score: i32) -> Candidate {
        Candidate {
            name: name.into(),
            path: PathBuf::from(format!("/m/libggml-cpu-{name}.so")),
            score,
        }
    }

    #[test]
    fn variant_names_come_from_file_names() {
        assert_eq!(variant_of("libggml-cpu-icelake.so"), Some("icelake"));
        assert_eq!(variant_of("libggml-cpu-.so"), None);
        assert_eq!(variant_of("libggml-base.so"), None);
        assert_eq!(variant_of("libggml-cpu-x64.so.1"), None);
    }

    #[test]
    fn ranking_is_by_score_and_drops_modules_the_cpu_cannot_run() {
        let (ranked, unusable) = rank(vec![
            cand("haswell", 40),
            cand("sapphirerapids", 0),
            cand("zen4", 900),
            cand("icelake", 700),
            cand("x64", 1),
            cand("alderlake", 40),
        ]);
        let names: Vec<_> = ranked.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["zen4", "icelake", "alderlake", "haswell", "x64"]);
        assert_eq!(unusable, ["sapphirerapids"]);
    }

    #[test]
    fn pins_are_variant_names_or_file_names() {
        assert_eq!(parse_pin(" icelake "), Some("icelake".into()));
        assert_eq!(parse_pin("libggml-cpu-zen4.so"), Some("zen4".into()));
        assert_eq!(parse_pin("  "), None);
    }

    #[test]
    fn a_pin_keeps_only_its_module_or_names_the_choices() {
        let ranked = vec![cand("zen4", 900), cand("haswell", 40)];
        let unusable = vec!["sapphirerapids".to_owned()];
        let kept = apply_pin(ranked.clone(), &unusable, "haswell", "PIN").unwrap();
        assert_eq!(kept, vec![cand("haswell", 40)]);

        let err = apply_pin(ranked.clone(), &unusable, "icelak", "PIN").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("PIN=icelak"), "{text}");
        assert!(
            text.contains("haswell, sapphirerapids, zen4"),
            "lists every module: {text}"
        );

        let err = apply_pin(ranked, &unusable, "sapphirerapids", "PIN").unwrap_err();
        assert!(
            matches!(err, KernelError::PinUnusable { .. }),
            "a module this CPU cannot run: {err}"
        );
    }
}
