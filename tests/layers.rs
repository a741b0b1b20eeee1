//! The house's floors (STYLE.md "Floors"): every module imports only from its own floor's
//! leaves or below, so a change low down never has to know about the faces above it, and
//! nothing on the launch path can reach the relay. This reads `src/` and fails on an import
//! that points up a floor, naming the file, the line and the rule; and ([`circles`]) on a
//! circle of imports inside a folder, naming its files and the line of each arrow.

mod circles;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module's floor, lowest first. Modules on one floor may not import each
/// other unless [`ALLOWED_SIDEWAYS`] says so; `state` and `backend` share a floor and do not.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "leaves",
        &[
            "access",
            "bounded_read",
            "bounds",
            "child",
            "child_env",
            "digest",
            "error_class",
            "exit_codes",
            "expand",
            "http",
            "ownership",
            "paths",
            "redact",
            "retry",
            "scratch",
            "secret",
            "secret_shapes",
            "service_text",
            "pty",
            "signals",
            "term",
            "text",
            "tokens",
            "when",
        ],
    ),
    // `adapter` is what agent knows of each program it runs (DESIGN §16: its home, login
    // identity, credential variables, records, model settings, dialect): facts and small
    // readers on leaves alone, used by every floor above — the configuration too, which
    // judges each backend's CLI once as it reads the table.
    ("the CLIs' adapters", &["adapter"]),
    // The definition of agent's command line (clap types only), so every face can be
    // handed its own arguments already parsed; above the adapters, whose CLIs it names
    // (`--usage --source`).
    ("command line", &["cli"]),
    ("schema", &["config"]),
    ("records", &["state"]),
    ("what a CLI uses", &["backend"]),
    ("calls", &["probe", "accounts", "login"]),
    // The brief of a session that ran out of its window (DESIGN §21): written from what
    // the CLI's record says (login's readers), read by the next CLI the launch starts.
    ("hand-off", &["handoff"]),
    ("choice and launch", &["launch"]),
    ("faces", &["report", "watch", "relay", "usage", "dashboard"]),
    ("entry", &["docs", "lib", "main"]),
];

/// Leaves may use each other; among the faces `report` may use `watch` (the doctor and
/// `--install-watchdog` show the watchdog), and the dashboard the faces it draws.
const ALLOWED_SIDEWAYS: &[(&str, &str)] = &[
    ("report", "watch"),
    // The dashboard draws the reports' own documents (one source of truth); never the relay.
    ("dashboard", "report"),
    ("dashboard", "usage"),
    ("dashboard", "watch"),
    // `[relay] dashboard = true` serves the page beside the routes; the page never calls
    // the relay.
    ("relay", "dashboard"),
];

/// Floors that are side by side rather than stacked: neither may import the other.
const SIDE_BY_SIDE: &[(&str, &str)] = &[("records", "what a CLI uses")];

fn floor_of(module: &str) -> Option<(usize, &'static str)> {
    FLOORS
        .iter()
        .enumerate()
        .find(|(_, (_, modules))| modules.contains(&module))
        .map(|(index, (name, _))| (index, *name))
}

/// Why `from` may not import `to`, or `None` when it may.
fn violation(from: &str, to: &str) -> Option<String> {
    if from == to {
        return None;
    }
    let (Some((from_floor, from_name)), Some((to_floor, to_name))) = (floor_of(from), floor_of(to))
    else {
        return Some(format!(
            "`{from}` or `{to}` is on no floor: add it to FLOORS in tests/layers.rs"
        ));
    };
    let side_by_side = SIDE_BY_SIDE
        .iter()
        .any(|&(a, b)| (a, b) == (from_name, to_name) || (b, a) == (from_name, to_name));
    if side_by_side {
        return Some(format!(
            "{from_name} and {to_name} stand side by side: `{from}` may not import `{to}`"
        ));
    }
    if to_floor < from_floor {
        return None;
    }
    // Leaves share small helpers, and so does agent's command line at the top.
    let shares = from_name == "leaves" || from_floor == FLOORS.len() - 1;
    if to_floor == from_floor && (shares || ALLOWED_SIDEWAYS.contains(&(from, to))) {
        return None;
    }
    if to_floor == from_floor {
        return Some(format!(
            "`{from}` and `{to}` are both {from_name}: they may not import each other"
        ));
    }
    Some(format!(
        "`{from}` ({from_name}) imports `{to}` ({to_name}), a floor above it"
    ))
}

/// The top-level module a file under `src/` belongs to.
fn module_of(relative: &Path) -> String {
    let first = relative
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// Every `crate::NAME` a source text refers to, with its line number; comments skipped.
fn imports(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && !name.chars().next().is_some_and(char::is_uppercase) {
                found.push((number + 1, name));
            }
            rest = after;
        }
        // `use crate::{a, b::c}` names several at once.
        if let Some(group) = code
            .split_once("crate::{")
            .map(|(_, group)| group.split('}').next().unwrap_or(""))
        {
            for item in group.split(',') {
                let name = item.trim().split("::").next().unwrap_or("").trim();
                if !name.is_empty() && name != "self" {
                    found.push((number + 1, name.to_string()));
                }
            }
        }
    }
    found
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn upward_imports(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src/");
        let from = module_of(relative);
        let text = std::fs::read_to_string(&file).expect("a source file");
        for (line, to) in imports(&text) {
            if let Some(why) = violation(&from, &to) {
                problems.push(format!("src/{}:{line}: {why}", relative.display()));
            }
        }
    }
    problems
}

