//! Circles of imports inside a folder: files that name each other round a loop, so none of
//! them can be read, changed or tested without the others. STYLE.md: "a circle of imports
//! inside a folder is a room that has not decided what it is: find the shared concept, give
//! it its own file". The floors ([`super`]) keep folders apart; this reads every file of
//! `src/` as a node and fails on each knot, naming its files and the lines of each arrow.
//!
//! An arrow is a path in one file that names another file's module: `crate::a::b`,
//! `super::b`, `super::super::b`, `self::b` or a bare child's name in a `mod.rs` (or in a
//! `b.rs` beside a `b/` folder), each leaf of a `use …::{a, b::c}` group, and a module
//! brought in by `use` and named later (`use super::budget;` … `budget::Day`). A path that
//! ends on an item points at the file that holds it: `super::Item` at the `mod.rs`, or, when
//! that `mod.rs` only imports the item from a child, at the child itself (passing a name on
//! is not where it lives). `mod x;` declares a file, it imports nothing; comments are
//! skipped, and strings too unless a whole string is a path (serde's `with = "crate::…"`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::path::Path;

/// One knot: files that all reach each other through their imports.
#[derive(Debug, PartialEq, Eq)]
pub struct Circle {
    /// The deepest folder holding every file of the circle, as `src/…/`.
    pub folder: String,
    /// The files, relative to [`Circle::folder`], sorted.
    pub files: Vec<String>,
    /// Each arrow between two files of the circle: from, to (relative to the folder), and
    /// the lines of `from` that make it.
    pub arrows: Vec<(String, String, Vec<usize>)>,
}

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} — {} files: {}",
            self.folder,
            self.files.len(),
            self.files.join(", ")
        )?;
        for (from, to, lines) in &self.arrows {
            let lines: Vec<String> = lines.iter().map(ToString::to_string).collect();
            writeln!(
                f,
                "    {from} → {to}  ({}{from}:{})",
                self.folder,
                lines.join(",")
            )?;
        }
        Ok(())
    }
}

/// Every circle of imports among the files under `src`, by folder.
pub fn circles(src: &Path) -> Vec<Circle> {
    let mut paths = Vec::new();
    super::sources(src, &mut paths);
    paths.sort();
    let mut files: Vec<Source> = Vec::new();
    for path in paths {
        let relative = path
            .strip_prefix(src)
            .expect("under src/")
            .to_string_lossy()
            .replace('\\', "/");
        // The binary is a crate of its own and names the library only as `agent::`.
        if relative == "main.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        let module = module_of(&relative);
        let (leaves, said) = leaves(&tokens(&text), &module);
        files.push(Source {
            file: relative,
            module,
            leaves,
            said,
        });
    }
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|source| (source.module.clone(), source.file.clone()))
        .collect();

    // First what each file brings into scope: modules by a name (`use super::budget;`),
    // modules whose names all come in (`use super::*`), and, at a module's own level, items
    // it imports from elsewhere (so `super::Item` can be followed to where `Item` lives).
    let mut scopes: Vec<Scope> = Vec::new();
    let mut imported: HashMap<Vec<String>, HashMap<String, Place>> = HashMap::new();
    for source in &files {
        let mut scope = Scope::default();
        for leaf in source.leaves.iter().filter(|leaf| leaf.in_use) {
            let Some(place) = resolve(leaf, &scope, &modules) else {
                continue;
            };
            match (&place.item, leaf.glob) {
                (_, true) => scope.globs.push(place.module),
                (None, false) => {
                    let name = leaf
                        .rename
                        .clone()
                        .unwrap_or_else(|| place.module.last().cloned().unwrap_or_default());
                    scope.aliases.insert(name, place.module);
                }
                (Some(item), false) => {
                    if leaf.at_module_level && modules.contains_key(&leaf.module) {
                        let name = leaf.rename.clone().unwrap_or_else(|| item.clone());
                        imported
                            .entry(leaf.module.clone())
                            .or_default()
                            .insert(name, place);
                    }
                }
            }
        }
        scopes.push(scope);
    }

    // Then every arrow, file to file, with its lines.
    let mut arrows: BTreeMap<(String, String), BTreeSet<usize>> = BTreeMap::new();
    for (source, scope) in files.iter().zip(&scopes) {
        let Source {
            file, leaves, said, ..
        } = source;
        for leaf in leaves {
            let Some(place) = resolve(leaf, scope, &modules) else {
                continue;
            };
            match &place.item {
                // A module named whole is a name brought into scope, not a use of it.
                None if !leaf.glob => continue,
                // Only passed on to the module's users, who are followed past it.
                Some(item)
                    if leaf.passed_on
                        && !leaf.glob
                        && !said.contains(leaf.rename.as_ref().unwrap_or(item)) =>
                {
                    continue;
                }
                _ => {}
            }
            let place = follow_imports(place, &imported);
            let to = file_of(&place.module, &modules);
            if to != *file {
                arrows
                    .entry((file.clone(), to))
                    .or_default()
                    .insert(leaf.line);
            }
        }
    }

    let names: Vec<&String> = modules.values().collect();
    let index: HashMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    for (from, to) in arrows.keys() {
        next[index[from]].push(index[to]);
    }
    let mut found: Vec<Circle> = knots(&next)
        .into_iter()
        .map(|knot| {
            let mut members: Vec<&String> = knot.iter().map(|&i| names[i]).collect();
            members.sort();
            circle(&members, &arrows)
        })
        .collect();
    found.sort_by(|a, b| a.folder.cmp(&b.folder).then(a.files.cmp(&b.files)));
    found
}

