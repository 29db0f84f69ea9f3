//! The verdict cache: what a probe found for one module file on one kind
//! of CPU, kept in the data home (`cpu-kernels.json`) so the next start
//! skips the child process (an `ok`) or the module (a crash).
//!
//! An entry is keyed by the BLAKE3 of the module file (a rebuilt module is
//! a different program) and the CPU's identity (vendor, family, model,
//! model name and the instruction-set flags that decide kernel choice): a
//! data home copied to another machine probes again. Results are per ggml
//! weight type, so a model with a type not tested yet probes only that.
//!
//! The file is advisory: unreadable or malformed, it counts as empty (and
//! is rewritten); it is replaced atomically (temporary file + rename), so a
//! reader never sees half of it. Two processes probing at once both write;
//! the later file wins and the other's entries are probed again next time.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Version of the file layout; another version is ignored (probed anew).
const FILE_VERSION: u32 = 1;

/// Flags (from `/proc/cpuinfo`) that decide which ggml kernels may run.
const RELEVANT_FLAG_PREFIXES: &[&str] = &[
    "sse", "ssse3", "avx", "amx", "fma", "f16c", "bmi", "vnni", "popcnt",
];

/// What one probe found for one weight type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum TypeVerdict {
    /// Every matrix multiplication path ggml would take for this type ran
    /// and agreed with the reference; `buffers` names them (ggml's buffer
    /// types: `CPU`, `CPU_REPACK`, `AMX`).
    Ok {
        /// ggml buffer types the weights were tested in.
        buffers: Vec<String>,
    },
    /// The probe process died while computing (or loading) it.
    Crashed {
        /// The signal that killed it (`SIGILL`), if one did.
        signal: Option<String>,
        /// What happened, for people.
        how: String,
    },
    /// It ran but computed wrong numbers.
    Wrong {
        /// How far off, for people.
        how: String,
    },
    /// ggml cannot build a test for this type (no quantizer for it):
    /// nothing is known either way.
    Untestable {
        /// Why, for people.
        why: String,
    },
}

impl TypeVerdict {
    /// Whether a model with weights of this type must not use the module.
    pub fn is_failure(&self) -> bool {
        matches!(self, Self::Crashed { .. } | Self::Wrong { .. })
    }

    /// One line for people: `crashed (SIGILL)`, `wrong results (…)`.
    pub fn describe(&self) -> String {
        match self {
            Self::Ok { buffers } => format!("ok ({})", buffers.join(", ")),
            Self::Crashed {
                signal: Some(s), ..
            } => format!("crashed ({s})"),
            Self::Crashed { how, .. } => format!("failed ({how})"),
            Self::Wrong { how } => format!("wrong results ({how})"),
            Self::Untestable { why } => format!("not testable ({why})"),
        }
    }
}

/// The probe results of one module file on one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Entry {
    /// The module's file name (`libggml-cpu-zen4.so`), for people.
    pub module: String,
    /// BLAKE3 of the module file (hex).
    pub blake3: String,
    /// [`cpu_identity`] of the machine.
    pub cpu: String,
    /// The features the module reported (ggml's names), once it loaded.
    #[serde(default)]
    pub features: Vec<String>,
    /// Results per ggml type name (`q8_0`, `f16`, …).
    pub types: BTreeMap<String, TypeVerdict>,
    /// When the last probe ran (RFC 3339).
    pub checked_at: String,
}

/// The whole cache file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct VerdictFile {
    /// [`FILE_VERSION`].
    pub version: u32,
    /// One entry per (module hash, CPU).
    pub entries: Vec<Entry>,
}

impl VerdictFile {
    /// Reads the cache; missing, unreadable, malformed or of another
    /// version, it is empty.
    pub(super) fn load(path: &Path) -> Self {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Self::empty();
        };
        match serde_json::from_str::<Self>(&text) {
            Ok(file) if file.version == FILE_VERSION => file,
            Ok(_) => Self::empty(),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "CPU kernel verdicts unreadable; probing again");
                Self::empty()
            }
        }
    }

    /// An empty cache of the current version.
    pub(super) fn empty() -> Self {
        Self {
            version: FILE_VERSION,
            entries: Vec::new(),
        }
    }

    /// The entry for (module hash, CPU).
    pub(super) fn find(&self, blake3: &str, cpu: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.blake3 == blake3 && e.cpu == cpu)
    }

    /// Merges probe results into the entry for (module hash, CPU),
    /// creating it if needed; newer results replace older ones per type.
    pub(super) fn record(
        &mut self,
        module: &str,
        blake3: &str,
        cpu: &str,
        features: &[String],
        results: &BTreeMap<String, TypeVerdict>,
        now: &str,
    ) {
        let index = match self
            .entries
            .iter()
            .position(|e| e.blake3 == blake3 && e.cpu == cpu)
        {
            Some(i) => i,
            None => {
                self.entries.push(Entry {
                    module: module.to_owned(),
                    blake3: blake3.to_owned(),
                    cpu: cpu.to_owned(),
                    features: Vec::new(),
                    types: BTreeMap::new(),
                    checked_at: String::new(),
                });
                self.entries.len() - 1
            }
        };
        let entry = &mut self.entries[index];
        entry.module = module.to_owned();
        if !features.is_empty() {
            entry.features = features.to_vec();
        }
        entry
            .types
            .extend(results.iter().map(|(k, v)| (k.clone(), v.clone())));
        entry.checked_at = now.to_owned();
    }

    /// Writes the cache atomically. The directory must exist: the cache
    /// never creates a data home (that has its own permissions).
    pub(super) fn save(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)? + "\n";
        crate::atomic_file::replace_atomic(path, text.as_bytes())
    }
}

