//! The examples of the built-in table's opencode paragraph (`docs/rungs.md`) do what it
//! says they do, checked through `agent --dry-run --json` (issue 32, item 8: the README's
//! opencode example had gone stale and gave Claude Code the prompt `run …`).

use serde_json::Value;

use crate::world::world;

/// The paragraph of `docs/rungs.md` that begins with `start`, up to the blank line after it.
fn paragraph(start: &str) -> String {
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rungs.md"),
    )
    .unwrap();
    let from = page
        .find(start)
        .unwrap_or_else(|| panic!("docs/rungs.md has no paragraph starting {start:?}"));
    let text = &page[from..];
    text[..text.find("\n\n").unwrap_or(text.len())].to_string()
}

/// What is in backticks, in order.
fn spans(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|span| span.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// A command as a POSIX shell splits it (quotes, no expansions): `a "b c"` → `a`, `b c`.
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, ' ') => words.extend(word.take()),
            (_, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    words
}

/// The argv (without the program) that `agent WORDS` would give rung 1 of `rungs`.
fn dry_run(w: &crate::world::World, backend: &str, words: &[String]) -> Vec<String> {
    w.sb.write_config(&format!(
        "[backends.opencode]\nprobe = {{ kind = \"none\" }}\n\n[[rungs]]\nbackend = \"{backend}\"\nprobe_model = \"opus\"\n"
    ));
    let mut args = vec!["--dry-run", "--json"];
    args.extend(words.iter().map(String::as_str));
    let run = w.sb.run(&args);
    assert_eq!(run.code, Some(0), "{args:?}: {run:?}");
    let json: Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(json["backend"], backend, "{}", run.stdout);
    json["argv"].as_array().unwrap()[1..]
        .iter()
        .map(|word| word.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_opencode_paragraphs_example_gives_opencode_and_claude_code_its_prompt() {
    let w = world();
    w.sb.fake_cli("opencode").install();
    let text = paragraph("**opencode** (`npm i -g opencode-ai`)");
    let spans = spans(&text);
    let examples: Vec<(usize, &String)> = spans
        .iter()
        .enumerate()
        .filter(|(_, span)| span.starts_with("agent "))
        .collect();
    assert!(!examples.is_empty(), "no `agent …` example in: {text}");
    for (at, example) in examples {
        let words = shell_words(example)[1..].to_vec();
        // The one quoted piece of the example is its prompt.
        let prompt = example
            .split('"')
            .nth(1)
            .unwrap_or_else(|| panic!("{example} quotes no prompt"));
        let opencode = dry_run(&w, "opencode", &words);
        assert!(
            opencode == ["run", "--", prompt] || opencode == [format!("--prompt={prompt}")],
            "`{example}` gives opencode {opencode:?}, not the prompt {prompt:?}"
        );
        // The command the page says it runs there, when it names one, is that one.
        if let Some(said) = spans[at + 1..]
            .iter()
            .take_while(|span| !span.starts_with("agent "))
            .find(|span| span.starts_with("opencode "))
        {
            assert_eq!(
                opencode,
                shell_words(said)[1..],
                "the page says `{example}` runs `{said}`"
            );
        }
        // Claude Code, on rung 1 of the same table, is given the prompt and nothing else.
        let claude = dry_run(&w, "claude-proxy", &words);
        let positional: Vec<&String> = claude
            .iter()
            .filter(|word| !word.starts_with('-'))
            .collect();
        assert_eq!(
            positional,
            [prompt],
            "`{example}` gives Claude Code {claude:?}"
        );
    }
}
