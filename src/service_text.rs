//! Text written into service definitions — systemd units, launchd property lists, crontab
//! lines — escaped for each format, so a path with spaces, quotes, `%`, `$`, `<`, `&` or a
//! newline reaches the job exactly as it is. Where a format cannot hold a character at all
//! (a newline in a crontab line, in systemd's `EnvironmentFile=`), the text is refused with
//! the reason rather than written wrong.

use std::fmt::Write as _;

use crate::exit_codes::usage;

/// The value of a systemd `ExecStart=` that runs `argv` exactly. systemd splits it on
/// whitespace outside double quotes, where C escapes (`\"`, `\\`, `\n`) apply; expands `%`
/// specifiers in every word (`%%` is a literal `%`) and `$VAR` in the arguments (`$$` is a
/// literal `$`), but not in the program's path; and refuses a program path holding a quote,
/// a backslash or a control character. Such a program is started through `/bin/sh`, which
/// gets the path as an argument, where anything can be written.
pub fn systemd_exec_start(argv: &[String]) -> String {
    let (program, args) = argv.split_first().expect("a command line has a program");
    let mut words = Vec::with_capacity(argv.len() + 3);
    if program.contains(['"', '\'', '\\']) || program.chars().any(char::is_control) {
        words.push("/bin/sh".to_string());
        for arg in ["-c", "exec \"$0\" \"$@\"", program] {
            words.push(systemd_word(arg, true));
        }
    } else {
        words.push(systemd_word(program, false));
    }
    words.extend(args.iter().map(|arg| systemd_word(arg, true)));
    words.join(" ")
}

/// One word of an `ExecStart=` line, quoted only when it must be.
fn systemd_word(text: &str, expands_variables: bool) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._,:=+-".contains(c));
    if plain {
        return text.to_string();
    }
    format!("\"{}\"", systemd_quoted(text, expands_variables))
}

/// A `NAME=value` assignment for systemd's `Environment=`, quoted whole. There `%`
/// specifiers are expanded but `$` means nothing.
pub fn systemd_assignment(name: &str, value: &str) -> String {
    format!("\"{}\"", systemd_quoted(&format!("{name}={value}"), false))
}

/// A path for a systemd setting that takes the rest of the line as a file name, unquoted
/// (`EnvironmentFile=`): only `%` needs escaping; a control character cannot be written.
pub fn systemd_path(what: &str, path: &str) -> anyhow::Result<String> {
    if path.chars().any(char::is_control) {
        return Err(usage(format!(
            "{what} {path:?}: a systemd unit cannot name a path with a newline or other control character; move it"
        )));
    }
    Ok(path.replace('%', "%%"))
}

