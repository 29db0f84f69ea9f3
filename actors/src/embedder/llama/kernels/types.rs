//! The plain data of CPU-module selection: its settings, what it reports,
//! its errors, and the names and bounds it works with.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// Environment variable that pins the CPU module (`icelake`).
pub const PIN_ENV: &str = "KIROCREW_GGML_CPU_MODULE";
/// The verdict cache's file name in the data home.
pub const VERDICTS_FILE: &str = "cpu-kernels.json";
/// How long a probe may take (it takes milliseconds; a hang is a failure).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(60);
/// Weight types always verified, whatever the model: F32, F16 and its BF16
/// working copy, and Q8_0 (the default model's). A model's own types are
/// added to these.
pub const BASELINE_TYPES: &[&str] = &["f32", "f16", "bf16", "q8_0"];

/// How to start a probe child: `program args… --module <file> --types
/// <t1,t2…>`; it must call [`run_probe`] and exit with its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeCommand {
    /// The executable.
    pub program: PathBuf,
    /// Arguments before `--module`.
    pub args: Vec<OsString>,
}

impl ProbeCommand {
    /// A probe command.
    pub fn new(program: PathBuf, args: impl IntoIterator<Item = OsString>) -> Self {
        Self {
            program,
            args: args.into_iter().collect(),
        }
    }
}

/// How this process chooses its CPU module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSettings {
    /// How to verify a module; `None` accepts ggml's choice unverified.
    pub probe: Option<ProbeCommand>,
    /// The verdict cache file; `None` keeps verdicts for this process only.
    pub verdicts: Option<PathBuf>,
    /// A pinned variant name.
    pub pin: Option<String>,
    /// Deadline of one probe.
    pub timeout: Duration,
}

impl Default for KernelSettings {
    fn default() -> Self {
        Self {
            probe: None,
            verdicts: None,
            pin: None,
            timeout: PROBE_TIMEOUT,
        }
    }
}

/// How sure the choice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// A probe (now or cached) ran every needed type on this CPU.
    Verified,
    /// No probe was configured: ggml's choice, taken on trust.
    Unverified,
}

/// What was found about one candidate module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleReport {
    /// Variant name.
    pub module: String,
    /// ggml's score for this CPU.
    pub score: i32,
    /// `ok`, `crashed`, `wrong`, `passed over`, `not verified`,
    /// `unverified` or `failed`.
    pub verdict: String,
    /// Why, for people.
    pub detail: Option<String>,
    /// Whether the verdict came from the cache (no child ran).
    pub cached: bool,
}

/// The CPU module choice of this process, for `doctor` and the embedding
/// status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelReport {
    /// The module computing (variant name), if any.
    pub module: Option<String>,
    /// Its file.
    pub path: Option<String>,
    /// Its features (ggml's names).
    pub features: Vec<String>,
    /// How sure the choice is.
    pub verification: Option<Verification>,
    /// Whether [`PIN_ENV`] chose it.
    pub pinned: bool,
    /// Weight types verified on it.
    pub types: Vec<String>,
    /// Why ggml's first choice is not the one computing, if it is not.
    pub fallback: Option<String>,
    /// Why there is no module, if there is none.
    pub error: Option<String>,
    /// The CPU identity verdicts are keyed by.
    pub cpu: String,
    /// Each candidate looked at, best first.
    pub candidates: Vec<ModuleReport>,
}

/// Everything choosing a module can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// No module directory.
    #[error("{0}")]
    NoModules(String),
    /// The pin names no module.
    #[error("{env}={pin}: no such llama.cpp CPU module; available: {available}")]
    PinUnknown {
        /// The variable.
        env: String,
        /// Its value.
        pin: String,
        /// Every module's name.
        available: String,
    },
    /// The pin names a module this CPU cannot run.
    #[error(
        "{env}={pin}: this CPU lacks instructions that module needs; usable here: {available}"
    )]
    PinUnusable {
        /// The variable.
        env: String,
        /// Its value.
        pin: String,
        /// The names this CPU can run.
        available: String,
    },
    /// The pinned module failed verification.
    #[error("the pinned CPU module {module} failed verification on this CPU: {why}; unset {env} to let kirocrew choose")]
    PinFailed {
        /// The module.
        module: String,
        /// What failed.
        why: String,
        /// The variable.
        env: String,
    },
    /// Nothing passed.
    #[error(
        "no llama.cpp CPU module passed verification on this CPU ({tried}); embeddings are off"
    )]
    NonePassed {
        /// Each module with its verdict.
        tried: String,
    },
    /// The chosen module did not load in-process.
    #[error("{0}")]
    Load(String),
    /// The loaded module fails a later model's weight types.
    #[error("the loaded CPU module {module} fails {why}; restart kirocrew to choose another module for this model")]
    NewTypes {
        /// The module.
        module: String,
        /// What failed.
        why: String,
    },
}
