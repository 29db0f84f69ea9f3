//! Build script of the `kirocrew` binary: where it finds llama.cpp's
//! shared libraries at run time.
//!
//! llama.cpp is built as shared libraries (`libllama.so.0`, `libggml*.so.0`)
//! so that its CPU kernels can be chosen per processor at start-up (see
//! `actors/src/embedder/llama/cpu_backend.rs`). The binary's run path
//! names `../lib/kirocrew` beside it first (`make install-service`), then
//! the build's own library directory (`make run`, `cargo test`), then the
//! binary's own directory (a self-contained bundle), so nothing needs
//! LD_LIBRARY_PATH.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_LLAMA_BACKENDS_DIR");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let mut runpath = vec!["$ORIGIN/../lib/kirocrew".to_owned()];
    // llama-cpp-sys-2 (`links = "llama"`) publishes its module directory,
    // `<out>/backends`; the shared libraries are in `<out>/lib`.
    if let Some(backends) = std::env::var_os("DEP_LLAMA_BACKENDS_DIR") {
        if let Some(out) = PathBuf::from(backends).parent() {
            runpath.push(out.join("lib").display().to_string());
        }
    }
    runpath.push("$ORIGIN".to_owned());
    println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{}", runpath.join(":"));
}
