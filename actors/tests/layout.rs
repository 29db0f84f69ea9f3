//! The crate's house rule, checked: no import cycle between its files.
//!
//! Each file is a node; a `use` or a path (`super::x`, `crate::a::b`,
//! `child::x`) that names another file's module is an edge. A cycle means
//! two files each need the other, which is how one domain's internals end
//! up reached from another's; the shape that avoids it is in `lib.rs`
//! (`mod.rs` holds only declarations and re-exports, items are imported
//! from the file that defines them). Inline test modules are left out:
//! their `super::*` is their own file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

#[path = "support/layout_check.rs"]
mod layout_check;
use layout_check::{code_only, cycles, graph, paths, resolve, show, Module};

#[test]
fn no_file_of_the_crate_imports_one_that_imports_it_back() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = cycles(&graph(&root));
    let shown = show(&found);
    assert!(found.is_empty(), "import cycles between files: {shown:#?}");
}

#[test]
fn the_checker_sees_a_cycle_and_ignores_inline_tests() {
    let files: BTreeSet<Module> = [vec![], vec!["a".to_owned()], vec!["b".to_owned()]]
        .into_iter()
        .collect();
    let a = code_only("use super::b::X;\n#[cfg(test)]\nmod tests { use super::*; use crate::b; }");
    let b = code_only(
        "// use super::a::Y;\nfn f() { let q = '\"'; let s = r#\"x\"super::a::Z\"#; super::a::g(); }",
    );
    let mut edges = BTreeMap::new();
    for (name, code) in [("a", &a), ("b", &b)] {
        let module = vec![name.to_owned()];
        let targets = paths(code)
            .iter()
            .filter_map(|p| resolve(&module, p, &files))
            .collect();
        edges.insert(module, targets);
    }
    assert_eq!(cycles(&edges).len(), 1, "a -> b -> a");
    edges.insert(vec!["b".to_owned()], BTreeSet::new());
    assert!(cycles(&edges).is_empty());
}
