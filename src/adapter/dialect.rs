//! Claude Code's command line in another CLI's words (DESIGN.md §16 "Dialects").
//!
//! The user writes Claude Code's command line, since agent replaces `claude`. On a rung whose
//! CLI is another, [`translate`] rewrites it with that CLI's [`Dialect`]: a table of
//! Claude Code's forms and the CLI's words for them, checked against each CLI's `--help` at
//! the version named in the table. It returns the words to run and the rules that made them
//! (`--dry-run` prints both), or the flag the CLI cannot take, so the rung is passed over
//! before it runs rather than run to fail. Claude Code, Antigravity (`agy`, not on the npm
//! registry, so unchecked: left as given) and any other command take the words unchanged.
//!
//! This file is the engine: the forms, the shape of a table, Claude Code's own flags (the
//! language translated from, [`CLAUDE_FLAGS`]) and the one function that applies a table.
//! Each CLI's table is its adapter's ([`codex::DIALECT`], [`gemini::DIALECT`],
//! [`opencode::DIALECT`]), beside the rest of what agent knows of that CLI; [`DIALECTS`] lists
//! them, and the tests here run every table through the engine and against each CLI's
//! captured `--help`.

use std::ffi::{OsStr, OsString};
use std::fmt::{self, Write as _};

use super::{Family, codex, gemini, opencode};

/// One of Claude Code's forms that another CLI says in its own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `-p` / `--print`: headless; the positional words are the prompt.
    Print,
    /// `-c` / `--continue`: the most recent conversation.
    Continue,
    /// `-r` / `--resume [ID]`: a picker, or a Claude Code session by id.
    Resume,
    /// `--model M`.
    Model,
    /// `--output-format text|json|stream-json` (only with `-p`).
    OutputFormat,
    /// `--dangerously-skip-permissions`.
    SkipPermissions,
    /// `--permission-mode default|acceptEdits|plan|bypassPermissions|…`.
    PermissionMode,
    /// `--add-dir D`.
    AddDir,
    /// `--verbose`: more of Claude Code's own output.
    Verbose,
    /// `-d` / `--debug [FILTER]`.
    Debug,
    /// `--fallback-model M`: a Claude model to fall back to.
    FallbackModel,
    /// A flag of Claude Code's with no counterpart in another CLI.
    Other,
}

/// Whether a flag takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    Flag,
    Value,
    /// `[value]`: the next word, when it is not a flag.
    Optional,
}

/// One of Claude Code's flags (`claude --help`, 2.1.332).
pub struct ClaudeFlag {
    pub names: &'static [&'static str],
    pub arity: Arity,
    pub form: Form,
}

const fn claude(names: &'static [&'static str], arity: Arity, form: Form) -> ClaudeFlag {
    ClaudeFlag { names, arity, form }
}

/// Claude Code's flags: the words the user writes. A variadic flag (`--add-dir <dirs...>`)
/// is read with one value.
pub const CLAUDE_FLAGS: &[ClaudeFlag] = &[
    claude(&["-p", "--print"], Arity::Flag, Form::Print),
    claude(&["-c", "--continue"], Arity::Flag, Form::Continue),
    claude(&["-r", "--resume"], Arity::Optional, Form::Resume),
    claude(&["--model"], Arity::Value, Form::Model),
    claude(&["--output-format"], Arity::Value, Form::OutputFormat),
    claude(
        &["--dangerously-skip-permissions"],
        Arity::Flag,
        Form::SkipPermissions,
    ),
    claude(&["--permission-mode"], Arity::Value, Form::PermissionMode),
    claude(&["--add-dir"], Arity::Value, Form::AddDir),
    claude(&["--verbose"], Arity::Flag, Form::Verbose),
    claude(&["-d", "--debug"], Arity::Optional, Form::Debug),
    claude(&["--fallback-model"], Arity::Value, Form::FallbackModel),
    claude(
        &[
            "--agent",
            "--agents",
            "--allowedTools",
            "--allowed-tools",
            "--append-system-prompt",
            "--autocompact",
            "--betas",
            "--debug-file",
            "--disallowedTools",
            "--disallowed-tools",
            "--effort",
            "--environment",
            "--file",
            "--input-format",
            "--json-schema",
            "--max-budget-usd",
            "--mcp-config",
            "-n",
            "--name",
            "--permission-prompts",
            "--plugin-dir",
            "--plugin-url",
            "--remote-control-session-name-prefix",
            "--session-id",
            "--setting-sources",
            "--settings",
            "--system-prompt",
            "--system-prompt-snapshot",
            "--tools",
        ],
        Arity::Value,
        Form::Other,
    ),
    claude(
        &[
            "--cloud",
            "--from-pr",
            "--prompt-suggestions",
            "--remote-control",
            "--teleport",
            "-w",
            "--worktree",
        ],
        Arity::Optional,
        Form::Other,
    ),
    claude(
        &[
            "--allow-dangerously-skip-permissions",
            "--ax-screen-reader",
            "--bg",
            "--background",
            "--bare",
            "--brief",
            "--chrome",
            "--desktop",
            "--disable-slash-commands",
            "--exclude-dynamic-system-prompt-sections",
            "--fork-session",
            "--forward-subagent-text",
            "-h",
            "--help",
            "--ide",
            "--include-hook-events",
            "--include-partial-messages",
            "--no-chrome",
            "--no-session-persistence",
            "--replay-user-messages",
            "--restricted",
            "--safe-mode",
            "--strict-mcp-config",
            "--tmux",
            "-v",
            "--version",
        ],
        Arity::Flag,
        Form::Other,
    ),
];

/// How a CLI runs: with a screen, or headless (`-p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Interactive,
    Headless,
}

/// Which conversation it starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Session {
    New,
    /// `-c`: the most recent one.
    Last,
    /// `--resume` with no id: the CLI's own picker.
    Pick,
}

/// The words a command line starts with, for one mode and session; a combination a dialect
/// does not list is one its CLI cannot start.
pub struct Start {
    pub mode: Mode,
    pub session: Session,
    pub words: &'static [&'static str],
    /// The CLI's flags this start's sub-command lacks (`codex exec resume` has no
    /// `--sandbox`), in two lists so one start may lack two sub-commands' flags.
    without: &'static [&'static str],
    also_without: &'static [&'static str],
}

