use std::path::PathBuf;

use super::*;

fn types(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

const T: Duration = Duration::from_secs(5);

fn done(run: ProbeRun) -> (Vec<String>, BTreeMap<String, TypeVerdict>) {
    match run {
        ProbeRun::Done { features, results } => (features, results),
        ProbeRun::NotRun(why) => panic!("expected verdicts, got: {why}"),
    }
}

#[test]
fn a_clean_run_gives_a_verdict_per_type() {
    let out = "features SSE3 AVX2\nstart q8_0\nok q8_0 CPU_REPACK,CPU\nstart iq2_xxs\nskip iq2_xxs no quantizer\nstart f16\nwrong f16 cosine 0.12\ndone\n";
    let (features, results) = done(interpret(
        &types(&["q8_0", "iq2_xxs", "f16"]),
        out,
        Ending::Code(0),
        "",
        T,
    ));
    assert_eq!(features, ["SSE3", "AVX2"]);
    assert_eq!(
        results["q8_0"],
        TypeVerdict::Ok {
            buffers: types(&["CPU_REPACK", "CPU"])
        }
    );
    assert!(matches!(results["iq2_xxs"], TypeVerdict::Untestable { .. }));
    assert!(results["f16"].is_failure());
}

#[test]
fn the_type_being_computed_when_the_child_died_is_the_culprit() {
    let out = "features AVX512 AMX_INT8\nstart f16\nok f16 AMX,CPU\nstart q8_0\n";
    let (_, results) = done(interpret(
        &types(&["f16", "q8_0", "bf16"]),
        out,
        Ending::Signal(4),
        "",
        T,
    ));
    assert!(!results["f16"].is_failure());
    match &results["q8_0"] {
        TypeVerdict::Crashed { signal, how } => {
            assert_eq!(signal.as_deref(), Some("SIGILL"));
            assert!(how.contains("computing q8_0"), "{how}");
        }
        other => panic!("{other:?}"),
    }
    // Never reached: not known, so not recorded.
    assert!(!results.contains_key("bf16"));
}

#[test]
fn dying_before_any_test_condemns_every_type() {
    let (_, results) = done(interpret(
        &types(&["f32", "q8_0"]),
        "",
        Ending::Signal(11),
        "ggml: something",
        T,
    ));
    for ty in ["f32", "q8_0"] {
        match &results[ty] {
            TypeVerdict::Crashed { signal, how } => {
                assert_eq!(signal.as_deref(), Some("SIGSEGV"));
                assert!(how.contains("loading the module"), "{how}");
                assert!(how.contains("ggml: something"), "{how}");
            }
            other => panic!("{other:?}"),
        }
    }
    let (_, results) = done(interpret(
        &types(&["f32"]),
        "fail not a ggml backend\n",
        Ending::Code(2),
        "",
        T,
    ));
    assert!(results["f32"].is_failure());
}

#[test]
fn timeouts_and_garbled_runs_establish_nothing() {
    let run = interpret(&types(&["q8_0"]), "start q8_0\n", Ending::TimedOut, "", T);
    assert!(
        matches!(&run, ProbeRun::NotRun(why) if why.contains("timed out") && why.contains("q8_0")),
        "{run:?}"
    );
    let run = interpret(&types(&["q8_0"]), "features X\n", Ending::Code(0), "", T);
    assert!(matches!(run, ProbeRun::NotRun(_)), "{run:?}");
}

#[test]
fn signal_names() {
    assert_eq!(signal_name(4), "SIGILL");
    assert_eq!(signal_name(64), "signal 64");
}

fn shell(script: &str) -> ProbeCommand {
    ProbeCommand::new(
        PathBuf::from("/bin/sh"),
        ["-c", script, "probe"].map(Into::into),
    )
}

#[test]
fn a_real_child_killed_by_sigill_is_seen_as_such() {
    let probe = shell("echo 'features AVX2'; echo 'start q8_0'; kill -ILL $$");
    let (features, results) = done(run(
        &probe,
        Path::new("/nonexistent.so"),
        &types(&["q8_0"]),
        T,
    ));
    assert_eq!(features, ["AVX2"]);
    assert!(
        matches!(&results["q8_0"], TypeVerdict::Crashed { signal: Some(s), .. } if s == "SIGILL"),
        "{results:?}"
    );
}

#[test]
fn the_child_gets_the_module_and_types_and_a_hung_one_is_killed() {
    // The script echoes its arguments back as the features line.
    let probe = shell("echo \"features $*\"; for t in q8_0 f16; do echo \"start $t\"; echo \"ok $t CPU\"; done; echo done");
    let (features, _) = done(run(
        &probe,
        Path::new("/m/x.so"),
        &types(&["q8_0", "f16"]),
        T,
    ));
    assert_eq!(features, ["--module", "/m/x.so", "--types", "q8_0,f16"]);

    let started = Instant::now();
    let hung = shell("echo 'start q8_0'; exec sleep 30");
    let run = run(
        &hung,
        Path::new("/m/x.so"),
        &types(&["q8_0"]),
        Duration::from_millis(300),
    );
    assert!(matches!(run, ProbeRun::NotRun(_)), "{run:?}");
    assert!(started.elapsed() < Duration::from_secs(10));

    let missing = ProbeCommand::new(PathBuf::from("/nonexistent/kirocrew"), Vec::new());
    let run = super::run(&missing, Path::new("/m/x.so"), &types(&["q8_0"]), T);
    assert!(
        matches!(&run, ProbeRun::NotRun(why) if why.contains("cannot start")),
        "{run:?}"
    );
}
