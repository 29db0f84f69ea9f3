//! Verified choice of llama.cpp's CPU kernels: before this process
//! computes with a `libggml-cpu-<variant>` module, a child process proves
//! that the module runs on this CPU (spec: "In-Process Embedder").
//!
//! ## Why
//! ggml picks the module with the highest score for the CPU and trusts it.
//! A module that dies on this CPU (SIGILL) takes the whole daemon with it:
//! under systemd a crash loop, for the CLI a dead command. The instruction
//! check behind the score is not enough. Here is the case that prompted
//! this: on Sapphire Rapids the release build's `sapphirerapids` module
//! died in `tinygemm_kernel_amx<block_q8_0>` at `tileloadd`, and the debug
//! build's did not.
//!
//! ## The AMX crash, root cause (llama-cpp-sys-2 0.1.161's llama.cpp)
//! The AMX path of ggml's CPU backend sets up the tile registers once per
//! thread in `ggml_tile_config_init` (`ggml/src/ggml-cpu/amx/mmq.cpp`
//! 204–224). It fills a 64-byte `tile_config_t` on the stack (palette 1,
//! rows/colsb of tiles 0–7) and hands it to `_tile_loadconfig`. GCC 12's
//! `_tile_loadconfig` (`amxtileintrin.h` line 42) is inline assembly
//! whose memory operand is `*(const void **)config`, so it tells the
//! compiler that `ldtilecfg` reads **8 bytes**, not 64. The optimizer may
//! then delete the stores to bytes 16–63 (`colsb[]`, `rows[]`) as dead.
//! Whether it does depends on optimization level and inlining:
//! - llama-cpp-sys-2 builds llama.cpp as CMake `Release` (`-O3`) for a
//!   release build and as `RelWithDebInfo` (`-O2`) for a debug build
//!   (its build.rs, lines 494–498);
//! - in this build's own `libggml-cpu-sapphirerapids.so` (GCC 12.2,
//!   `objdump -d`, inlined into `ggml_backend_amx_mul_mat`), the debug
//!   build's module stores `colsb[0..8]` and `rows[0..8]` before
//!   `ldtilecfg`. The release build's module only zeroes the 64 bytes and
//!   sets `palette_id = 1`. mmq.cpp compiled by hand at `-O2` and `-O3`
//!   gives the same two results. A standalone copy of
//!   `ggml_tile_config_init` loses the stores even at `-O2`, so the debug
//!   build works by luck. Clang 14 keeps the stores: its intrinsic is a
//!   builtin.
//!
//! `ldtilecfg` of palette 1 with every tile at 0 rows × 0 bytes is legal,
//! but it leaves every tile unconfigured. `tilezero`, which
//! `tinygemm_kernel_amx<block_q8_0>` starts with, needs only a loaded
//! palette. The first `tileloadd` into a tile of 0 rows raises #UD (by
//! the SDM's exception conditions), which is the SIGILL that was
//! reported. `ARCH_REQ_XCOMP_PERM` cannot help:
//! ggml already asks for it (`amx/amx.cpp` 214–221). F16 never reaches
//! tiles: its AMX path is AVX-512 (mmq.cpp 2356ff). The `zen4` module is
//! `sapphirerapids` without AMX (`ggml/src/CMakeLists.txt` 512–517), so it
//! works. Only quantized matrices (Q4_0/Q4_1/Q8_0/K-quants/IQ4_XS,
//! `amx/common.h` 106) with more than one row per batch run the tile
//! kernel, which is why an embedding model crashes and a one-token
//! decode would not.
//!
//! ## What is done about it
//! - **Verification**: the candidate modules are taken in ggml's order;
//!   each is loaded in a child process (the caller's [`ProbeCommand`], for
//!   kirocrew `kirocrew probe-cpu-module`), which multiplies a small
//!   matrix of every weight type the model uses in every buffer type
//!   llama.cpp could put it in (`probe.rs`). A module that dies or
//!   computes wrong numbers is skipped and the next one is tried.
//! - **Verdict cache**: results are kept per (module file hash, CPU) in
//!   the data home (`verdicts.rs`), so the child runs once per machine
//!   and module, not per start.
//! - **Mitigation**: a module with AMX kernels is not chosen unless it is
//!   pinned (`KIROCREW_GGML_CPU_MODULE=sapphirerapids`), so tiles are not
//!   used at all by default. On Sapphire Rapids that means `zen4`: the
//!   same AVX-512/VNNI/BF16 kernels, without the tile kernels, whose setup
//!   this toolchain compiles wrongly. Fixing the module itself would need
//!   a different compiler or a patched llama.cpp; llama-cpp-2 0.1.160
//!   does not expose `use_extra_bufts`, which would keep weights out of
//!   the AMX buffer in-process.
//! - **Pinning**: [`PIN_ENV`] restricts the choice to one module. It is
//!   still verified: if it fails, there is no fallback, but a clear error.
//! - **Degrading**: when no module passes, there are no kernels. The
//!   embedder's load fails with that error, and memory stays keyword-only.
//!
//! The choice is made once per process (ggml cannot unload a module). A
//! model loaded later whose weight types were not verified yet has those
//! types probed on the module already loaded; it is refused if they fail.

mod modules;
mod probe;
mod select;
mod state;
mod supervise;
mod types;
mod verdicts;

pub use super::cpu_backend::backends_dir;
pub use modules::{parse_pin, variant_of};
pub use probe::run_probe;
pub use state::{bf16_kernels, cpu_backend, cpu_backend_for, model_types, report};
pub use types::{
    KernelError, KernelReport, KernelSettings, ModuleReport, ProbeCommand, Verification,
    BASELINE_TYPES, PIN_ENV, PROBE_TIMEOUT, VERDICTS_FILE,
};
pub use verdicts::{cpu_identity, this_cpu, TypeVerdict};

/// Sets how this process chooses its CPU module. Call it before anything
/// loads llama.cpp; returns false (and changes nothing) once a module was
/// chosen.
pub fn configure(settings: KernelSettings) -> bool {
    state::configure(settings)
}

/// Checks a pin against the modules there are, without loading any: an
/// unknown name is an error listing the available ones.
pub fn check_pin(settings: &KernelSettings) -> Result<(), String> {
    state::check_pin(settings).map_err(|e| e.to_string())
}