impl Start {
    /// Every flag this start lacks.
    pub fn lacking(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.without.iter().chain(self.also_without).copied()
    }
}

/// A start for a CLI's table (in its adapter), lacking the flags `without` names.
pub(super) const fn start(
    mode: Mode,
    session: Session,
    words: &'static [&'static str],
    without: &'static [&'static str],
) -> Start {
    start_lacking_both(mode, session, words, without, &[])
}

/// A start lacking two sub-commands' flags (`codex` is neither `exec` nor `resume`).
pub(super) const fn start_lacking_both(
    mode: Mode,
    session: Session,
    words: &'static [&'static str],
    without: &'static [&'static str],
    also_without: &'static [&'static str],
) -> Start {
    Start {
        mode,
        session,
        words,
        without,
        also_without,
    }
}

/// Where the prompt (Claude Code's positional words) goes: always where the CLI reads it
/// as data, so no word of it becomes one of its flags or sub-commands (`agent logout` is
/// never `codex logout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    /// The words as given, at the end, after the CLI's `--`.
    Words,
    /// Joined into one word at the end, after the CLI's `--` (it takes one prompt).
    Joined,
    /// Joined, as this long flag's inline value (`gemini --prompt=PROMPT`, one word: the
    /// CLI drops what follows its `--`); given even when empty when headless.
    Flag(&'static str),
}

/// A CLI's words for one of Claude Code's forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Words {
    /// These words, then the form's value when it has one.
    Say(&'static [&'static str]),
    /// By the form's value (Claude Code's word, the CLI's words); a value not listed cannot
    /// be taken.
    Values(&'static [(&'static str, &'static [&'static str])]),
    /// Left out: it changes nothing that matters here.
    Drop,
}

/// One row of a dialect: a form, the CLI's words for it, and why (for `--dry-run`).
pub struct Rule {
    pub form: Form,
    pub words: Words,
    pub why: &'static str,
}

/// A row of a CLI's table (in its adapter).
pub(super) const fn rule(form: Form, words: Words, why: &'static str) -> Rule {
    Rule { form, words, why }
}

/// Everything agent knows about one CLI's command line.
pub struct Dialect {
    /// Its command name: the key a backend's command is matched on.
    pub command: &'static str,
    /// As notices name it.
    pub label: &'static str,
    /// The version whose `--help` this table was checked against.
    pub checked: &'static str,
    pub starts: &'static [Start],
    /// Where the prompt goes: with a screen, and headless.
    pub prompt: [Prompt; 2],
    /// Its flag for the model (the rung's own, or the user's of its vendor).
    pub model_flag: &'static str,
    /// It names models `provider/model`: a bare id cannot be passed.
    pub model_needs_provider: bool,
    /// Claude Code's forms it says in its own words; a form not listed it cannot take.
    pub rules: &'static [Rule],
    /// Its own flags (from its `--help`) and whether each takes a value: the user may write
    /// them too, and they pass unchanged.
    pub flags: &'static [(&'static str, bool)],
    /// What the headless start words are to it (for `--dry-run`).
    pub headless_why: &'static str,
    /// The exit code of its usage error, when that code means nothing else.
    pub usage_exit: Option<i32>,
}

use Mode::{Headless, Interactive};
use Session::{Last, New, Pick};

/// Every dialect agent translates into, each kept with its CLI's adapter.
pub const DIALECTS: &[&Dialect] = &[&codex::DIALECT, &gemini::DIALECT, &opencode::DIALECT];

/// The dialect of a CLI family; `None`: the words go unchanged (Claude Code itself,
/// Antigravity, any other command).
pub fn of(family: Family) -> Option<&'static Dialect> {
    match family {
        Family::Codex => Some(&codex::DIALECT),
        Family::Gemini => Some(&gemini::DIALECT),
        Family::Opencode => Some(&opencode::DIALECT),
        Family::Claude | Family::Agy | Family::Other => None,
    }
}

/// What one launch asks for.
pub struct Request<'a> {
    /// The user's words: Claude Code's command line.
    pub args: &'a [OsString],
    /// The rung's own model, when it names one.
    pub model: Option<&'a str>,
    /// The backend's configured model flag, for a CLI without a dialect.
    pub model_flag: Option<&'a str>,
    /// The rung's vendor: a `--model` naming another vendor's model is dropped.
    pub vendor: &'a str,
}

/// The words to run after the program, and what agent did to get them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Translation {
    pub argv: Vec<OsString>,
    /// One line per translation, for `--dry-run`.
    pub rules: Vec<String>,
    /// What the user should be told before it runs (a model dropped).
    pub notices: Vec<String>,
}

/// A flag the rung's CLI cannot take: the rung is passed over before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub label: &'static str,
    pub flag: String,
    pub why: String,
}

impl Refusal {
    /// "Codex cannot take --foo (why)".
    pub fn what(&self) -> String {
        let mut what = format!("{} cannot take {}", self.label, self.flag);
        if !self.why.is_empty() {
            let _ = write!(what, " ({})", self.why);
        }
        what
    }
}

/// As a rung passed over says it: "Codex cannot take --foo: passed over".
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: passed over", self.what())
    }
}

/// Claude Code's flag called `name`.
pub fn claude_flag(name: &str) -> Option<&'static ClaudeFlag> {
    CLAUDE_FLAGS.iter().find(|f| f.names.contains(&name))
}

impl Dialect {
    /// `Some(takes_value)` when `name` is one of this CLI's own flags.
    pub fn own_flag(&self, name: &str) -> Option<bool> {
        self.flags
            .iter()
            .find(|(flag, _)| *flag == name)
            .map(|(_, value)| *value)
    }

    fn rule(&self, form: Form) -> Option<&Rule> {
        self.rules.iter().find(|r| r.form == form)
    }

    fn start(&self, mode: Mode, session: Session) -> Option<&Start> {
        self.starts
            .iter()
            .find(|s| s.mode == mode && s.session == session)
    }
}

/// Whether `name` (`--stauts`) is a flag of the family's CLI, by what agent knows of it.
pub fn is_flag_of(family: Family, name: &str) -> bool {
    match of(family) {
        Some(dialect) => dialect.own_flag(name).is_some() || claude_flag(name).is_some(),
        // Claude Code's own table; any other CLI's flags are unknown, so all are its own.
        None if family == Family::Claude => claude_flag(name).is_some(),
        None => true,
    }
}

