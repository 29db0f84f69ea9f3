//! Build script of the `kirocrew` binary: where it finds llama.cpp's
//! shared libraries at run time.
//!
//! llama.cpp is built as shared libraries (`libllama.so.0`, `libggml*.so.0`)
//! so that its CPU kernels can be chosen per processor at start-up (see
//! `actors/src/embedder/llama/cpu_backend.rs`). The binary's run path
//! names `../lib/kirocrew` beside it first (`make install-service`), then
//! the build's own library directory (`make run`, `cargo test`), so nothing
//! needs LD_LIBRARY_PATH.
//!
//! It also repairs what llama-cpp-sys-2 leaves in `target/<profile>/`: it
//! hard-links the unversioned `libllama.so` symlinks there, which point at
//! `libllama.so.0` siblings it never creates. Dangling, they make its next
//! build in the same profile (clippy's, a feature change) fail with "File
//! exists": it checks `exists()`, which follows the link, then links again.
//! Pointing each dangling link's target at this build's library fixes both.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_LLAMA_BACKENDS_DIR");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let mut runpath = vec!["$ORIGIN/../lib/kirocrew".to_owned()];
    // llama-cpp-sys-2 (`links = "llama"`) publishes its module directory,
    // `<out>/backends`; the shared libraries are in `<out>/lib`.
    let lib_dir = std::env::var_os("DEP_LLAMA_BACKENDS_DIR")
        .and_then(|b| PathBuf::from(b).parent().map(|out| out.join("lib")));
    if let Some(lib_dir) = lib_dir {
        runpath.push(lib_dir.display().to_string());
        if let Some(profile_dir) = profile_dir() {
            for dir in ["", "deps", "examples"] {
                if let Err(e) = resolve_dangling_links(&profile_dir.join(dir), &lib_dir) {
                    println!("cargo:warning=could not repair llama.cpp library links: {e}");
                }
            }
        }
    }
    println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{}", runpath.join(":"));
}

/// `target/<profile>`: OUT_DIR is `target/<profile>/build/<pkg>-<hash>/out`.
fn profile_dir() -> Option<PathBuf> {
    let out = PathBuf::from(std::env::var_os("OUT_DIR")?);
    out.ancestors().nth(3).map(Path::to_path_buf)
}

/// For each `lib*.so` symlink in `dir` whose relative target is missing,
/// creates that target as a symlink to the same name in `lib_dir`.
fn resolve_dangling_links(dir: &Path, lib_dir: &Path) -> std::io::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("libllama") || name.starts_with("libggml")) || !name.ends_with(".so")
        {
            continue;
        }
        let path = entry.path();
        let Ok(target) = std::fs::read_link(&path) else {
            continue; // not a symlink
        };
        let (Some(target_name), true) = (target.file_name(), target.is_relative()) else {
            continue;
        };
        let wanted = lib_dir.join(target_name);
        let link = dir.join(target_name);
        if !wanted.exists() || std::fs::read_link(&link).ok().as_deref() == Some(wanted.as_path()) {
            continue;
        }
        // Replace atomically: never a moment without the link.
        let tmp = dir.join(format!(
            ".{}.tmp-{}",
            target_name.to_string_lossy(),
            std::process::id()
        ));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&wanted, &tmp)?;
        std::fs::rename(&tmp, &link)?;
    }
    Ok(())
}
