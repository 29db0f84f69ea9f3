//! Build script of `kirocrew-actors`, the crate that links llama.cpp:
//! repairs what llama-cpp-sys-2 leaves in `target/<profile>/`.
//!
//! llama-cpp-sys-2 (built as shared libraries for run-time CPU kernel
//! selection, see `src/embedder/llama/cpu_backend.rs`) hard-links the
//! unversioned `libllama.so` symlinks into `target/<profile>/`, `deps/` and
//! `examples/`; they point at `libllama.so.0` siblings it never creates.
//! Dangling, they make its next build in the same profile (clippy's, a
//! feature change) fail with "File exists": it checks `exists()`, which
//! follows the link, then links again. Pointing each dangling link's target
//! at this build's library fixes that. It runs here because every build
//! that compiles llama.cpp compiles this crate right after it.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_LLAMA_BACKENDS_DIR");
    // llama-cpp-sys-2 (`links = "llama"`) publishes its module directory,
    // `<out>/backends`; the shared libraries are in `<out>/lib`.
    let lib_dir = std::env::var_os("DEP_LLAMA_BACKENDS_DIR")
        .and_then(|b| PathBuf::from(b).parent().map(|out| out.join("lib")));
    let (Some(lib_dir), Some(profile_dir)) = (lib_dir, profile_dir()) else {
        return;
    };
    for dir in ["", "deps", "examples"] {
        #[cfg(unix)]
        if let Err(e) = resolve_dangling_links(&profile_dir.join(dir), &lib_dir) {
            println!("cargo:warning=could not repair llama.cpp library links: {e}");
        }
        #[cfg(not(unix))]
        let _ = (&profile_dir, dir, &lib_dir);
    }
}

/// `target/<profile>`: OUT_DIR is `target/<profile>/build/<pkg>-<hash>/out`.
fn profile_dir() -> Option<PathBuf> {
    let out = PathBuf::from(std::env::var_os("OUT_DIR")?);
    out.ancestors().nth(3).map(Path::to_path_buf)
}

/// For each `lib*.so` symlink in `dir` whose relative target is missing,
/// creates that target as a symlink to the same name in `lib_dir`.
#[cfg(unix)]
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