/// The vendor a model id belongs to, when its name says so.
pub fn vendor_of_model(model: &str) -> Option<&'static str> {
    let model = model.trim().to_ascii_lowercase();
    if model.contains('/') {
        // `provider/model`: whoever serves it is named by the CLI's own provider table.
        return None;
    }
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| model.starts_with(p));
    if starts(&["claude", "opus", "sonnet", "haiku"]) {
        Some("anthropic")
    } else if starts(&["gpt-", "o1", "o3", "o4", "codex"]) {
        Some("openai")
    } else if starts(&["gemini", "gemma"]) {
        Some("google")
    } else {
        None
    }
}

/// Words as the shell would read them.
fn show(words: &[OsString]) -> String {
    let words: Vec<String> = words
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    crate::text::shell_join(&words)
}

fn os(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// One word of the user's, split when it is a flag: `--name=value` → (`--name`, `value`).
/// The value keeps its bytes; a flag whose name is not UTF-8 is named lossily.
fn split_flag(word: &OsStr) -> Option<(String, Option<OsString>)> {
    use std::os::unix::ffi::OsStrExt as _;
    let bytes = word.as_bytes();
    if !bytes.starts_with(b"-") || bytes == b"-" {
        return None;
    }
    let at = bytes
        .iter()
        .position(|&b| b == b'=')
        .filter(|_| bytes.starts_with(b"--"));
    Some(match at {
        Some(at) => (
            String::from_utf8_lossy(&bytes[..at]).into_owned(),
            Some(OsStr::from_bytes(&bytes[at + 1..]).to_os_string()),
        ),
        None => (String::from_utf8_lossy(bytes).into_owned(), None),
    })
}

/// One word of Claude Code's command line, as Claude Code reads it.
enum Read {
    /// One of its flags, by the name written, with the value it took (`inline`: given as
    /// `--name=value`).
    Claude {
        flag: &'static ClaudeFlag,
        name: String,
        value: Option<OsString>,
        inline: bool,
        word: OsString,
    },
    /// A flag it does not have (another CLI's, or none), by the name written.
    Other {
        name: String,
        inline: bool,
        word: OsString,
    },
    /// A word of the prompt: a positional, or any word after `--`.
    Prompt(OsString),
}

/// Reads Claude Code's command line word by word: its flags with their values, and from
/// the first `--` on (the marker itself left out) only prompt words.
struct Reader<'a> {
    words: std::slice::Iter<'a, OsString>,
    data: bool,
}

impl<'a> Reader<'a> {
    fn new(args: &'a [OsString]) -> Reader<'a> {
        Reader {
            words: args.iter(),
            data: false,
        }
    }

    /// The next word as a flag's value; `--` and the words after it never are.
    fn value(&mut self) -> Option<OsString> {
        let next = self.words.as_slice().first()?;
        if self.data || next == "--" {
            return None;
        }
        self.words.next().cloned()
    }
}

impl Iterator for Reader<'_> {
    type Item = Read;

    fn next(&mut self) -> Option<Read> {
        let word = self.words.next()?;
        if self.data {
            return Some(Read::Prompt(word.clone()));
        }
        if word == "--" {
            self.data = true;
            return self.next();
        }
        let Some((name, inline)) = split_flag(word) else {
            return Some(Read::Prompt(word.clone()));
        };
        // `-p=hi`: Claude Code reads `-p`, then refuses `-=hi`; a switch given a value.
        let short_switch = name
            .get(..2)
            .and_then(claude_flag)
            .filter(|flag| flag.arity == Arity::Flag && name[2..].starts_with('='));
        let (name, inline) = match (short_switch, inline) {
            (Some(_), None) => {
                let value = OsString::from(&name[3..]);
                (name[..2].to_string(), Some(value))
            }
            (_, inline) => (name, inline),
        };
        let Some(flag) = claude_flag(&name) else {
            return Some(Read::Other {
                name,
                inline: inline.is_some(),
                word: word.clone(),
            });
        };
        let given = inline.is_some();
        let value = match (flag.arity, inline) {
            (_, Some(inline)) => Some(inline),
            (Arity::Flag, None) => None,
            (Arity::Value, None) => self.value(),
            (Arity::Optional, None) => match self.words.as_slice().first() {
                Some(next) if split_flag(next).is_none() => self.value(),
                _ => None,
            },
        };
        Some(Read::Claude {
            flag,
            name,
            value,
            inline: given,
            word: word.clone(),
        })
    }
}

/// What Claude Code itself would refuse in `args` (its command line), in words for a usage
/// error: a switch given a value (`--print=hello`, `--dangerously-skip-permissions=false`).
/// Claude Code says "unknown option"; another CLI's rung would read the value otherwise
/// (the prompt dropped, the bypass turned on).
pub fn refused_by_claude(args: &[OsString]) -> Option<String> {
    Reader::new(args).find_map(|read| match read {
        Read::Claude {
            flag,
            name,
            inline: true,
            word,
            ..
        } if flag.arity == Arity::Flag => Some(takes_no_value(&name, &word)),
        _ => None,
    })
}

fn takes_no_value(name: &str, word: &OsStr) -> String {
    format!(
        "{} — {name} takes no value, and Claude Code refuses it (\"unknown option\"); write {name} alone",
        word.to_string_lossy()
    )
}

/// The longest word Linux's `execve` takes (`MAX_ARG_STRLEN`, 32 pages, with its NUL): a
/// longer one fails the spawn with E2BIG.
#[cfg(target_os = "linux")]
const LONGEST_WORD: usize = 32 * 4096 - 1;
#[cfg(not(target_os = "linux"))]
const LONGEST_WORD: usize = usize::MAX;

/// Translates Claude Code's command line into the rung's CLI's (`dialect`; `None`: the words
/// go unchanged, after the backend's model flag). The rung's own model goes with the CLI's
/// model flag, unless the user named one of its vendor's.
pub fn translate(dialect: Option<&Dialect>, request: &Request) -> Result<Translation, Refusal> {
    let Some(dialect) = dialect else {
        let mut argv = Vec::new();
        if let (Some(flag), Some(model)) = (request.model_flag, request.model) {
            argv.extend(os(&[flag, model]));
        }
        argv.extend(request.args.iter().cloned());
        return Ok(Translation {
            argv,
            ..Translation::default()
        });
    };
    Translator::new(dialect, request).run()
}