#[test]
fn every_import_points_down_a_floor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = upward_imports(&src);
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for problem in &problems {
        *by_rule
            .entry(problem.split(": ").nth(1).unwrap_or(""))
            .or_default() += 1;
    }
    assert!(
        problems.is_empty(),
        "{} import(s) point up a floor:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_checker_catches_an_upward_import_a_sideways_one_and_a_stray_module() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("state")).unwrap();
    std::fs::write(src.join("state/health.rs"), "use crate::probe::run;\n").unwrap();
    std::fs::write(src.join("probe.rs"), "fn f() { crate::accounts::x(); }\n").unwrap();
    std::fs::write(src.join("backend.rs"), "use crate::{config, state::x};\n").unwrap();
    std::fs::write(src.join("report.rs"), "use crate::watch::alerts; // fine\n").unwrap();
    std::fs::write(
        src.join("launch.rs"),
        "// crate::relay in a comment is fine\n",
    )
    .unwrap();
    std::fs::write(src.join("stray.rs"), "use crate::term;\n").unwrap();

    let problems = upward_imports(src);

    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(
        problems[0].starts_with("src/backend.rs:1: what a CLI uses and records stand side by side"),
        "{problems:#?}"
    );
    assert!(
        problems[1].starts_with("src/probe.rs:1: `probe` and `accounts` are both calls"),
        "{problems:#?}"
    );
    assert!(
        problems[2].starts_with("src/state/health.rs:1: `state` (records) imports `probe` (calls)"),
        "{problems:#?}"
    );
    assert!(
        problems[3].contains("`stray` or `term` is on no floor"),
        "{problems:#?}"
    );
}

#[test]
fn no_folder_holds_a_circle_of_imports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = circles::circles(&src);
    let listed: String = found.iter().map(ToString::to_string).collect();
    assert!(
        found.is_empty(),
        "{} circle(s) of imports inside a folder (find the concept they share and give it a \
         file of its own):\n{listed}",
        found.len()
    );
}

#[test]
fn the_checker_catches_a_circle_inside_a_folder_and_passes_a_tree() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod ring;\npub mod pair;\npub mod tree;\n");
    // a → b → c → a, each arrow spelled another way.
    write("ring/mod.rs", "mod a;\nmod b;\npub mod deep;\n");
    write("ring/a.rs", "use crate::ring::b::B;\npub struct A;\n");
    write(
        "ring/b.rs",
        "pub struct B;\nfn f() {\n    super::deep::c::run();\n}\n",
    );
    write(
        "ring/deep/c.rs",
        "use crate::ring::{\n    self,\n    a::A,\n};\npub fn run() {}\n",
    );
    write("ring/deep/mod.rs", "pub mod c;\n");
    // mod.rs ↔ its child: the child takes an item of mod.rs, mod.rs one of the child.
    write(
        "pair/mod.rs",
        "mod child;\npub struct Shared;\npub fn open() -> child::Door { child::Door }\n",
    );
    write(
        "pair/child.rs",
        "pub struct Door;\nfn f(_: super::Shared) {}\n",
    );
    // A tree: every arrow points one way, through each spelling that must not be read as a
    // circle.
    write(
        "tree/mod.rs",
        "//! [`leaf`](self::leaf) in a comment is not an arrow, nor is `mod leaf;`.\n\
         mod leaf;\npub mod trunk;\npub use leaf::Leaf;\n\
         fn f() { let _ = \"crate::tree::trunk::grow\"; }\n",
    );
    write(
        "tree/trunk.rs",
        // `super::Leaf` is only imported by mod.rs: the arrow is to leaf.rs.
        "use super::Leaf;\nuse super::leaf;\npub fn grow(_: leaf::Leaf) {}\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n    fn t() { grow(super::super::leaf::Leaf); }\n}\n",
    );
    write(
        "tree/leaf.rs",
        "/* crate::tree::trunk::grow */\npub struct Leaf;\n\
         #[cfg(test)]\nmod tests {\n    use super::Leaf;\n}\n",
    );

    let found = circles::circles(src);

    let arrow =
        |from: &str, to: &str, lines: &[usize]| (from.to_string(), to.to_string(), lines.to_vec());
    let names = |files: &[&str]| files.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(
        found,
        vec![
            circles::Circle {
                folder: "src/pair/".to_string(),
                files: names(&["child.rs", "mod.rs"]),
                arrows: vec![
                    arrow("child.rs", "mod.rs", &[2]),
                    arrow("mod.rs", "child.rs", &[3])
                ],
            },
            circles::Circle {
                folder: "src/ring/".to_string(),
                files: names(&["a.rs", "b.rs", "deep/c.rs"]),
                arrows: vec![
                    arrow("a.rs", "b.rs", &[1]),
                    arrow("b.rs", "deep/c.rs", &[3]),
                    arrow("deep/c.rs", "a.rs", &[3]),
                ],
            },
        ],
        "{}",
        found.iter().map(ToString::to_string).collect::<String>()
    );
}