/// BLAKE3 of a file (hex).
pub(super) fn file_blake3(path: &Path) -> std::io::Result<String> {
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(std::fs::File::open(path)?)?;
    Ok(hasher.finalize().to_hex().to_string())
}

/// The CPU's identity from `/proc/cpuinfo` text: vendor, family, model,
/// model name and the sorted kernel-relevant flags of the first processor.
/// Empty input (no procfs) gives `unknown`.
pub fn cpu_identity(cpuinfo: &str) -> String {
    let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
    for line in cpuinfo.lines() {
        if line.trim().is_empty() {
            if fields.is_empty() {
                continue;
            }
            break; // the first processor is enough: they are all alike
        }
        if let Some((key, value)) = line.split_once(':') {
            fields.entry(key.trim()).or_insert(value.trim());
        }
    }
    if fields.is_empty() {
        return "unknown".to_owned();
    }
    let field = |k: &str| fields.get(k).copied().unwrap_or("?");
    let mut flags: Vec<&str> = field("flags")
        .split_whitespace()
        .filter(|f| RELEVANT_FLAG_PREFIXES.iter().any(|p| f.starts_with(p)))
        .collect();
    flags.sort_unstable();
    flags.dedup();
    format!(
        "{} family {} model {} | {} | {}",
        field("vendor_id"),
        field("cpu family"),
        field("model"),
        field("model name"),
        flags.join(" ")
    )
}

/// [`cpu_identity`] of this machine.
pub fn this_cpu() -> String {
    cpu_identity(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu avx2 sse4_2 amx_tile avx512f amx_int8 lm avx512_fp16 fma\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\nflags\t\t: fpu\n";

    #[test]
    fn cpu_identity_keeps_model_and_kernel_flags_only() {
        let id = cpu_identity(CPUINFO);
        assert_eq!(
            id,
            "GenuineIntel family 6 model 143 | Intel(R) Xeon(R) Platinum 8480+ | amx_int8 amx_tile avx2 avx512_fp16 avx512f fma sse4_2"
        );
        let other_flags = CPUINFO.replace(" amx_int8", "");
        assert_ne!(cpu_identity(&other_flags), id);
        let other_unrelated = CPUINFO.replace(" lm", " nx");
        assert_eq!(
            cpu_identity(&other_unrelated),
            id,
            "irrelevant flags do not matter"
        );
        assert_eq!(cpu_identity(""), "unknown");
    }

    fn results(pairs: &[(&str, TypeVerdict)]) -> BTreeMap<String, TypeVerdict> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn entries_are_keyed_by_module_hash_and_cpu_and_merge_per_type() {
        let ok = TypeVerdict::Ok {
            buffers: vec!["CPU".into()],
        };
        let mut file = VerdictFile::empty();
        file.record(
            "m.so",
            "h1",
            "cpu",
            &["AVX2".into()],
            &results(&[("f16", ok.clone())]),
            "t1",
        );
        let crash = TypeVerdict::Crashed {
            signal: Some("SIGILL".into()),
            how: "x".into(),
        };
        file.record(
            "m.so",
            "h1",
            "cpu",
            &[],
            &results(&[("q8_0", crash.clone())]),
            "t2",
        );
        file.record(
            "m.so",
            "h2",
            "cpu",
            &[],
            &results(&[("f16", ok.clone())]),
            "t3",
        );
        assert_eq!(file.entries.len(), 2);
        let entry = file.find("h1", "cpu").unwrap();
        assert_eq!(entry.types.len(), 2);
        assert_eq!(entry.features, ["AVX2"], "kept when a probe reports none");
        assert_eq!(entry.checked_at, "t2");
        assert!(entry.types["q8_0"].is_failure());
        assert!(file.find("h1", "other cpu").is_none());
    }

    #[test]
    fn the_file_round_trips_and_bad_files_count_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cpu-kernels.json");
        assert_eq!(VerdictFile::load(&path), VerdictFile::empty());
        let mut file = VerdictFile::empty();
        let untestable = TypeVerdict::Untestable { why: "w".into() };
        file.record(
            "m.so",
            "h",
            "cpu",
            &[],
            &results(&[("iq1_m", untestable)]),
            "t",
        );
        file.save(&path).unwrap();
        assert_eq!(VerdictFile::load(&path), file);
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file left behind");

        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(VerdictFile::load(&path), VerdictFile::empty());
        std::fs::write(&path, r#"{"version": 99, "entries": []}"#).unwrap();
        assert_eq!(VerdictFile::load(&path).version, FILE_VERSION);
        assert!(file.save(&dir.path().join("missing/dir/x.json")).is_err());
    }

    #[test]
    fn module_files_hash_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.so"), dir.path().join("b.so"));
        std::fs::write(&a, b"one").unwrap();
        std::fs::write(&b, b"one").unwrap();
        assert_eq!(file_blake3(&a).unwrap(), file_blake3(&b).unwrap());
        std::fs::write(&b, b"two").unwrap();
        assert_ne!(file_blake3(&a).unwrap(), file_blake3(&b).unwrap());
        assert!(file_blake3(&dir.path().join("none")).is_err());
    }
}
