//! How the kirocrew binary verifies llama.cpp's CPU modules: the probe is
//! this very executable, re-run with the hidden `probe-cpu-module`
//! subcommand, and verdicts are cached in the data home
//! (`kirocrew_actors::embedder::kernels` has the why and the rules).
//!
//! Only the binary can set this up: library code (and the in-process test
//! server) cannot assume which executable it runs in, so without it the
//! choice stays ggml's, unverified.

use kirocrew_actors::embedder::kernels::{self, KernelSettings, ProbeCommand, VERDICTS_FILE};

use crate::home::DataHome;

/// The hidden subcommand that runs one probe.
pub const PROBE_SUBCOMMAND: &str = "probe-cpu-module";

/// Settings for this process: probe with our own executable, cache in
/// `home`, pin from `KIROCREW_GGML_CPU_MODULE`.
pub fn settings(home: &DataHome) -> KernelSettings {
    let probe = std::env::current_exe()
        .ok()
        .map(|exe| ProbeCommand::new(exe, [PROBE_SUBCOMMAND.into()]));
    KernelSettings::from_env(probe, Some(home.root().join(VERDICTS_FILE)))
}

/// Installs [`settings`] for this process (before anything loads
/// llama.cpp) and returns them.
pub fn install(home: &DataHome) -> KernelSettings {
    let settings = settings(home);
    kernels::configure(settings.clone());
    settings
}