/// The inside of a double-quoted systemd word: C escapes for `\`, `"` and control
/// characters, `%%` always, `$$` where variables are expanded.
fn systemd_quoted(text: &str, expands_variables: bool) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '$' if expands_variables => out.push_str("$$"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let mut bytes = [0; 4];
                for byte in c.encode_utf8(&mut bytes).bytes() {
                    let _ = write!(out, "\\x{byte:02x}");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Text for a launchd property list (XML 1.0): `&`, `<`, `>` and quotes as entities, a
/// carriage return as a character reference (a parser would turn a raw one into `\n`).
/// XML 1.0 cannot hold any other control character but tab and newline, even escaped.
pub fn plist_text(what: &str, text: &str) -> anyhow::Result<String> {
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(usage(format!(
            "{what} {text:?}: a property list cannot hold this control character; move it"
        )));
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// A word for `sh`, always single-quoted.
pub fn sh_word(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The command part of a crontab line, from a shell command in which every `%` lies inside
/// a single-quoted word (as every [`sh_word`] does). cron ends the command at a bare `%`
/// and turns `\%` into `%`; it has no escape for a backslash, so each `%` is written as
/// `'\%'` — leaving the quote, the escaped `%`, back into the quote — and no backslash of
/// the text ever stands before it. A line cannot hold a newline at all.
pub fn cron_command(what: &str, command: &str) -> anyhow::Result<String> {
    if command.contains(['\n', '\r']) {
        return Err(usage(format!(
            "{what}: a crontab line cannot hold a newline, and a path or value here has one; use --scheduler systemd or move it"
        )));
    }
    Ok(command.replace('%', r"'\%'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// systemd's reading of an `ExecStart=` value written by `systemd_exec_start`: its words
    /// (plain, or double-quoted with no space-separated quote inside), unquoted.
    fn systemd_argv(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut rest = line;
        while !rest.is_empty() {
            let end = if rest.starts_with('"') {
                // The closing quote: the first `"` not escaped by a backslash.
                let bytes = rest.as_bytes();
                let mut i = 1;
                while bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i + 1
            } else {
                rest.find(' ').unwrap_or(rest.len())
            };
            // The program's path is not variable-expanded; the arguments are.
            words.push(systemd_unquote(&rest[..end], !words.is_empty()));
            rest = rest[end..].trim_start_matches(' ');
        }
        words
    }

    /// systemd's reading of one `ExecStart=` word or `Environment=` assignment written by
    /// the functions above: quotes, C escapes, `%%` and (where variables expand) `$$`.
    fn systemd_unquote(word: &str, expands_variables: bool) -> String {
        let inner = word
            .strip_prefix('"')
            .and_then(|w| w.strip_suffix('"'))
            .unwrap_or(word);
        let mut bytes = Vec::new();
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next().expect("an escape has a second character") {
                    'n' => bytes.push(b'\n'),
                    't' => bytes.push(b'\t'),
                    'r' => bytes.push(b'\r'),
                    'x' => {
                        let hex: String = chars.by_ref().take(2).collect();
                        bytes.push(u8::from_str_radix(&hex, 16).unwrap());
                    }
                    other => {
                        let mut buf = [0; 4];
                        bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                    }
                },
                '%' => {
                    assert_eq!(chars.next(), Some('%'), "a lone % is a specifier: {word}");
                    bytes.push(b'%');
                }
                '$' if expands_variables => {
                    assert_eq!(chars.next(), Some('$'), "a lone $ expands: {word}");
                    bytes.push(b'$');
                }
                '"' => panic!("an unescaped quote inside the word: {word}"),
                c if !word.starts_with('"') && c.is_whitespace() => {
                    panic!("whitespace splits an unquoted word: {word}")
                }
                c => {
                    let mut buf = [0; 4];
                    bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        String::from_utf8(bytes).unwrap()
    }

    /// cron's reading of a command: `\%` is `%`, a bare `%` ends it.
    fn cron_unescape(command: &str) -> String {
        let mut out = String::new();
        let mut chars = command.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&'%') => {
                    out.push('%');
                    chars.next();
                }
                '\\' => {
                    out.push('\\');
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                '%' => panic!("a bare % ends the command: {command}"),
                c => out.push(c),
            }
        }
        out
    }

    /// A random string over the characters each format treats specially.
    fn hostile(rng: &mut fastrand::Rng) -> String {
        const PIECES: &[&str] = &[
            " ", "%", "%%", "$", "${HOME}", "\"", "'", "\\", "\\%", "<", ">", "&", "&amp;", "\n",
            "\t", "\r", ";", "a", "Z", "/", "é", "—", "=", "-", "@", "!", "\x01", "*",
        ];
        (0..rng.usize(0..12))
            .map(|_| PIECES[rng.usize(..PIECES.len())])
            .collect()
    }

    #[test]
    fn every_systemd_word_and_assignment_reads_back_exactly() {
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..3000 {
            let text = hostile(&mut rng);
            let argv = [format!("/opt/{text}/agent"), text.clone(), "--relay".into()];
            let line = systemd_exec_start(&argv);
            let read = systemd_argv(&line);
            if read[0] == "/bin/sh" {
                assert_eq!(read[1..3], ["-c", "exec \"$0\" \"$@\""], "{line}");
                assert_eq!(read[3..], argv, "ExecStart={line}");
            } else {
                assert_eq!(read, argv, "ExecStart={line}");
            }
            let assignment = systemd_assignment("AGENT_CONFIG", &text);
            assert_eq!(
                systemd_unquote(&assignment, false),
                format!("AGENT_CONFIG={text}"),
                "Environment= {assignment}"
            );
        }
        assert_eq!(
            systemd_exec_start(&["/usr/bin/agent".into(), "--check-fallback".into()]),
            "/usr/bin/agent --check-fallback"
        );
    }

    #[test]
    fn every_cron_command_reads_back_exactly_through_cron_and_sh() {
        let mut rng = fastrand::Rng::with_seed(12);
        for case in 0..300 {
            let mut text = hostile(&mut rng);
            text.retain(|c| !matches!(c, '\n' | '\r' | '\x01'));
            let command = format!("printf '%s' {}", sh_word(&text));
            let line = cron_command("test", &command).unwrap();
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(cron_unescape(&line))
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8(out.stdout).unwrap(),
                text,
                "case {case}: {line}"
            );
        }
        assert!(cron_command("test", "echo 'a\nb'").is_err());
    }

    #[test]
    fn plist_text_refuses_what_xml_cannot_hold() {
        assert_eq!(
            plist_text("p", "a<b>&\"'\r").unwrap(),
            "a&lt;b&gt;&amp;&quot;&apos;&#13;"
        );
        assert!(plist_text("p", "a\x01b").is_err());
        assert!(systemd_path("p", "/a\nb").is_err());
        assert_eq!(systemd_path("p", "/a %b").unwrap(), "/a %%b");
    }
}