fn circle(members: &[&String], arrows: &BTreeMap<(String, String), BTreeSet<usize>>) -> Circle {
    let folders: Vec<Vec<&str>> = members
        .iter()
        .map(|file| {
            let mut parts: Vec<&str> = file.split('/').collect();
            parts.pop();
            parts
        })
        .collect();
    let mut common = folders[0].clone();
    for folder in &folders[1..] {
        let shared = common
            .iter()
            .zip(folder)
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(shared);
    }
    let prefix: String = common.iter().flat_map(|part| [*part, "/"]).collect();
    let inside = |file: &str| file[prefix.len()..].to_string();
    let arrows = arrows
        .iter()
        .filter(|((from, to), _)| members.contains(&from) && members.contains(&to))
        .map(|((from, to), lines)| (inside(from), inside(to), lines.iter().copied().collect()))
        .collect();
    Circle {
        folder: format!("src/{prefix}"),
        files: members.iter().map(|file| inside(file)).collect(),
        arrows,
    }
}

/// The strongly connected groups of more than one node (Tarjan's algorithm).
fn knots(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct Walk<'a> {
        next: &'a [Vec<usize>],
        order: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        counter: usize,
        knots: Vec<Vec<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, node: usize) {
            self.order[node] = Some(self.counter);
            self.low[node] = self.counter;
            self.counter += 1;
            self.stack.push(node);
            self.on_stack[node] = true;
            for &to in &self.next[node] {
                match self.order[to] {
                    None => {
                        self.visit(to);
                        self.low[node] = self.low[node].min(self.low[to]);
                    }
                    Some(seen) if self.on_stack[to] => self.low[node] = self.low[node].min(seen),
                    Some(_) => {}
                }
            }
            if Some(self.low[node]) == self.order[node] {
                let mut knot = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack[top] = false;
                    knot.push(top);
                    if top == node {
                        break;
                    }
                }
                if knot.len() > 1 {
                    self.knots.push(knot);
                }
            }
        }
    }
    let mut walk = Walk {
        next,
        order: vec![None; next.len()],
        low: vec![0; next.len()],
        stack: Vec::new(),
        on_stack: vec![false; next.len()],
        counter: 0,
        knots: Vec::new(),
    };
    for node in 0..next.len() {
        if walk.order[node].is_none() {
            walk.visit(node);
        }
    }
    walk.knots
}

