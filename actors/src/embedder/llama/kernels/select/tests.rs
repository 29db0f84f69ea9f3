use std::cell::RefCell;
use std::path::PathBuf;

use super::*;

fn cand(name: &str, score: i32) -> Candidate {
    Candidate {
        name: name.into(),
        path: PathBuf::from(format!("/m/libggml-cpu-{name}.so")),
        score,
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// Hash = the file name (stands for the file's content).
fn hash(path: &Path) -> std::io::Result<String> {
    Ok(format!("hash-of-{}", path.display()))
}

fn ok() -> TypeVerdict {
    TypeVerdict::Ok {
        buffers: vec!["CPU".into()],
    }
}

fn sigill(ty: &str) -> TypeVerdict {
    TypeVerdict::Crashed {
        signal: Some("SIGILL".into()),
        how: format!("SIGILL computing {ty}"),
    }
}

/// A fake probe: `crashy` dies on q8_0, `amx` reports AMX, others pass;
/// every call is recorded.
struct FakeProbe {
    calls: RefCell<Vec<(String, Vec<String>)>>,
}

impl FakeProbe {
    fn new() -> Self {
        Self {
            calls: RefCell::new(Vec::new()),
        }
    }

    fn run(&self, c: &Candidate, types: &[String]) -> ProbeRun {
        self.calls
            .borrow_mut()
            .push((c.name.clone(), types.to_vec()));
        let mut results = BTreeMap::new();
        for t in types {
            if c.name == "crashy" && t == "q8_0" {
                results.insert(t.clone(), sigill(t));
                break; // the child is dead
            }
            results.insert(t.clone(), ok());
        }
        let features = if c.name == "amx" {
            names(&["AVX512", AMX_FEATURE])
        } else {
            names(&["AVX2"])
        };
        ProbeRun::Done { features, results }
    }

    /// [`decide`] on CPU `cpu-a` with this probe.
    fn decide(
        &self,
        candidates: &[Candidate],
        needed: &[String],
        pinned: bool,
        cache: &mut VerdictFile,
    ) -> Decision {
        let run = |c: &Candidate, t: &[String]| self.run(c, t);
        decide(
            &inputs(candidates, needed, pinned),
            cache,
            &hash,
            Some(&run),
        )
    }
}

fn inputs<'a>(candidates: &'a [Candidate], needed: &'a [String], pinned: bool) -> Inputs<'a> {
    Inputs {
        candidates,
        needed,
        cpu: "cpu-a",
        pinned,
        now: "2025-01-01T00:00:00Z",
    }
}

#[test]
fn a_crashing_best_module_falls_back_and_the_verdicts_are_cached() {
    let candidates = [cand("crashy", 900), cand("zen4", 500), cand("x64", 1)];
    let needed = names(&["f16", "q8_0"]);
    let probe = FakeProbe::new();
    let mut cache = VerdictFile::empty();

    let d = probe.decide(&candidates, &needed, false, &mut cache);
    let (winner, how) = d.chosen.expect("a module");
    assert_eq!(winner.name, "zen4");
    assert_eq!(how, Verification::Verified);
    assert!(d.cache_changed);
    assert_eq!(d.modules[0].verdict, "crashed");
    assert!(d.modules[0]
        .detail
        .as_deref()
        .unwrap_or("")
        .contains("SIGILL"));
    assert!(!d.modules[0].cached);
    assert_eq!(d.modules.len(), 2, "x64 never looked at");
    assert_eq!(probe.calls.borrow().len(), 2);

    // Next start: both verdicts come from the cache, no child runs.
    let fresh = FakeProbe::new();
    let d = fresh.decide(&candidates, &needed, false, &mut cache);
    assert_eq!(d.chosen.expect("a module").0.name, "zen4");
    assert!(fresh.calls.borrow().is_empty());
    assert!(d.modules.iter().all(|m| m.cached));
    assert!(!d.cache_changed);
}

#[test]
fn only_types_without_a_verdict_are_probed() {
    let candidates = [cand("zen4", 500)];
    let probe = FakeProbe::new();
    let mut cache = VerdictFile::empty();
    let first = names(&["f16", "q8_0"]);
    probe.decide(&candidates, &first, false, &mut cache);
    let more = names(&["q4_K", "f16"]);
    let d = probe.decide(&candidates, &more, false, &mut cache);
    assert!(d.chosen.is_some());
    let calls = probe.calls.borrow();
    assert_eq!(calls[1].1, ["q4_K"]);
    let entry = cache
        .find("hash-of-/m/libggml-cpu-zen4.so", "cpu-a")
        .unwrap();
    assert_eq!(entry.types.len(), 3);
}

#[test]
fn verdicts_are_per_cpu_and_per_module_file() {
    let candidates = [cand("crashy", 900), cand("zen4", 500)];
    let needed = names(&["q8_0"]);
    let probe = FakeProbe::new();
    let mut cache = VerdictFile::empty();
    probe.decide(&candidates, &needed, false, &mut cache);
    let run = |c: &Candidate, t: &[String]| probe.run(c, t);
    let mut other_cpu = inputs(&candidates, &needed, false);
    other_cpu.cpu = "cpu-b";
    decide(&other_cpu, &mut cache, &hash, Some(&run));
    assert_eq!(probe.calls.borrow().len(), 4, "another CPU probes again");
    let rebuilt = |p: &Path| -> std::io::Result<String> { Ok(format!("new-{}", p.display())) };
    decide(
        &inputs(&candidates, &needed, false),
        &mut cache,
        &rebuilt,
        Some(&run),
    );
    assert_eq!(
        probe.calls.borrow().len(),
        6,
        "a rebuilt module probes again"
    );
}

#[test]
fn amx_modules_are_passed_over_unless_pinned() {
    let candidates = [cand("amx", 1000), cand("zen4", 500)];
    let needed = names(&["q8_0"]);
    let probe = FakeProbe::new();
    let mut cache = VerdictFile::empty();
    let d = probe.decide(&candidates, &needed, false, &mut cache);
    assert_eq!(d.chosen.unwrap().0.name, "zen4");
    assert_eq!(d.modules[0].verdict, "passed over");

    let pinned = [cand("amx", 1000)];
    let d = probe.decide(&pinned, &needed, true, &mut cache);
    assert_eq!(d.chosen.unwrap().0.name, "amx");
    assert!(d.modules[0].cached, "features come from the cache too");
}

#[test]
fn a_probe_that_establishes_nothing_skips_the_module_without_caching() {
    let candidates = [cand("zen4", 500), cand("x64", 1)];
    let needed = names(&["q8_0"]);
    let run = |c: &Candidate, t: &[String]| {
        if c.name == "zen4" {
            ProbeRun::NotRun("the probe timed out after 60 s".into())
        } else {
            FakeProbe::new().run(c, t)
        }
    };
    let mut cache = VerdictFile::empty();
    let d = decide(
        &inputs(&candidates, &needed, false),
        &mut cache,
        &hash,
        Some(&run),
    );
    assert_eq!(d.chosen.unwrap().0.name, "x64");
    assert_eq!(d.modules[0].verdict, "not verified");
    assert!(cache
        .find("hash-of-/m/libggml-cpu-zen4.so", "cpu-a")
        .is_none());
}

#[test]
fn without_a_probe_ggml_s_choice_is_taken_unverified_unless_known_bad() {
    let candidates = [cand("crashy", 900), cand("zen4", 500)];
    let needed = names(&["q8_0"]);
    let mut cache = VerdictFile::empty();
    let d = decide(
        &inputs(&candidates, &needed, false),
        &mut cache,
        &hash,
        None,
    );
    let (winner, how) = d.chosen.unwrap();
    assert_eq!(
        (winner.name.as_str(), how),
        ("crashy", Verification::Unverified)
    );

    let mut results = BTreeMap::new();
    results.insert("q8_0".to_owned(), sigill("q8_0"));
    cache.record(
        "libggml-cpu-crashy.so",
        "hash-of-/m/libggml-cpu-crashy.so",
        "cpu-a",
        &[],
        &results,
        "then",
    );
    let d = decide(
        &inputs(&candidates, &needed, false),
        &mut cache,
        &hash,
        None,
    );
    assert_eq!(
        d.chosen.unwrap().0.name,
        "zen4",
        "a cached crash still counts"
    );
}

#[test]
fn nothing_passing_means_no_module() {
    let candidates = [cand("crashy", 900)];
    let needed = names(&["q8_0"]);
    let probe = FakeProbe::new();
    let mut cache = VerdictFile::empty();
    let d = probe.decide(&candidates, &needed, false, &mut cache);
    assert!(d.chosen.is_none());
    assert_eq!(d.modules.len(), 1);
    let run = |c: &Candidate, t: &[String]| probe.run(c, t);
    let unreadable = |_: &Path| -> std::io::Result<String> { Err(std::io::Error::other("gone")) };
    let d = decide(
        &inputs(&candidates, &needed, false),
        &mut cache,
        &unreadable,
        Some(&run),
    );
    assert!(d.chosen.is_none());
    assert_eq!(d.modules[0].verdict, "failed");
}
