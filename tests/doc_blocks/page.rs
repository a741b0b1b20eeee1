//! The fenced code blocks of the README and `docs/*.md`, with the tag that says which
//! scene shows a block's output (`<!-- output: NAME -->` on the line above its fence).

use std::path::{Path, PathBuf};

/// One fenced block of a page.
#[derive(Debug)]
pub struct Block {
    /// The page, relative to the repository.
    pub page: String,
    /// The line of its opening fence (1-based).
    pub line: usize,
    /// Its info string's first word: `console`, `sh`, `toml`, or empty.
    pub lang: String,
    /// The scene named by the `<!-- output: NAME -->` line right above its fence.
    pub scene: Option<String>,
    /// Its lines, without the fence's own indentation.
    pub body: Vec<String>,
}

impl Block {
    /// Where it is, as an editor takes it: `docs/usage.md:120`.
    pub fn at(&self) -> String {
        format!("{}:{}", self.page, self.line)
    }

    /// A block fenced as a terminal's transcript or as plain text claims to be what a
    /// program printed; one fenced for a language (`sh`, `toml`, `json` …) is what the
    /// user types or writes.
    pub fn shows_output(&self) -> bool {
        matches!(self.lang.as_str(), "console" | "text" | "")
    }
}

/// One command of a console block and the lines printed after it.
#[derive(Debug)]
pub struct Step {
    pub command: String,
    pub printed: Vec<String>,
}

/// A console block as its commands (`$ ` lines) and what each printed; an error names a
/// block whose first line is no command.
pub fn steps(block: &Block) -> Result<Vec<Step>, String> {
    let mut steps: Vec<Step> = Vec::new();
    for line in &block.body {
        if let Some(command) = line.strip_prefix("$ ") {
            steps.push(Step {
                command: command.to_string(),
                printed: Vec::new(),
            });
        } else if let Some(step) = steps.last_mut() {
            step.printed.push(line.clone());
        } else {
            return Err(format!(
                "{}: a transcript starts with a `$ ` command, not {line:?}",
                block.at()
            ));
        }
    }
    if steps.is_empty() {
        return Err(format!("{}: a transcript with no `$ ` command", block.at()));
    }
    Ok(steps)
}

/// The repository's root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The README and every `docs/*.md`, sorted.
pub fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    pages.insert(0, repo().join("README.md"));
    pages
}

/// Every fenced block of every page.
pub fn blocks() -> Vec<Block> {
    pages()
        .iter()
        .flat_map(|page| {
            let name = page.strip_prefix(repo()).unwrap().display().to_string();
            blocks_of(&name, &std::fs::read_to_string(page).unwrap())
        })
        .collect()
}

/// The fenced blocks of one page's text.
pub fn blocks_of(page: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        let indent = line.len() - line.trim_start().len();
        let Some(info) = line.trim_start().strip_prefix("```") else {
            at += 1;
            continue;
        };
        let scene = at
            .checked_sub(1)
            .map(|above| lines[above].trim())
            .and_then(|above| above.strip_prefix("<!-- output:"))
            .and_then(|tag| tag.strip_suffix("-->"))
            .map(|name| name.trim().to_string());
        let mut body = Vec::new();
        let mut end = at + 1;
        while end < lines.len() && !lines[end].trim_start().starts_with("```") {
            let inner = lines[end];
            let cut = inner
                .char_indices()
                .take_while(|&(i, c)| i < indent && c == ' ')
                .count();
            body.push(inner[cut..].to_string());
            end += 1;
        }
        blocks.push(Block {
            page: page.to_string(),
            line: at + 1,
            lang: info.split_whitespace().next().unwrap_or("").to_string(),
            scene,
            body,
        });
        at = end + 1;
    }
    blocks
}
