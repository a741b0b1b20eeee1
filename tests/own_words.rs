//! What agent says names nothing the user does not have (issue 43): `--dry-run` once cited
//! "(DESIGN §21)", a file of the repository no user has. This reads `src/` and fails on a
//! string that names the design document; comments may, they are for the code's readers.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

/// Whether `line` names the design document in code rather than in a comment: the name
/// comes before any `//` on the line.
fn cites_design_in_code(line: &str) -> bool {
    let Some(at) = line.find("DESIGN") else {
        return false;
    };
    !line[..at].contains("//")
}

#[test]
fn no_string_agent_prints_cites_the_design_document() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for file in sources(&src) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            if cites_design_in_code(line) {
                found.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "user-facing text cites DESIGN:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_citation_in_a_comment_is_for_the_code_and_one_in_a_string_is_for_the_user() {
    assert!(!cites_design_in_code("    // the rule (DESIGN §21)"));
    assert!(!cites_design_in_code("//! A module (DESIGN.md §4)"));
    assert!(!cites_design_in_code("    call(); // DESIGN §5"));
    assert!(cites_design_in_code(
        "    \"a new --session-id UUID goes first (DESIGN §21)\""
    ));
    assert!(cites_design_in_code("        (DESIGN §21)\","));
}
