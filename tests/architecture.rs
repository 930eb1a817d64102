//! The layer order of `src/`, read from the code: which top-level module (a folder or a file under
//! `src/`) names which other through a `crate::` path. ARCHITECTURE.md states the order; these
//! tests keep it true, as rust-analyzer's tidy tests keep its own rules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom to top. A module may name modules of lower layers only; modules of one layer do not name
/// each other.
const LAYERS: &[&[&str]] = &[
    &["error", "files"],
    &["codec"],
    &["format"],
    &["db"],
    &["accept"],
    &["events"],
    &["ingest", "read"],
    &["ops"],
    &["hub"],
    &["mcp"],
    &["http", "demo"],
];

/// What `lib.rs` re-exports at the crate's root, by the module it comes from.
const ROOT_NAMES: &[(&str, &str)] = &[
    ("Error", "error"),
    ("Result", "error"),
    ("STRIPPED_MEDIA_MARKER", "codec"),
    ("ContentHash", "codec"),
    ("MediaName", "codec"),
    ("MediaRef", "codec"),
    ("Indexer", "ingest"),
    ("NoProgress", "ingest"),
    ("Progress", "ingest"),
    ("Summary", "ingest"),
    ("Tail", "ingest"),
    ("TailConfig", "ingest"),
    ("MediaRecord", "read"),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to; `None` for `lib.rs` and the binary.
fn module_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    match first.as_str() {
        "lib.rs" | "bin" => None,
        name => Some(name.trim_end_matches(".rs").to_owned()),
    }
}

/// The modules a file's code (not its comments) names with `crate::`.
fn named(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let code = code.split(" // ").next().unwrap_or(code);
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    out.insert(first_segment(item.trim()));
                }
                rest = &group[end..];
            } else {
                out.insert(first_segment(rest));
            }
        }
    }
    out.remove("");
    out
}

fn first_segment(path: &str) -> String {
    let end = path.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(path.len());
    let name = &path[..end];
    match ROOT_NAMES.iter().find(|(n, _)| *n == name) {
        Some((_, module)) => (*module).to_owned(),
        None => name.to_owned(),
    }
}

/// Every top-level module and the modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&file) else { continue };
        let mut names = named(&std::fs::read_to_string(&file).unwrap());
        names.remove(&module);
        graph.entry(module).or_default().extend(names);
    }
    graph
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn no_folder_imports_one_that_imports_it_back() {
    let graph = graph();
    assert!(graph.len() >= 10, "the modules of src/ were not found: {graph:?}");
    // Depth-first search for a path back to where it started.
    fn back<'a>(
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        from: &'a str,
        to: &str,
        path: &mut Vec<&'a str>,
    ) -> bool {
        path.push(from);
        for next in graph.get(from).into_iter().flatten() {
            if next == to || (!path.contains(&next.as_str()) && back(graph, next, to, path)) {
                return true;
            }
        }
        path.pop();
        false
    }
    for module in graph.keys() {
        let mut path = Vec::new();
        assert!(!back(&graph, module, module, &mut path), "an import loop: {} -> {module}", path.join(" -> "));
    }
}

#[test]
fn every_folder_imports_only_the_layers_below_it() {
    let graph = graph();
    for (module, names) in &graph {
        let layer = layer_of(module)
            .unwrap_or_else(|| panic!("src/{module} has no layer: add it to LAYERS and ARCHITECTURE.md"));
        for name in names {
            let other = layer_of(name).unwrap_or_else(|| {
                panic!("src/{module} names crate::{name}, which is no module of src/ and no root re-export")
            });
            assert!(
                other < layer,
                "src/{module} (layer {layer}) names crate::{name} (layer {other}): only lower layers may be named"
            );
        }
    }
}

#[test]
fn the_reader_of_imports_sees_grouped_and_rooted_paths() {
    let names = named(
        "use crate::{db, error::Result};\n// crate::http in a comment\nuse crate::codec::scan; let x = crate::Indexer::open;",
    );
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["codec", "db", "error", "ingest"]);
}
