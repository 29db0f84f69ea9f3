//! Runtime choice of llama.cpp's CPU kernels (spec: "In-Process Embedder").
//!
//! ## Why
//! ggml compiled for one instruction set is either slow on newer CPUs or
//! crashes on older ones: the portable AVX2 build leaves AVX-512 and its
//! BF16 dot products idle (~40% of a 256-token embedding on such a core),
//! and a `-march=native` build dies with SIGILL on any other machine. So
//! the build (llama-cpp-2's `dynamic-backends` feature) compiles ggml's CPU
//! backend once per x86 micro-architecture level, from `x64` to
//! `sapphirerapids`, as loadable modules (`libggml-cpu-<variant>.so`). At
//! start-up ggml asks each module for its score on the running CPU (0 when
//! it needs an instruction the CPU lacks) and keeps the best one: the same
//! binary is portable and runs the fastest kernels the CPU has, which is
//! what torch/oneDNN do too.
//!
//! ## Where the modules are
//! Searched once per process, first hit wins:
//! 1. `KIROCREW_GGML_BACKENDS_DIR`, when set (an error if it has none);
//! 2. the executable's directory (a self-contained install);
//! 3. `<exe dir>/../lib/kirocrew` (`make install-service`);
//! 4. the build's own output directory (`make run`, `cargo test`).
//!
//! ggml is never asked to search: its default search also tries the
//! current directory, and loading code from wherever the daemon happens to
//! be started is not something a service should do. Which module of the
//! directory computes is decided in `kernels/` (ggml's ranking, verified in
//! a child process); this file loads the one chosen, by its path.

use std::ffi::{CStr, CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Environment variable naming the directory of the CPU backend modules.
pub const BACKENDS_DIR_ENV: &str = "KIROCREW_GGML_BACKENDS_DIR";

/// The CPU backend module this process computes with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuBackend {
    /// The directory the modules are in.
    pub dir: PathBuf,
    /// The module file loaded.
    pub module: PathBuf,
    /// Its variant name (`zen4`, `haswell`, …).
    pub name: String,
    /// Instruction-set features the loaded variant was built with and the
    /// CPU has (ggml's names: `AVX2`, `AVX512`, `AVX512_BF16`, …).
    pub features: Vec<String>,
}

impl CpuBackend {
    /// Whether ggml runs BF16 matrices with AVX512-BF16 instructions.
    pub fn has_bf16_kernels(&self) -> bool {
        self.features.iter().any(|f| f == "AVX512_BF16")
    }

    /// The features as one line (`SSE3 … AVX512_BF16 …`), for logs and
    /// status reports.
    pub fn kernels(&self) -> String {
        self.features.join(" ")
    }
}

/// The directory of the CPU backend modules (see the module docs for the
/// search order). Only looks: loads nothing.
pub fn backends_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().ok();
    find_backends_dir(
        std::env::var_os(BACKENDS_DIR_ENV),
        exe.as_deref(),
        llama_cpp_sys_2::BACKENDS_DIR,
    )
}

/// Picks the modules' directory (see the module docs for the order).
fn find_backends_dir(
    env: Option<OsString>,
    exe: Option<&Path>,
    built: Option<&str>,
) -> Result<PathBuf, String> {
    if let Some(dir) = env.filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return if has_cpu_module(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "{BACKENDS_DIR_ENV}={}: no llama.cpp CPU backend module ({}) there",
                dir.display(),
                module_pattern()
            ))
        };
    }
    let exe_dir = exe.and_then(Path::parent);
    let candidates = exe_dir
        .map(Path::to_path_buf)
        .into_iter()
        .chain(exe_dir.map(|d| d.join("../lib/kirocrew")))
        .chain(built.map(PathBuf::from));
    let mut tried = Vec::new();
    for dir in candidates {
        if has_cpu_module(&dir) {
            return Ok(dir);
        }
        tried.push(dir.display().to_string());
    }
    Err(format!(
        "no llama.cpp CPU backend module ({}) in {}; install them beside the binary or set {BACKENDS_DIR_ENV}",
        module_pattern(),
        tried.join(", ")
    ))
}

/// `libggml-cpu-*.so` on Linux.
fn module_pattern() -> String {
    format!(
        "{}ggml-cpu-*{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// Whether `dir` holds at least one CPU backend module.
fn has_cpu_module(dir: &Path) -> bool {
    let prefix = format!("{}ggml-cpu-", std::env::consts::DLL_PREFIX);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        name.starts_with(&prefix) && name.ends_with(std::env::consts::DLL_SUFFIX)
    })
}

