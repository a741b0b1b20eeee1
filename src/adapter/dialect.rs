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
//! Each CLI's table is its adapter's ([`super::codex::DIALECT`], [`super::gemini::DIALECT`],
//! [`super::opencode::DIALECT`]), beside the rest of what agent knows of that CLI; [`super::dialects`] lists
//! them, and the tests here run every table through the engine and against each CLI's
//! captured `--help`.

use std::ffi::{OsStr, OsString};
use std::fmt::{self, Write as _};

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
    /// `--session-id UUID`: a new session under an id the caller chose (agent names its
    /// runs' sessions so, where the CLI lets it).
    SessionId,
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
    claude(&["--session-id"], Arity::Value, Form::SessionId),
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
    /// One of the CLI's own sessions, by the id it recorded: agent's resume of a session that
    /// ran out of its window (never the user's `--resume ID`, which names a Claude Code
    /// session). Its start's words hold [`SESSION_ID`] where the id goes.
    ById,
}

/// Where a start for [`Session::ById`] puts the session's id.
pub const SESSION_ID: &str = "{session id}";

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
use Session::{ById, Last, New, Pick};

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
    /// The backend's own words for its CLI, `[interactive, headless]`: put after the
    /// translated flags (before the prompt's end of options), for the form that runs only.
    pub own: [&'a [String]; 2],
    /// The id of the CLI's own session agent resumes (its words then carry no session of
    /// their own): said in the CLI's words for a session by id.
    pub resume: Option<&'a str>,
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

    /// Its words that resume its session `id` (a plain name), headless or with a screen,
    /// as they begin its command line; `None` when it has no start for a session by id.
    pub fn resume_words(&self, id: &str, headless: bool) -> Option<Vec<String>> {
        let mode = if headless { Headless } else { Interactive };
        let start = self.start(mode, ById)?;
        Some(
            start
                .words
                .iter()
                .map(|word| if *word == SESSION_ID { id } else { word }.to_string())
                .collect(),
        )
    }

    fn start(&self, mode: Mode, session: Session) -> Option<&Start> {
        self.starts
            .iter()
            .find(|s| s.mode == mode && s.session == session)
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

/// Whether `args` run Claude Code headless (`-p` / `--print`, as a flag of its own: never a
/// flag's value nor a word after `--`).
pub fn runs_headless(args: &[OsString]) -> bool {
    Reader::new(args)
        .any(|read| matches!(read, Read::Claude { flag, .. } if flag.form == Form::Print))
}

/// Whether `args` (Claude Code's command line) ask for a headless run's result as one JSON
/// document: `-p` with `--output-format json` (the last one given wins, as in Claude Code).
pub fn asks_json_result(args: &[OsString]) -> bool {
    let format = Reader::new(args)
        .filter_map(|read| match read {
            Read::Claude { flag, value, .. } if flag.form == Form::OutputFormat => value,
            _ => None,
        })
        .last();
    runs_headless(args) && format.is_some_and(|value| value == "json")
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

/// Whether `args` run Claude Code headless with no prompt in them, nor anything that
/// stands for one (`--resume` a session, `--sdk-url`): Claude Code then reads its prompt
/// from stdin, and refuses to run without one.
pub fn headless_without_prompt(args: &[OsString]) -> bool {
    let mut headless = false;
    for read in Reader::new(args) {
        match read {
            Read::Prompt(_) => return false,
            Read::Claude { flag, .. } if flag.form == Form::Print => headless = true,
            Read::Claude { flag, .. } if flag.form == Form::Resume => return false,
            Read::Claude { name, .. } | Read::Other { name, .. } if name == "--sdk-url" => {
                return false;
            }
            Read::Claude { .. } | Read::Other { .. } => {}
        }
    }
    headless
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
        if let Some(id) = request.resume {
            // Claude Code's own words: a CLI without a dialect takes them unchanged.
            argv.extend(os(&[
                "--resume",
                plain_session_id(id).ok_or_else(|| bad_session_id("Claude Code", id))?,
            ]));
        }
        if let (Some(flag), Some(model)) = (request.model_flag, request.model) {
            argv.extend(os(&[flag, model]));
        }
        let own = request.own[usize::from(runs_headless(request.args))];
        argv.extend(own.iter().map(OsString::from));
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
        let headless = runs_headless(request.args);
        Translator {
            dialect,
            request,
            mode: if headless { Headless } else { Interactive },
            session: if request.resume.is_some() { ById } else { New },
            session_word: match request.resume {
                Some(_) => RESUMED.to_string(),
                None => String::new(),
            },
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
            Form::Continue | Form::Resume if self.session == ById => {
                return Err(self.refuse(name, "agent resumes a session of its own here"));
            }
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
                ById => "agent knows no way to resume one of its sessions by id",
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
        let start = match self.request.resume {
            Some(id) => {
                let id = plain_session_id(id).ok_or_else(|| bad_session_id(dialect.label, id))?;
                start
                    .words
                    .iter()
                    .map(|word| OsString::from(if *word == SESSION_ID { id } else { word }))
                    .collect()
            }
            None => os(start.words),
        };
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
        let index = usize::from(self.mode == Headless);
        argv.extend(self.request.own[index].iter().map(OsString::from));
        let prompt = std::mem::take(&mut self.prompt);
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

/// How `--dry-run` names agent's resume of a session by id.
const RESUMED: &str = "agent's resume of the session";

/// The most of a session id agent puts on a command line.
const SESSION_ID_CHARS: usize = 128;

/// `id` when it is a plain name a CLI could have given a session (`0199a…`, `ses_…`): the
/// id comes from the CLI's own output or record, which agent does not trust — it never
/// starts with `-` (a flag) and holds nothing a shell or a CLI would read otherwise.
pub fn plain_session_id(id: &str) -> Option<&str> {
    // A number or `latest` is a CLI's selector (Gemini CLI's `--resume 5`), not an id.
    let selector = id.bytes().all(|b| b.is_ascii_digit()) || id == "latest";
    let plain = !id.is_empty()
        && !selector
        && id.len() <= SESSION_ID_CHARS
        && !id.starts_with('-')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    plain.then_some(id)
}

fn bad_session_id(label: &'static str, id: &str) -> Refusal {
    Refusal {
        label,
        flag: RESUMED.to_string(),
        why: format!(
            "its id {:?} is not a plain name",
            crate::text::printable(&id.chars().take(40).collect::<String>())
        ),
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

pub mod session_words;

#[cfg(test)]
mod tests;