struct Translator<'a> {
    dialect: &'a Dialect,
    request: &'a Request<'a>,
    mode: Mode,
    session: Session,
    /// Which of the user's words set the session (`-c`, `--resume`).
    session_word: String,
    user_model: Option<OsString>,
    flags: Vec<OsString>,
    prompt: Vec<OsString>,
    out: Translation,
}

impl<'a> Translator<'a> {
    fn new(dialect: &'a Dialect, request: &'a Request<'a>) -> Translator<'a> {
        let headless = Reader::new(request.args)
            .any(|read| matches!(read, Read::Claude { flag, .. } if flag.form == Form::Print));
        Translator {
            dialect,
            request,
            mode: if headless { Headless } else { Interactive },
            session: New,
            session_word: String::new(),
            user_model: None,
            flags: Vec::new(),
            prompt: Vec::new(),
            out: Translation::default(),
        }
    }

    fn refuse(&self, flag: impl Into<String>, why: impl Into<String>) -> Refusal {
        Refusal {
            label: self.dialect.label,
            flag: flag.into(),
            why: why.into(),
        }
    }

    fn said(&mut self, from: &str, to: &[OsString], why: &str) {
        let to = if to.is_empty() {
            "(left out)".to_string()
        } else {
            show(to)
        };
        let mut line = format!("{from} → {to}");
        if !why.is_empty() {
            let _ = write!(line, " ({why})");
        }
        self.out.rules.push(line);
    }

    fn run(mut self) -> Result<Translation, Refusal> {
        let mut reader = Reader::new(self.request.args);
        while let Some(read) = reader.next() {
            match read {
                Read::Prompt(word) => self.prompt.push(word),
                Read::Claude {
                    flag,
                    name,
                    inline: true,
                    word,
                    ..
                } if flag.arity == Arity::Flag => {
                    return Err(
                        self.refuse(word.to_string_lossy(), format!("{name} takes no value"))
                    );
                }
                Read::Claude {
                    flag, name, value, ..
                } => self.claude_form(&name, flag.form, value)?,
                Read::Other { name, inline, word } => {
                    // The CLI's own word, written by a user who knows it.
                    let Some(takes_value) = self.dialect.own_flag(&name) else {
                        return Err(self.refuse(name, "no flag of Claude Code's or its own"));
                    };
                    self.flags.push(word);
                    if takes_value
                        && !inline
                        && let Some(value) = reader.value()
                    {
                        self.flags.push(value);
                    }
                }
            }
        }
        self.finish()
    }

    fn claude_form(
        &mut self,
        name: &str,
        form: Form,
        value: Option<OsString>,
    ) -> Result<(), Refusal> {
        let label = self.dialect.label;
        match form {
            // Read before the loop; said with the start words.
            Form::Print => return Ok(()),
            Form::Continue => {
                self.session = Last;
                self.session_word = name.to_string();
                return Ok(());
            }
            Form::Resume => {
                if value.is_some() {
                    return Err(self.refuse(
                        format!("{name} ID"),
                        "a Claude Code session id never goes to another CLI",
                    ));
                }
                self.session = Pick;
                self.session_word = name.to_string();
                return Ok(());
            }
            Form::Model => {
                let Some(model) = value else {
                    return Err(self.refuse(name, "no model given"));
                };
                self.model(name, model);
                return Ok(());
            }
            _ => {}
        }
        let shown = match &value {
            Some(value) => format!("{name} {}", value.to_string_lossy()),
            None => name.to_string(),
        };
        if form == Form::OutputFormat && self.mode == Interactive {
            self.said(&shown, &[], "Claude Code reads it only with -p");
            return Ok(());
        }
        let Some(rule) = self.dialect.rule(form) else {
            return Err(self.refuse(name, ""));
        };
        let (words, why) = (rule.words, rule.why);
        let to: Vec<OsString> = match words {
            Words::Drop => Vec::new(),
            Words::Say(words) => {
                let mut to = os(words);
                to.extend(value);
                to
            }
            Words::Values(table) => {
                let given = value.as_ref().and_then(|v| v.to_str()).unwrap_or("");
                match table.iter().find(|(claude, _)| *claude == given) {
                    Some((_, words)) => os(words),
                    None => return Err(self.refuse(shown, format!("{label} has no such mode"))),
                }
            }
        };
        self.said(&shown, &to, why);
        self.flags.extend(to);
        Ok(())
    }

    fn model(&mut self, name: &str, model: OsString) {
        let label = self.dialect.label;
        let text = model.to_string_lossy().into_owned();
        let dropped = match vendor_of_model(&text) {
            Some(vendor) if vendor != self.request.vendor => {
                Some(format!("{name} {text} is {vendor}'s model"))
            }
            _ if self.dialect.model_needs_provider && !text.contains('/') => Some(format!(
                "{name} {text}: {label} names models provider/model"
            )),
            _ => None,
        };
        match dropped {
            Some(why) => {
                let runs = self
                    .request
                    .model
                    .map_or_else(|| "its own default".to_string(), str::to_string);
                self.out
                    .notices
                    .push(format!("{why}: dropped on {label}, which runs {runs}"));
                self.said(&format!("{name} {text}"), &[], "another vendor's model");
            }
            None => self.user_model = Some(model),
        }
    }

    fn finish(mut self) -> Result<Translation, Refusal> {
        let dialect = self.dialect;
        let Some(start) = dialect.start(self.mode, self.session) else {
            let what = match (self.mode, self.session) {
                (Headless, _) => format!("-p with {}", self.session_word),
                _ => self.session_word.clone(),
            };
            let why = match self.session {
                Pick => "it has no session picker to open",
                _ => "it cannot start that way",
            };
            return Err(self.refuse(what, why));
        };
        if self.session == Pick && !self.prompt.is_empty() {
            // `codex resume PROMPT` would read the prompt as a session's name.
            return Err(self.refuse(
                format!("{} with a prompt", self.session_word),
                "its picker takes no prompt",
            ));
        }
        if let Some(lacking) = self
            .flags
            .iter()
            .find(|word| start.lacking().any(|w| OsStr::new(w) == *word))
        {
            let lacking = lacking.to_string_lossy().into_owned();
            let why = format!(
                "`{} {}` has no {lacking}",
                dialect.command,
                start.words.join(" ")
            );
            return Err(self.refuse(lacking, why));
        }
        let start = os(start.words);
        let from = match (self.mode, self.session) {
            (Headless, New) => "-p".to_string(),
            (Headless, _) => format!("-p {}", self.session_word),
            (Interactive, _) => self.session_word.clone(),
        };
        if !from.is_empty() {
            let mut shown = start.clone();
            let why = match (self.mode, dialect.prompt[1]) {
                (Headless, Prompt::Flag(flag)) if start.is_empty() => {
                    // The prompt flag says it (gemini --prompt=PROMPT).
                    shown = vec![inline(flag, OsString::from("PROMPT"))];
                    "its headless run takes the prompt as the flag's value"
                }
                (Headless, _) => dialect.headless_why,
                (Interactive, _) => "",
            };
            self.said(&from, &shown, why);
            // The start is said first, as it comes first.
            if let Some(line) = self.out.rules.pop() {
                self.out.rules.insert(0, line);
            }
        }
        let mut argv = start;
        let model = match self.user_model.take() {
            Some(model) => Some(model),
            None => self.request.model.map(OsString::from),
        };
        if let Some(model) = model {
            let words = vec![OsString::from(dialect.model_flag), model];
            if self
                .request
                .model
                .is_some_and(|m| OsStr::new(m) != words[1])
            {
                self.said("--model", &words, "the user's, in place of the rung's");
            } else {
                self.said("the rung's model", &words, "");
            }
            argv.extend(words);
        }
        argv.append(&mut self.flags);
        let prompt = std::mem::take(&mut self.prompt);
        let index = usize::from(self.mode == Headless);
        match dialect.prompt[index] {
            Prompt::Words | Prompt::Joined if prompt.is_empty() => {}
            how @ (Prompt::Words | Prompt::Joined) => {
                argv.push("--".into());
                match how {
                    Prompt::Words => argv.extend(prompt),
                    _ => argv.extend(join(&prompt)),
                }
                self.said(
                    "PROMPT",
                    &os(&["--", "PROMPT"]),
                    "after its end of options: no word of it is a flag or a sub-command",
                );
            }
            Prompt::Flag(flag) => {
                if !prompt.is_empty() || self.mode == Headless {
                    argv.push(inline(flag, join(&prompt).unwrap_or_default()));
                    if self.mode == Interactive {
                        self.said(
                            "PROMPT",
                            &[inline(flag, OsString::from("PROMPT"))],
                            "its first prompt, one word: no word of it is a flag or a sub-command",
                        );
                    }
                }
            }
        }
        if let Some(long) = argv.iter().find(|word| word.len() > LONGEST_WORD) {
            // Joined, the prompt's words make one too long to start the CLI with.
            return Err(self.refuse(
                format!("a prompt of {} bytes in one argument", long.len()),
                format!("the system takes at most {LONGEST_WORD} bytes in one"),
            ));
        }
        self.out.argv = argv;
        Ok(self.out)
    }
}

/// `--flag=VALUE`, one word: a value that looks like a flag stays the flag's value.
fn inline(flag: &str, value: OsString) -> OsString {
    let mut word = OsString::from(format!("{flag}="));
    word.push(value);
    word
}

/// The prompt's words as one, joined by spaces (byte for byte).
fn join(words: &[OsString]) -> Option<OsString> {
    let (first, rest) = words.split_first()?;
    let mut joined = first.clone();
    for word in rest {
        joined.push(" ");
        joined.push(word);
    }
    Some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dialect: &Dialect, args: &[&str]) -> Result<Translation, Refusal> {
        run_with(dialect, args, None)
    }