/// Has ggml load exactly `module` (one of `dir`'s, named `name`) into
/// this process and reads its features. ggml's registry cannot unload, so
/// this happens once per process (see `kernels/`).
pub(super) fn load_module(dir: &Path, name: &str, module: &Path) -> Result<CpuBackend, String> {
    let path = CString::new(module.as_os_str().as_bytes())
        .map_err(|_| format!("{}: not a usable file name", module.display()))?;
    // ggml would print a line per module to stderr; the caller logs the
    // outcome (and llama-cpp-2 silences ggml for good once it starts).
    // SAFETY: `quiet` matches `ggml_log_callback` and ignores its input;
    // the path is a valid NUL-terminated string that ggml copies.
    let reg = unsafe {
        llama_cpp_sys_2::ggml_log_set(Some(quiet), std::ptr::null_mut());
        llama_cpp_sys_2::ggml_backend_load(path.as_ptr())
    };
    if reg.is_null() {
        return Err(format!(
            "{}: ggml could not load this CPU backend module",
            module.display()
        ));
    }
    Ok(CpuBackend {
        dir: dir.to_path_buf(),
        module: module.to_path_buf(),
        name: name.to_owned(),
        features: reg_features(reg),
    })
}

/// A ggml log callback that drops the message.
unsafe extern "C" fn quiet(
    _level: llama_cpp_sys_2::ggml_log_level,
    _text: *const std::os::raw::c_char,
    _user: *mut std::os::raw::c_void,
) {
}

/// The enabled features of a loaded backend module's registration.
pub(super) fn reg_features(reg: llama_cpp_sys_2::ggml_backend_reg_t) -> Vec<String> {
    type GetFeatures = unsafe extern "C" fn(
        llama_cpp_sys_2::ggml_backend_reg_t,
    ) -> *mut llama_cpp_sys_2::ggml_backend_feature;

    // SAFETY: ggml's registry API: `reg` comes from ggml_backend_load and
    // lives as long as the process (modules are never unloaded), and
    // "ggml_backend_get_features" has the signature
    // `ggml_backend_get_features_t` (ggml-backend.h). The feature array is
    // a static vector ending with a NULL name.
    unsafe {
        let proc = llama_cpp_sys_2::ggml_backend_reg_get_proc_address(
            reg,
            c"ggml_backend_get_features".as_ptr(),
        );
        if proc.is_null() {
            return Vec::new();
        }
        let get: GetFeatures = std::mem::transmute(proc);
        let mut features = Vec::new();
        let mut item = get(reg);
        while !item.is_null() && !(*item).name.is_null() {
            let name = CStr::from_ptr((*item).name).to_string_lossy();
            let value = if (*item).value.is_null() {
                String::new()
            } else {
                CStr::from_ptr((*item).value).to_string_lossy().into_owned()
            };
            if value != "0" {
                features.push(name.into_owned());
            }
            item = item.add(1);
        }
        features
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            std::fs::write(dir.path().join(f), b"").unwrap();
        }
        dir
    }

    fn module(variant: &str) -> String {
        format!(
            "{}ggml-cpu-{variant}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        )
    }

    #[test]
    fn env_wins_and_must_hold_modules() {
        let env = dir_with(&[&module("haswell")]);
        let built = dir_with(&[&module("x64")]);
        let found = find_backends_dir(Some(env.path().into()), None, built.path().to_str());
        assert_eq!(found.unwrap(), env.path());

        let empty = dir_with(&["libggml-base.so", "notes.txt"]);
        let err =
            find_backends_dir(Some(empty.path().into()), None, built.path().to_str()).unwrap_err();
        assert!(err.contains(BACKENDS_DIR_ENV), "{err}");
    }

    #[test]
    fn exe_dir_then_lib_dir_then_build_dir() {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        let lib = root.path().join("lib/kirocrew");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&lib).unwrap();
        let exe = bin.join("kirocrew");
        let built = dir_with(&[&module("x64")]);

        let found = find_backends_dir(None, Some(&exe), built.path().to_str()).unwrap();
        assert_eq!(found, built.path());

        std::fs::write(lib.join(module("zen4")), b"").unwrap();
        let found = find_backends_dir(None, Some(&exe), built.path().to_str()).unwrap();
        assert_eq!(found, bin.join("../lib/kirocrew"));

        std::fs::write(bin.join(module("x64")), b"").unwrap();
        let found = find_backends_dir(None, Some(&exe), built.path().to_str()).unwrap();
        assert_eq!(found, bin);
    }

    #[test]
    fn nothing_found_names_every_place_tried() {
        let exe_dir = tempfile::tempdir().unwrap();
        let exe = exe_dir.path().join("kirocrew");
        let err = find_backends_dir(Some(OsString::new()), Some(&exe), Some("/nonexistent/b"))
            .unwrap_err();
        assert!(err.contains("/nonexistent/b"), "{err}");
        assert!(err.contains(&exe_dir.path().display().to_string()), "{err}");
    }

    #[test]
    fn the_build_has_a_cpu_backend_for_this_machine() {
        let backend = super::super::kernels::cpu_backend().expect("a CPU backend module loads");
        assert!(!backend.features.is_empty(), "{backend:?}");
    }
}
