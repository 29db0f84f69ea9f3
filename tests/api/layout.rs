//! The shell's shape, checked (issue 36): the actors crate's import-graph
//! checker (`actors/tests/support/layout_check.rs`) run over `src/`.
//!
//! The layers, bottom up: the shared pieces (config, home, error,
//! telemetry, the memory/embedding/consolidation adapters), the app layer
//! (`app`: every handle and the builders; `commands`: what the CLI and the
//! console both run), then the faces (`http`, `console`, `mcp`,
//! `claude_code`, `cli`, `tools`) and `startup`, which builds the app and
//! mounts the HTTP-served faces. Faces never import each other, except the
//! program's entries (`cli`, and `tools` for developers) calling a face's
//! entry point; nothing below a face imports one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

#[path = "../../actors/tests/support/layout_check.rs"]
mod layout_check;
use layout_check::{cycles, graph, show, top_level, Module};

/// The faces: what a user or a program talks to.
const FACES: &[&str] = &["http", "console", "mcp", "claude_code", "cli", "tools"];

/// What an entry may call in another face: `(from, into)`, `into` a
/// file or a whole face.
const ENTRY_POINTS: &[(&str, &str)] = &[
    ("cli", "console/client"),
    ("cli", "mcp/stdio"),
    ("cli", "claude_code"),
    // `kirocrew bench …` and `security train` dispatch to the tools.
    ("cli", "tools"),
    ("tools", "console/client"),
    ("tools", "claude_code"),
];

/// Not faces, allowed to import them: the server builder and the binary.
const ABOVE_FACES: &[&str] = &["startup", "main"];

fn edges() -> BTreeMap<Module, BTreeSet<Module>> {
    graph(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"))
}

fn top(m: &Module) -> &str {
    m.first().map_or("", String::as_str)
}

#[test]
fn no_file_of_the_shell_imports_one_that_imports_it_back() {
    let found = cycles(&edges());
    assert!(
        found.is_empty(),
        "import cycles between files: {:#?}",
        show(&found)
    );
}

#[test]
fn top_level_modules_form_no_cycle() {
    let found = cycles(&top_level(&edges()));
    assert!(
        found.is_empty(),
        "import cycles between modules: {:#?}",
        show(&found)
    );
}

#[test]
fn faces_never_import_each_other_and_nothing_below_imports_a_face() {
    let mut wrong = Vec::new();
    for (from, targets) in edges() {
        for to in targets {
            let (a, b) = (top(&from), top(&to));
            if a == b || !FACES.contains(&b) || ABOVE_FACES.contains(&a) {
                continue;
            }
            let path = to.join("/");
            let entry = ENTRY_POINTS
                .iter()
                .any(|(f, into)| *f == a && (path == *into || b == *into));
            if !entry {
                wrong.push(format!("{} -> {path}", from.join("/")));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports across faces or into a face: {wrong:#?}"
    );
}

#[test]
fn the_checker_catches_a_face_reaching_into_another() {
    // The rule above applied to a made-up graph: console -> cli is caught.
    let module = |s: &str| s.split('/').map(str::to_owned).collect::<Module>();
    let mut fake: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    fake.insert(module("console/argv"), [module("cli")].into());
    fake.insert(module("cli"), [module("console/client")].into());
    let crossing: Vec<_> = fake
        .iter()
        .flat_map(|(f, ts)| ts.iter().map(move |t| (f, t)))
        .filter(|(f, t)| {
            top(f) != top(t)
                && FACES.contains(&top(t))
                && !ENTRY_POINTS
                    .iter()
                    .any(|(a, into)| *a == top(f) && t.join("/") == *into)
        })
        .collect();
    assert_eq!(crossing.len(), 1, "{crossing:?}");
    assert_eq!(top(crossing[0].0), "console");
}