/// The module a file under `src/` defines: `state/store/epoch.rs` → `state::store::epoch`,
/// `state/store/mod.rs` → `state::store`, `lib.rs` → the crate.
fn module_of(relative: &str) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The file that holds a module, an inline one (`mod tests { … }`) by the file around it.
fn file_of(module: &[String], modules: &BTreeMap<Vec<String>, String>) -> String {
    (0..=module.len())
        .rev()
        .find_map(|len| modules.get(&module[..len]))
        .cloned()
        .expect("the crate's root is a file")
}

/// One file of `src/`, read.
struct Source {
    /// Its path under `src/`, `/`-separated.
    file: String,
    module: Vec<String>,
    leaves: Vec<Leaf>,
    /// The words it says outside its `use` declarations.
    said: HashSet<String>,
}

/// What one file has brought into scope by `use`.
#[derive(Default)]
struct Scope {
    aliases: HashMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
}

/// Where a path lands: a module, and the item in it when the path goes on past modules.
#[derive(Clone)]
struct Place {
    module: Vec<String>,
    item: Option<String>,
}

/// Where `leaf` points, or `None` when it names nothing of this crate's (`std::…`, a type's
/// own `Self::…`, a local).
fn resolve(leaf: &Leaf, scope: &Scope, modules: &BTreeMap<Vec<String>, String>) -> Option<Place> {
    let segments = &leaf.segments;
    let first = segments.first()?;
    let here = &leaf.module;
    let is_module = |path: &[String], name: &str| {
        let mut child = path.to_vec();
        child.push(name.to_string());
        modules.contains_key(&child)
    };
    let (base, rest): (Vec<String>, &[String]) = match first.as_str() {
        "crate" => (Vec::new(), &segments[1..]),
        "super" => {
            let ups = segments.iter().take_while(|s| *s == "super").count();
            let kept = here.len().checked_sub(ups)?;
            (here[..kept].to_vec(), &segments[ups..])
        }
        "self" => (here.clone(), &segments[1..]),
        name => {
            if segments.len() == 1 && !leaf.glob {
                return None;
            }
            if let Some(module) = scope.aliases.get(name) {
                (module.clone(), &segments[1..])
            } else if is_module(here, name) {
                (here.clone(), &segments[..])
            } else {
                let glob = scope.globs.iter().find(|glob| is_module(glob, name))?;
                (glob.clone(), &segments[..])
            }
        }
    };
    let mut module = base;
    for (at, segment) in rest.iter().enumerate() {
        if segment == "self" && at + 1 == rest.len() {
            break;
        }
        if is_module(&module, segment) {
            module.push(segment.clone());
        } else {
            return Some(Place {
                module,
                item: Some(segment.clone()),
            });
        }
    }
    Some(Place { module, item: None })
}

/// Follow an item past the modules that only import it, to the module that holds it.
fn follow_imports(
    mut place: Place,
    imported: &HashMap<Vec<String>, HashMap<String, Place>>,
) -> Place {
    for _ in 0..8 {
        let Some(item) = &place.item else { break };
        match imported
            .get(&place.module)
            .and_then(|names| names.get(item))
        {
            Some(from) => place = from.clone(),
            None => break,
        }
    }
    place
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    PathSep,
    Open,
    Close,
    Comma,
    Star,
    Other(char),
}