    fn run_with(
        dialect: &Dialect,
        args: &[&str],
        model: Option<&str>,
    ) -> Result<Translation, Refusal> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let vendor = match dialect.command {
            "codex" => "openai",
            "gemini" => "google",
            _ => "opencode",
        };
        translate(
            Some(dialect),
            &Request {
                args: &args,
                model,
                model_flag: Some("--model"),
                vendor,
            },
        )
    }

    fn argv(dialect: &Dialect, args: &[&str]) -> Vec<String> {
        run(dialect, args)
            .unwrap_or_else(|r| panic!("{r}"))
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// Every form × every CLI: what the dialect says for each (`None`: passed over).
    #[test]
    fn every_form_in_every_dialect() {
        type Row = (
            &'static [&'static str],
            [Option<&'static [&'static str]>; 3],
        );
        let rows: &[Row] = &[
            (
                &["-p", "explain this bug"],
                [
                    Some(&["exec", "--", "explain this bug"]),
                    Some(&["--prompt=explain this bug"]),
                    Some(&["run", "--", "explain this bug"]),
                ],
            ),
            (
                &["--print", "a", "b"],
                [
                    Some(&["exec", "--", "a b"]),
                    Some(&["--prompt=a b"]),
                    Some(&["run", "--", "a", "b"]),
                ],
            ),
            (
                &["-c"],
                [
                    Some(&["resume", "--last"]),
                    Some(&["--resume", "latest"]),
                    Some(&["-c"]),
                ],
            ),
            (
                &["-p", "--continue", "go on"],
                [
                    Some(&["exec", "resume", "--last", "--", "go on"]),
                    Some(&["--resume", "latest", "--prompt=go on"]),
                    Some(&["run", "-c", "--", "go on"]),
                ],
            ),
            (&["--resume"], [Some(&["resume"]), None, None]),
            (
                &["-p", "-c", "--permission-mode", "plan", "go on"],
                [
                    None,
                    Some(&[
                        "--resume",
                        "latest",
                        "--approval-mode",
                        "plan",
                        "--prompt=go on",
                    ]),
                    Some(&["run", "-c", "--agent", "plan", "--", "go on"]),
                ],
            ),
            (&["fix it", "--resume"], [None, None, None]),
            (&["--resume", "0b7c-session"], [None, None, None]),
            (
                &["-p", "hi", "--model", "gpt-5.1"],
                [
                    Some(&["exec", "-m", "gpt-5.1", "--", "hi"]),
                    Some(&["--prompt=hi"]),
                    Some(&["run", "--", "hi"]),
                ],
            ),
            (
                &["-p", "hi", "--model", "claude-sonnet-5"],
                [
                    Some(&["exec", "--", "hi"]),
                    Some(&["--prompt=hi"]),
                    Some(&["run", "--", "hi"]),
                ],
            ),
            (
                &["-p", "hi", "--model=gemini-3-pro"],
                [
                    Some(&["exec", "--", "hi"]),
                    Some(&["-m", "gemini-3-pro", "--prompt=hi"]),
                    Some(&["run", "--", "hi"]),
                ],
            ),
            (
                &["-p", "hi", "--model", "mock/gpt-x"],
                [
                    Some(&["exec", "-m", "mock/gpt-x", "--", "hi"]),
                    Some(&["-m", "mock/gpt-x", "--prompt=hi"]),
                    Some(&["run", "-m", "mock/gpt-x", "--", "hi"]),
                ],
            ),
            (
                &["-p", "hi", "--output-format", "json"],
                [
                    Some(&["exec", "--json", "--", "hi"]),
                    Some(&["-o", "json", "--prompt=hi"]),
                    Some(&["run", "--format", "json", "--", "hi"]),
                ],
            ),
            (
                &["-p", "hi", "--output-format", "stream-json", "--verbose"],
                [
                    Some(&["exec", "--json", "--", "hi"]),
                    Some(&["-o", "stream-json", "--prompt=hi"]),
                    Some(&["run", "--format", "json", "--", "hi"]),
                ],
            ),
            (
                &["--dangerously-skip-permissions", "fix it"],
                [
                    Some(&["--dangerously-bypass-approvals-and-sandbox", "--", "fix it"]),
                    Some(&["--yolo", "--prompt-interactive=fix it"]),
                    Some(&["--auto", "--prompt=fix it"]),
                ],
            ),
            (
                &["-p", "hi", "--dangerously-skip-permissions"],
                [
                    Some(&[
                        "exec",
                        "--dangerously-bypass-approvals-and-sandbox",
                        "--",
                        "hi",
                    ]),
                    Some(&["--yolo", "--prompt=hi"]),
                    Some(&["run", "--auto", "--", "hi"]),
                ],
            ),
            // After `--` every word is the prompt: a flag's name is only text.
            (
                &["-p", "--", "--dangerously-skip-permissions"],
                [
                    Some(&["exec", "--", "--dangerously-skip-permissions"]),
                    Some(&["--prompt=--dangerously-skip-permissions"]),
                    Some(&["run", "--", "--dangerously-skip-permissions"]),
                ],
            ),
            (
                &["-p", "--", "-c", "--model", "x"],
                [
                    Some(&["exec", "--", "-c --model x"]),
                    Some(&["--prompt=-c --model x"]),
                    Some(&["run", "--", "-c", "--model", "x"]),
                ],
            ),
            // A word that names one of the CLI's sub-commands is a prompt too.
            (
                &["logout"],
                [
                    Some(&["--", "logout"]),
                    Some(&["--prompt-interactive=logout"]),
                    Some(&["--prompt=logout"]),
                ],
            ),
            (
                &["-p", "mcp"],
                [
                    Some(&["exec", "--", "mcp"]),
                    Some(&["--prompt=mcp"]),
                    Some(&["run", "--", "mcp"]),
                ],
            ),
            (
                &["--permission-mode", "plan"],
                [
                    Some(&["--sandbox", "read-only"]),
                    Some(&["--approval-mode", "plan"]),
                    Some(&["--agent", "plan"]),
                ],
            ),
            // Codex has no mode that edits without running commands unasked.
            (
                &["--permission-mode", "acceptEdits"],
                [None, Some(&["--approval-mode", "auto_edit"]), None],
            ),
            (
                &["--add-dir", "../lib"],
                [
                    Some(&["--add-dir", "../lib"]),
                    Some(&["--include-directories", "../lib"]),
                    None,
                ],
            ),
            (
                &["fix the tests"],
                [
                    Some(&["--", "fix the tests"]),
                    Some(&["--prompt-interactive=fix the tests"]),
                    Some(&["--prompt=fix the tests"]),
                ],
            ),
            (&[], [Some(&[]), Some(&[]), Some(&[])]),
            (
                &["-p"],
                [Some(&["exec"]), Some(&["--prompt="]), Some(&["run"])],
            ),
            (
                &["--output-format", "json"],
                [Some(&[]), Some(&[]), Some(&[])],
            ),
            (
                &["--permission-mode", "bypassPermissions"],
                [
                    Some(&["--dangerously-bypass-approvals-and-sandbox"]),
                    Some(&["--yolo"]),
                    Some(&["--auto"]),
                ],
            ),
            (&["--permission-mode", "dontAsk"], [None, None, None]),
            (
                &["-p", "hi", "--debug", "api", "--fallback-model", "sonnet"],
                [
                    Some(&["exec", "--", "hi"]),
                    Some(&["--prompt=hi"]),
                    Some(&["run", "--", "hi"]),
                ],
            ),
            (&["--system-prompt", "be brief"], [None, None, None]),
            // A switch given a value is a form Claude Code refuses: never translated.
            (&["--print=hello"], [None, None, None]),
            (&["-p=hello"], [None, None, None]),
            (
                &["-p", "hi", "--dangerously-skip-permissions=false"],
                [None, None, None],
            ),
            (
                &["-p", "hi", "--json"],
                [Some(&["exec", "--json", "--", "hi"]), None, None],
            ),
            (&["--json"], [None, None, None]),
            (&["--bogus-flag"], [None, None, None]),
            (
                &["-p", "hi", "--skip-git-repo-check"],
                [
                    Some(&["exec", "--skip-git-repo-check", "--", "hi"]),
                    None,
                    None,
                ],
            ),
            // Codex's `-i` takes every word after it: the prompt after `--` is not one.
            (
                &["-p", "-i", "shot.png", "what is this"],
                [
                    Some(&["exec", "-i", "shot.png", "--", "what is this"]),
                    Some(&["-i", "shot.png", "--prompt=what is this"]),
                    Some(&["run", "-i", "--", "shot.png", "what is this"]),
                ],
            ),
        ];
        let dialects = [&codex::DIALECT, &gemini::DIALECT, &opencode::DIALECT];
        for (args, expected) in rows {
            for (dialect, expected) in dialects.iter().zip(expected) {
                let got = run(dialect, args);
                match expected {
                    Some(words) => {
                        let got = got.unwrap_or_else(|r| {
                            panic!("{} {args:?}: refused: {r}", dialect.command)
                        });
                        let got: Vec<String> = got
                            .argv
                            .iter()
                            .map(|a| a.to_string_lossy().into_owned())
                            .collect();
                        assert_eq!(got, *words, "{} {args:?}", dialect.command);
                    }
                    None => assert!(
                        got.is_err(),
                        "{} {args:?}: should be passed over, got {got:?}",
                        dialect.command
                    ),
                }
            }
        }
    }

    #[test]
    fn the_rungs_own_model_goes_with_the_clis_model_flag_after_the_start() {
        let out = run_with(&codex::DIALECT, &["-p", "hi"], Some("gpt-5-codex")).unwrap();
        assert_eq!(out.argv, os(&["exec", "-m", "gpt-5-codex", "--", "hi"]));
        assert!(
            out.rules.iter().any(|r| r.starts_with("-p → exec")),
            "{out:?}"
        );
    }

    #[test]
    fn another_vendors_model_is_dropped_with_a_notice_and_the_rungs_runs() {
        let out = run_with(
            &codex::DIALECT,
            &["--model", "opus", "-p", "hi"],
            Some("gpt-5"),
        )
        .unwrap();
        assert_eq!(out.argv, os(&["exec", "-m", "gpt-5", "--", "hi"]));
        assert_eq!(
            out.notices,
            ["--model opus is anthropic's model: dropped on Codex, which runs gpt-5"]
        );
    }

    #[test]
    fn a_model_of_the_rungs_vendor_replaces_the_rungs_own() {
        let out = run_with(
            &codex::DIALECT,
            &["-p", "hi", "--model", "o3"],
            Some("gpt-5"),
        )
        .unwrap();
        assert_eq!(out.argv, os(&["exec", "-m", "o3", "--", "hi"]));
    }

    #[test]
    fn a_claude_session_id_never_goes_to_another_cli() {
        for dialect in DIALECTS {
            let refusal = run(dialect, &["-r", "4f1d2c"]).unwrap_err();
            assert_eq!(refusal.flag, "-r ID");
            assert!(refusal.to_string().ends_with(": passed over"), "{refusal}");
        }
    }

    #[test]
    fn an_untranslatable_flag_is_named() {
        let refusal = run(&codex::DIALECT, &["-p", "hi", "--foo"]).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "Codex cannot take --foo (no flag of Claude Code's or its own): passed over"
        );
    }

    #[test]
    fn the_clis_own_flags_keep_their_values() {
        assert_eq!(
            argv(&codex::DIALECT, &["-p", "--sandbox", "read-only", "hi"]),
            ["exec", "--sandbox", "read-only", "--", "hi"]
        );
    }

    #[test]
    fn without_a_dialect_the_words_go_unchanged_after_the_model_flag() {
        let args: Vec<OsString> = os(&["-p", "hi", "--foo"]);
        let out = translate(
            of(Family::Claude),
            &Request {
                args: &args,
                model: Some("claude-sonnet-5"),
                model_flag: Some("--model"),
                vendor: "anthropic",
            },
        )
        .unwrap();
        assert_eq!(
            out.argv,
            os(&["--model", "claude-sonnet-5", "-p", "hi", "--foo"])
        );
        assert!(out.rules.is_empty());
        assert!(of(Family::Other).is_none());
    }

    #[test]
    fn words_that_are_not_utf8_keep_their_bytes() {
        use std::os::unix::ffi::OsStrExt as _;
        let args = vec![
            OsString::from("-p"),
            OsStr::from_bytes(b"caf\xe9").to_os_string(),
        ];
        let out = translate(
            Some(&codex::DIALECT),
            &Request {
                args: &args,
                model: None,
                model_flag: None,
                vendor: "openai",
            },
        )
        .unwrap();
        assert_eq!(out.argv[2].as_bytes(), b"caf\xe9");
    }

    /// The tables name only flags the CLIs have: each dialect's words for a form are its
    /// own flags, or start words.
    #[test]
    fn every_word_a_dialect_says_is_one_of_its_clis_flags() {
        for dialect in DIALECTS {
            for rule in dialect.rules {
                let words: Vec<&str> = match rule.words {
                    Words::Say(words) => words.to_vec(),
                    Words::Values(table) => table.iter().flat_map(|(_, w)| w.to_vec()).collect(),
                    Words::Drop => Vec::new(),
                };
                for word in words.iter().filter(|w| w.starts_with('-')) {
                    assert!(
                        dialect.own_flag(word).is_some(),
                        "{}: {word} is not in its flags",
                        dialect.command
                    );
                }
            }
            assert!(dialect.own_flag(dialect.model_flag) == Some(true));
        }
    }

    /// Each CLI's `--help` at the version its table names, as captured from the npm
    /// registry's release (`tests/fixtures/help/`).
    fn help_of(command: &str) -> &'static str {
        match command {
            "claude" => include_str!("../../tests/fixtures/help/claude-2.1.332.txt"),
            "codex" => include_str!("../../tests/fixtures/help/codex-0.171.0.txt"),
            "gemini" => include_str!("../../tests/fixtures/help/gemini-0.61.0.txt"),
            "opencode" => include_str!("../../tests/fixtures/help/opencode-1.18.33.txt"),
            _ => panic!("no help captured for {command}"),
        }
    }

    /// Every flag a help text defines, with what follows it: `Some(true)` a value
    /// (`<X>`, yargs' `[string]`), `None` an optional one (`[X]`), `Some(false)` none.
    fn defined_flags(help: &str) -> Vec<(String, Option<bool>)> {
        let lines: Vec<&str> = help.lines().collect();
        let mut flags = Vec::new();
        for (at, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            // A definition is indented a little; a description's wrapped line, far.
            let indent = line.len() - trimmed.len();
            if !trimmed.starts_with('-') || indent == 0 || indent > 8 {
                continue;
            }
            let definition = trimmed.split("  ").next().unwrap_or(trimmed);
            let tokens: Vec<&str> = definition
                .split([' ', ','])
                .filter(|t| !t.is_empty())
                .collect();
            let typed = |kinds: &[&str]| {
                // A type wrapped onto the next line, unless that line is the next flag.
                let next = lines
                    .get(at + 1)
                    .copied()
                    .filter(|l| !l.trim_start().starts_with('-'))
                    .unwrap_or("");
                kinds.iter().any(|k| line.contains(k) || next.contains(k))
            };
            for (i, token) in tokens.iter().enumerate() {
                if !token.starts_with('-') {
                    continue;
                }
                let after = tokens[i + 1..].iter().find(|t| !t.starts_with('-'));
                let arity = match after {
                    Some(t) if t.starts_with('<') => Some(true),
                    Some(t) if t.starts_with('[') => None,
                    _ => Some(typed(&["[string]", "[array]", "[number]"])),
                };
                let name = token.split('=').next().unwrap_or(token);
                flags.push((name.to_string(), arity));
            }
        }
        flags
    }

    /// The tables against the CLIs' own `--help`: every flag a dialect names is one its CLI
    /// defines, taking a value exactly when the help says it does; and every flag Claude
    /// Code's help defines is in [`CLAUDE_FLAGS`] with its arity, so its values are never
    /// read as a prompt.
    #[test]
    fn the_tables_match_each_clis_help_at_the_version_named() {
        for dialect in DIALECTS {
            let defined = defined_flags(help_of(dialect.command));
            for (flag, takes_value) in dialect.flags {
                let found = defined.iter().find(|(name, _)| name == flag);
                let Some((_, arity)) = found else {
                    panic!(
                        "{} {}: no {flag} in its --help",
                        dialect.command, dialect.checked
                    );
                };
                assert_eq!(
                    *arity,
                    Some(*takes_value),
                    "{} {}: {flag} takes a value?",
                    dialect.command,
                    dialect.checked
                );
            }
        }
        // Where a help is captured per sub-command, each start takes exactly the flags its
        // sub-command's help defines, less those it says it lacks.
        for dialect in DIALECTS {
            let help = help_of(dialect.command);
            for start in dialect.starts {
                let mut heading = vec!["###", dialect.command];
                heading.extend(start.words.iter().take_while(|w| !w.starts_with('-')));
                heading.push("--help");
                let heading = heading.join(" ");
                let Some(section) = help.split(&format!("{heading}\n")).nth(1) else {
                    assert!(!help.contains("### "), "no {heading} captured");
                    continue;
                };
                let section = section.split("### ").next().unwrap_or(section);
                let defined = defined_flags(section);
                for word in start.lacking() {
                    assert!(
                        !defined.iter().any(|(name, _)| name == word),
                        "{heading}: defines {word}"
                    );
                }
                for (flag, _) in dialect.flags {
                    assert!(
                        start.lacking().any(|w| w == *flag)
                            || defined.iter().any(|(name, _)| name == flag),
                        "{heading}: has no {flag}, and `without` does not say so"
                    );
                }
            }
        }
        let defined = defined_flags(help_of("claude"));
        for (name, arity) in &defined {
            let flag = claude_flag(name).unwrap_or_else(|| panic!("Claude Code's {name}"));
            let expected = match flag.arity {
                Arity::Flag => Some(false),
                Arity::Value => Some(true),
                Arity::Optional => None,
            };
            assert_eq!(*arity, expected, "Claude Code's {name} takes a value?");
        }
        for flag in CLAUDE_FLAGS {
            for name in flag.names {
                assert!(
                    defined.iter().any(|(defined, _)| defined == name),
                    "Claude Code 2.1.332 has no {name}"
                );
            }
        }
    }

    #[test]
    fn a_switch_given_a_value_is_what_claude_code_refuses() {
        let refused = |args: &[&str]| refused_by_claude(&os(args));
        for args in [
            &["--print=hello"][..],
            &["-p=hello"],
            &["-p", "hi", "--dangerously-skip-permissions=false"],
            &["--verbose=1", "-p", "hi"],
            &["-c=yes"],
        ] {
            assert!(refused(args).is_some(), "{args:?}");
        }
        assert_eq!(
            refused(&["--print=hello"]).unwrap(),
            "--print=hello — --print takes no value, and Claude Code refuses it (\"unknown option\"); write --print alone"
        );
        // A value of a flag that takes one, a prompt, and anything after `--` are words.
        for args in [
            &["-p", "--append-system-prompt", "--print=x", "hi"][..],
            &["-p", "--", "--print=hello"],
            &["--model=opus", "--resume=4f1d", "-p", "--verbose"],
        ] {
            assert_eq!(refused(args), None, "{args:?}");
        }
    }

    #[test]
    fn a_prompt_too_long_for_one_argument_passes_the_rung_over_before_it_runs() {
        let words: Vec<String> = (0..20_000).map(|i| format!("w{i:05}")).collect();
        let mut args = vec!["-p"];
        args.extend(words.iter().map(String::as_str));
        // Joined for Codex and Gemini CLI: one word over the limit.
        for dialect in [&codex::DIALECT, &gemini::DIALECT] {
            let refusal = run(dialect, &args).unwrap_err();
            assert!(
                refusal.flag.starts_with("a prompt of 1")
                    && refusal.flag.ends_with(" bytes in one argument"),
                "{}: {refusal}",
                dialect.command
            );
        }
        // opencode run takes the words one by one.
        assert_eq!(
            run(&opencode::DIALECT, &args).unwrap().argv.len(),
            2 + words.len()
        );
    }

    #[test]
    fn vendors_of_models() {
        assert_eq!(vendor_of_model("claude-opus-5"), Some("anthropic"));
        assert_eq!(vendor_of_model("sonnet[1m]"), Some("anthropic"));
        assert_eq!(vendor_of_model("gpt-5-codex"), Some("openai"));
        assert_eq!(vendor_of_model("gemini-3-pro"), Some("google"));
        assert_eq!(vendor_of_model("anthropic/claude-sonnet-5"), None);
        assert_eq!(vendor_of_model("my-model"), None);
    }
}