/// The source's tokens with their lines, as far as paths need them: comments dropped,
/// strings and characters dropped unless a string is a whole path.
fn tokens(source: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            '/' if at(i + 1) == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => {
                let mut depth = 0;
                loop {
                    if i >= chars.len() {
                        break;
                    }
                    if chars[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => i = string(&chars, i + 1, 0, &mut line, &mut out),
            '\'' => {
                if at(i + 1) == '\\' {
                    // '\n', '\'', '\u{7f}'
                    i += 3;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if at(i + 2) == '\'' {
                    i += 3;
                } else {
                    // A lifetime: its name is only a word.
                    i += 1;
                }
            }
            c if c.is_ascii_digit() => {
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let raw_prefix = matches!(word.as_str(), "r" | "br" | "cr");
                let byte_prefix = matches!(word.as_str(), "b" | "c");
                if raw_prefix && (at(i) == '"' || at(i) == '#') {
                    let hashes = chars[i..].iter().take_while(|c| **c == '#').count();
                    if at(i + hashes) == '"' {
                        i = string(&chars, i + hashes + 1, hashes, &mut line, &mut out);
                        continue;
                    }
                    // `r#type`: a raw identifier.
                    i += hashes;
                    continue;
                }
                if byte_prefix && at(i) == '"' {
                    i = string(&chars, i + 1, 0, &mut line, &mut out);
                    continue;
                }
                out.push((Token::Word(word), line));
            }
            ':' if at(i + 1) == ':' => {
                out.push((Token::PathSep, line));
                i += 2;
            }
            _ => {
                let token = match c {
                    '{' => Token::Open,
                    '}' => Token::Close,
                    ',' => Token::Comma,
                    '*' => Token::Star,
                    other => Token::Other(other),
                };
                if !c.is_whitespace() {
                    out.push((token, line));
                }
                i += 1;
            }
        }
    }
    out
}

/// Skip a string whose body starts at `i` (closed by `"` and `hashes` times `#`), counting
/// its lines; a string that is a whole path of this crate's is read as one. Returns the
/// index past it.
fn string(
    chars: &[char],
    mut i: usize,
    hashes: usize,
    line: &mut usize,
    out: &mut Vec<(Token, usize)>,
) -> usize {
    let start = i;
    let first_line = *line;
    while i < chars.len() {
        match chars[i] {
            '\\' if hashes == 0 => {
                if chars.get(i + 1) == Some(&'\n') {
                    *line += 1;
                }
                i += 2;
                continue;
            }
            '"' if chars[i + 1..]
                .iter()
                .take(hashes)
                .filter(|c| **c == '#')
                .count()
                == hashes =>
            {
                let body: String = chars[start..i].iter().collect();
                let is_path = ["crate::", "super::", "self::"]
                    .iter()
                    .any(|head| body.starts_with(head))
                    && body
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
                if is_path {
                    out.extend(
                        tokens(&body)
                            .into_iter()
                            .map(|(token, _)| (token, first_line)),
                    );
                    // Ends the path, so a word after the string does not continue it.
                    out.push((Token::Other('"'), first_line));
                }
                return i + 1 + hashes;
            }
            '\n' => *line += 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// One path of a source file, a `use` group's leaf spelled out in full.
#[derive(Debug)]
struct Leaf {
    segments: Vec<String>,
    /// The line of its last segment: in a group spread over lines, the line of the leaf.
    line: usize,
    /// Ends in `::*`.
    glob: bool,
    /// `as NAME`.
    rename: Option<String>,
    /// Part of a `use` declaration.
    in_use: bool,
    /// Part of a `pub use`: the module passes the name on, and only uses it if it names it
    /// again elsewhere.
    passed_on: bool,
    /// A `use` at its module's own level (not inside a function), so it adds to what the
    /// module holds.
    at_module_level: bool,
    /// The module the path is written in: the file's, or an inline `mod NAME { … }` in it.
    module: Vec<String>,
}

/// Every path of a file's tokens, each with the module it is written in (the file's
/// `module`, or an inline module in it), and the words the file says outside its `use`
/// declarations.
fn leaves(tokens: &[(Token, usize)], module: &[String]) -> (Vec<Leaf>, HashSet<String>) {
    let mut found = Vec::new();
    let mut said = HashSet::new();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let word = |i: usize| match tokens.get(i) {
        Some((Token::Word(w), _)) => Some(w.as_str()),
        _ => None,
    };
    while i < tokens.len() {
        match &tokens[i].0 {
            Token::Open => {
                depth += 1;
                i += 1;
            }
            Token::Close => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, open)| *open == depth) {
                    inline.pop();
                }
                i += 1;
            }
            Token::Word(w) if w == "mod" => {
                if let (Some(name), Some((Token::Open, _))) = (word(i + 1), tokens.get(i + 2)) {
                    inline.push((name.to_string(), depth));
                    depth += 1;
                    i += 3;
                } else {
                    // `mod name;` declares a file: not an import.
                    i += 2;
                }
            }
            Token::Word(w) => {
                let after_sep = i > 0 && tokens[i - 1].0 == Token::PathSep;
                let in_use = w == "use";
                let start = if in_use { i + 1 } else { i };
                if after_sep {
                    i += 1;
                    continue;
                }
                let module_level = inline.last().map_or(0, |(_, open)| open + 1) == depth;
                let passed_on = in_use && is_public(tokens, i);
                let mut paths = Vec::new();
                let end = tree(tokens, start, Vec::new(), in_use, &mut paths);
                if !in_use {
                    said.extend(
                        tokens[i..end.max(i + 1)]
                            .iter()
                            .filter_map(|(t, _)| match t {
                                Token::Word(w) => Some(w.clone()),
                                _ => None,
                            }),
                    );
                }
                let mut here = module.to_vec();
                here.extend(inline.iter().map(|(name, _)| name.clone()));
                for mut leaf in paths {
                    leaf.at_module_level = module_level;
                    leaf.passed_on = passed_on;
                    leaf.module.clone_from(&here);
                    found.push(leaf);
                }
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    (found, said)
}

/// Whether the `use` at `at` is public: `pub use`, `pub(crate) use`, `pub(super) use`.
fn is_public(tokens: &[(Token, usize)], at: usize) -> bool {
    let before = |back: usize| {
        at.checked_sub(back)
            .and_then(|i| tokens.get(i))
            .map(|(t, _)| t)
    };
    let pub_word = Token::Word("pub".to_string());
    match before(1) {
        Some(token) if *token == pub_word => true,
        Some(Token::Other(')')) => (2..=at)
            .find(|back| before(*back) == Some(&Token::Other('(')))
            .is_some_and(|back| before(back + 1) == Some(&pub_word)),
        _ => false,
    }
}

/// Read one path (or `use` tree) from `i` after `prefix`, pushing its leaves; returns the
/// index after it.
fn tree(
    tokens: &[(Token, usize)],
    mut i: usize,
    mut segments: Vec<String>,
    in_use: bool,
    out: &mut Vec<Leaf>,
) -> usize {
    let mut line = tokens.get(i).map_or(0, |(_, line)| *line);
    let mut glob = false;
    loop {
        match tokens.get(i) {
            Some((Token::Word(w), at)) => {
                segments.push(w.clone());
                line = *at;
                i += 1;
                if tokens.get(i).map(|(t, _)| t) == Some(&Token::PathSep) {
                    i += 1;
                    continue;
                }
                break;
            }
            Some((Token::Open, _)) if !segments.is_empty() || in_use => {
                i += 1;
                loop {
                    match tokens.get(i).map(|(t, _)| t) {
                        None => return i,
                        Some(Token::Close) => return i + 1,
                        Some(Token::Comma) => i += 1,
                        Some(_) => {
                            let before = i;
                            i = tree(tokens, i, segments.clone(), in_use, out);
                            if i == before {
                                i += 1;
                            }
                        }
                    }
                }
            }
            Some((Token::Star, at)) if !segments.is_empty() => {
                glob = true;
                line = *at;
                i += 1;
                break;
            }
            _ => break,
        }
    }
    if segments.is_empty() {
        return i;
    }
    let mut rename = None;
    if let (Some((Token::Word(a), _)), Some((Token::Word(name), _))) =
        (tokens.get(i), tokens.get(i + 1))
        && a == "as"
        && in_use
    {
        rename = Some(name.clone());
        i += 2;
    }
    out.push(Leaf {
        segments,
        line,
        glob,
        rename,
        in_use,
        passed_on: false,
        at_module_level: false,
        module: Vec::new(),
    });
    i
}
