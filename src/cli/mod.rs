//! The command line: agent's own flags (a fixed set of long options), and the split that
//! leaves every other word, in order, for the CLI it launches (translated there by
//! `adapter::dialect`).

use std::ffi::OsString;
use std::path::PathBuf;

pub mod accounts;
pub mod budget;
pub mod dashboard;
pub mod mode;
pub mod relay;
pub mod synopsis;
pub mod usage;
pub mod version;
pub mod watchdog;

pub use crate::term::ColorWhen;
use clap::{CommandFactory, FromArgMatches as _, Parser};
pub use mode::Mode;

const AFTER_HELP: &str = "\
Every argument that is not one of agent's options is Claude Code's command line and passes to
the chosen CLI in order: unchanged to Claude Code, in its own words to Codex, Gemini CLI and
opencode (-p → `codex exec`, `gemini --prompt=…`, `opencode run`; -c, --model, --output-format and
the permission flags likewise); a rung whose CLI cannot take a flag is passed over, and a CLI
that refuses the arguments stops the fallback. With -p and stdout not a terminal, the CLI's
stdout is held until it ends or runs fastfail_seconds: a rung that failed fast shows its words
on stderr, never above the next one's answer; --output-format json is Claude Code's result
document (`jq .result`) whichever CLI answered. `agent --dry-run ARGS` shows the words and the
rules; `translate = false` under [backends.NAME] passes them unchanged. The first `--` ends
agent's options: before any of the CLI's words it is agent's (everything after it passes
through); after one (`agent -p -- \"$TEXT\"`) it is the CLI's own, kept, and every word after
it is the prompt. On another CLI's rung the prompt goes after that CLI's end of options
(`codex exec -- PROMPT`, `gemini --prompt=PROMPT`), so no prompt word becomes its flag or
sub-command. A form Claude Code refuses (`--print=hello`: a switch given a value) is a usage
error. In a launch, `--json` also passes through (codex uses it); it is agent's only next to a
report flag.

Examples:
  agent                          auto-pick the best live rung and run it
  agent -p \"explain this bug\"    Claude Code's words; `codex exec …` on a Codex rung
  agent --use gemini             force a backend: no probes, no fallback
  agent --use claude:sonnet      force backend and model (aliases map to full ids)
  agent --dry-run -p hi          show what would run, and why; run nothing
  agent --wait=2h -p \"nightly\"   every rung parked? wait up to 2h for the first reset, then run
  agent --on-limit=continue -p hi  window out mid-session? go on in the next CLI, with a brief
  agent --list                   the backends, their sessions, the rung table
  agent -c                       continue this folder's task where it lives, or back up
  agent --tasks                  this folder's tasks that crossed CLIs, and where each lives
  agent --status                 check every rung for real (in parallel) and report
  agent --check-fallback         exit 1 unless every provider-independent rung is proved
  agent --budget status          today's calls and tokens against the daily caps
  agent --budget set --calls 500 --tokens 500000
  agent --usage --by day         calls, tokens, cost and cache efficiency per day
  agent --dashboard              a local page: health, windows, budget, usage (prints its URL)
  agent --doctor                 check config, binaries, credentials, state; change nothing
  agent --unpark 1               forget the window that parks rung 1 (you know it reset)
  agent --accounts add work --backend claude --kind api_key < key.txt
  agent --accounts add personal --backend claude --kind login --dir ~/.claude-personal
  agent --install-watchdog --every 2h   schedule --check-fallback (launchd/systemd/cron)
  agent --relay init             make the relay token; then `agent --relay serve`
  agent --relay tokens add alice --daily-calls 200   a token of her own, with a cap
  agent --install-statusline     show windows and fallbacks in Claude Code's status line
  agent --config-template > ~/.config/agent/config.toml   every key, at its default

Exit codes: the launched CLI's own; 1 --check-fallback DEGRADED or DOWN, --doctor found a
problem; 2 usage or configuration error; 69 no rung available; 75 refused by the budget, or
every rung that could run is parked until a known reset (`--wait` waits for it instead); 130
Ctrl-C during the wait.
`--outcome FILE` (or AGENT_OUTCOME) records how a launch ended, whichever way, for scripts:
{\"exit\": N, \"rungs\": [{\"rung\", \"cli\", \"label\", \"model\", \"session\", \"seconds\", \"code\",
\"ended\", \"window\", \"reset\"}], \"handoff\": PATH|null, \"waited_seconds\": N}.
Files: config ~/.config/agent/config.toml ($AGENT_CONFIG, $XDG_CONFIG_HOME);
state ~/.local/state/agent ($AGENT_STATE_DIR, $XDG_STATE_HOME).

The guide is agent's README.md and the reference its docs/, a page per topic, both at
https://github.com/agent-cli/agent (a release archive holds the README only):
docs/command-line.md, docs/rungs.md, docs/configuration.md, docs/logins.md (logins and
windows), docs/sessions.md (hand-offs), docs/accounts.md, docs/watchdog.md, docs/usage.md
(cost and budget), docs/dashboard.md, docs/relay.md, docs/team-relay.md, docs/security.md,
docs/troubleshooting.md, docs/performance.md, docs/on-ramp.md, docs/development.md.";

/// Flags that take the rest of the command line as their own sub-commands.
const MANAGEMENT: &[&str] = &[
    "accounts",
    "budget",
    "dashboard",
    "install-watchdog",
    "relay",
    "uninstall-watchdog",
    "usage",
];

/// agent's options. Parsed only from the words the split kept for agent.
#[derive(Debug, Parser)]
#[command(
    name = "agent",
    version,
    long_version = version::long(),
    about = "Run the AI coding CLI that really answers right now; fall back, announced, when it does not",
    override_usage = "agent [AGENT OPTIONS] [--] [ARGS FOR THE CLI]...",
    after_help = AFTER_HELP,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// Force a backend (and model): no probes, no fallback; agent execs the CLI in its place
    #[arg(long = "use", value_name = "BACKEND[:MODEL]")]
    pub use_backend: Option<String>,

    /// Choose a rung (probing as a launch would) and print the command, environment names
    /// and the reason; run nothing
    #[arg(long)]
    pub dry_run: bool,

    /// When every rung that could run is parked until a known reset, wait for the earliest
    /// (at most MAX: 90s, 45m, 6h, 2d; up to 7d), with a countdown, then run once — instead
    /// of exiting 75. AGENT_WAIT=MAX does the same for every launch
    #[arg(
        long,
        value_name = "MAX",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "6h"
    )]
    pub wait: Option<String>,

    /// What to do when a session runs out of its usage window mid-work, once its CLI has
    /// exited: `continue` on the next open rung with a brief of the session, `resume` the
    /// same session after the reset (waiting as --wait does), `stop` with the CLI's exit code,
    /// or `ask` which. Default: on_limit in the config, else ask on a terminal and stop off
    /// one. AGENT_ON_LIMIT=WHEN does the same for every launch
    #[arg(
        long,
        value_name = "WHEN",
        value_parser = ["ask", "continue", "resume", "stop"],
        hide_possible_values = true
    )]
    pub on_limit: Option<String>,

    /// When the launch ends, however it ends, write one JSON object to FILE (0600, replaced
    /// atomically) for scripts: agent's exit code, each rung started and how its run ended
    /// (done, fast_fail, limit, error, signal, usage_error), the hand-off brief, the seconds
    /// waited. AGENT_OUTCOME=FILE does the same for every launch
    #[arg(long, value_name = "FILE")]
    pub outcome: Option<PathBuf>,

    /// Print the backends, what agent can do with their sessions, and the rung table
    #[arg(long)]
    pub list: bool,

    /// This folder's tasks that crossed CLIs, newest first: each session that carried one
    /// (rung, session id, how it ended, the brief it was given) and what `agent -c` here
    /// does — continue where the task lives, or take it back up to a rung whose window reset
    #[arg(long)]
    pub tasks: bool,

    /// Check every rung for real, in parallel (ignoring cached health): an API probe, or
    /// for a subscription login the CLI's own headless check, with the model and home the
    /// launch uses, once per login and model (reused for self_check_cache_seconds). One row
    /// per rung, its state said once, fitted to COLUMNS or the terminal's width
    #[arg(long)]
    pub status: bool,

    /// Check every provider-independent rung as --status does; exit 1 unless every one is
    /// proved: one failed, parked or not proved is DEGRADED, none answering is DOWN. For
    /// the watchdog
    #[arg(long)]
    pub check_fallback: bool,

    /// The daily call and token budget (a cap of 0 is unlimited)
    #[arg(
        long,
        value_name = "COMMAND",
        num_args = 1..,
        allow_hyphen_values = true
    )]
    pub budget: Option<Vec<String>>,

    /// The credential relay: keys stay on this host, clients hold a relay token (`init` makes
    /// it, `tokens` one per person with daily caps, `install` a systemd user service or
    /// launchd agent)
    #[arg(long, value_name = "COMMAND", num_args = 1.., allow_hyphen_values = true)]
    pub relay: Option<Vec<String>>,

    /// A local page of health, windows, budget and usage. Prints a one-time URL that sets
    /// the access cookie (`--open` opens it in the browser); the relay's token works too
    #[arg(long, value_name = "OPTIONS", num_args = 0.., allow_hyphen_values = true)]
    pub dashboard: Option<Vec<String>>,

    /// Calls, tokens, cost and cache efficiency from agent's ledger and the CLIs' own
    /// records, each call once; `--reconcile` checks the CLIs' records against the relay's
    #[arg(
        long,
        value_name = "OPTIONS",
        num_args = 0..,
        allow_hyphen_values = true
    )]
    pub usage: Option<Vec<String>>,

    /// Credential pools (`add` reads the secret from stdin, checks it and stores it 0600)
    #[arg(long, value_name = "COMMAND", num_args = 1.., allow_hyphen_values = true)]
    pub accounts: Option<Vec<String>>,

    /// Check the setup — config, state directory, binaries (with --version), credentials
    /// (present or not, never shown), budget, watchdog — and whether a launch here could run
    /// any rung; say how to fix each problem (for a cron job, the PATH to add); changes
    /// nothing. Exit 1 when a problem is found
    #[arg(long)]
    pub doctor: bool,

    /// Forget what parks a login or a rung — its usage windows past the mark, a quota
    /// cooldown — for when you know better (the window reset early, you bought more), and
    /// say what was forgotten. NAME: a rung's number, a backend, a login account
    #[arg(long, value_name = "NAME")]
    pub unpark: Option<String>,

    /// Schedule --check-fallback (launchd, systemd user timer, or cron). The check runs in
    /// DIR (default: the current directory), where each CLI must trust the folder
    #[arg(long, value_name = "OPTIONS", num_args = 0.., allow_hyphen_values = true)]
    pub install_watchdog: Option<Vec<String>>,

    /// Remove the scheduled watchdog
    #[arg(long, value_name = "OPTIONS", num_args = 0.., allow_hyphen_values = true)]
    pub uninstall_watchdog: Option<Vec<String>>,

    /// Claude Code's `statusLine` command: reads its JSON on stdin, records the login's
    /// usage windows (no network call) and prints one line — model, windows with their
    /// resets, the last --check-fallback verdict, the rung agent launched
    #[arg(long)]
    pub statusline: bool,

    /// Make `agent --statusline` Claude Code's statusLine (settings.json backed up first, a
    /// link to it kept and written through; an existing statusLine command is kept and shown
    /// beside agent's)
    #[arg(long)]
    pub install_statusline: bool,

    /// Put back the statusLine agent replaced, exactly as it was
    #[arg(long)]
    pub uninstall_statusline: bool,

    /// Print a configuration file with every key agent reads, each at its default and
    /// commented out, with what it means: save it as ~/.config/agent/config.toml and change
    /// what you need
    #[arg(long)]
    pub config_template: bool,

    /// Configuration file, a regular file no other user can change [default: $AGENT_CONFIG,
    /// else ~/.config/agent/config.toml]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Machine-readable output for --list, --tasks, --status, --check-fallback and --dry-run
    #[arg(long)]
    pub json: bool,

    /// When to colour agent's own output (NO_COLOR is honoured)
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,

    /// Print no notices (errors are still printed)
    #[arg(long)]
    pub quiet: bool,

    /// Write the man page into DIR (for packagers)
    #[arg(long, value_name = "DIR", hide = true)]
    pub generate_man: Option<PathBuf>,

    /// Write bash, zsh and fish completions into DIR (for packagers)
    #[arg(long, value_name = "DIR", hide = true)]
    pub generate_completions: Option<PathBuf>,

    /// An unknown `--flag` before `--` that is close to one of agent's own: (as written,
    /// agent's). Refused unless it is a flag of the CLI that would run (see `lib::run`).
    #[arg(skip)]
    pub near_miss: Option<(String, String)>,

    /// What this run does, decided once from the flags above (`take_mode`).
    #[arg(skip)]
    pub mode: Mode,

    /// Claude Code's command line, for the launched CLI: unchanged, or in its own words
    #[arg(
        value_name = "ARGS FOR THE CLI",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub cli_args: Vec<OsString>,
}

/// Each management flag (the long name, as in [`MANAGEMENT`]) and the clap definition of the
/// arguments it takes.
pub fn management() -> Vec<(&'static str, clap::Command)> {
    vec![
        ("budget", budget::BudgetCli::command()),
        ("relay", relay::RelayCli::command()),
        ("dashboard", dashboard::DashboardCli::command()),
        ("usage", usage::UsageCli::command()),
        ("accounts", accounts::AccountsCli::command()),
        ("install-watchdog", watchdog::InstallCli::command()),
        ("uninstall-watchdog", watchdog::UninstallCli::command()),
    ]
}

/// agent's command line as `--help`, the man page and the completions show it: each
/// management flag's help ends with the listing of its own arguments, read from their clap
/// definition (never written by hand, so it cannot drift from what the flag takes).
pub fn command() -> clap::Command {
    management()
        .into_iter()
        .fold(Cli::command(), |command, (name, sub)| {
            let listing = synopsis::synopsis(&sub);
            command.mut_arg(name.replace('-', "_"), |arg| {
                let about = arg.get_help().map(ToString::to_string).unwrap_or_default();
                arg.help(format!(
                    "{about}. Takes the rest of the command line: {listing}"
                ))
            })
        })
}

impl Cli {
    /// The mode the flags ask for ([`Mode`]'s order). The management flags' own words move
    /// into the mode.
    fn take_mode(&mut self) -> Mode {
        let words = |flag: &mut Option<Vec<String>>| flag.take();
        if self.statusline {
            Mode::Statusline
        } else if self.generate_man.is_some() || self.generate_completions.is_some() {
            Mode::Docs {
                man: self.generate_man.clone(),
                completions: self.generate_completions.clone(),
            }
        } else if self.config_template {
            Mode::ConfigTemplate
        } else if self.install_statusline {
            Mode::InstallStatusline
        } else if self.uninstall_statusline {
            Mode::UninstallStatusline
        } else if self.doctor {
            Mode::Doctor
        } else if let Some(name) = self.unpark.take() {
            Mode::Unpark(name)
        } else if let Some(args) = words(&mut self.accounts) {
            Mode::Accounts(args)
        } else if self.list {
            Mode::List
        } else if self.tasks {
            Mode::Tasks
        } else if let Some(args) = words(&mut self.install_watchdog) {
            Mode::InstallWatchdog(args)
        } else if let Some(args) = words(&mut self.uninstall_watchdog) {
            Mode::UninstallWatchdog(args)
        } else if let Some(args) = words(&mut self.relay) {
            Mode::Relay(args)
        } else if let Some(args) = words(&mut self.budget) {
            Mode::Budget(args)
        } else if let Some(args) = words(&mut self.dashboard) {
            Mode::Dashboard(args)
        } else if let Some(args) = words(&mut self.usage) {
            Mode::Usage(args)
        } else if self.status {
            Mode::Status
        } else if self.check_fallback {
            Mode::CheckFallback
        } else if self.dry_run {
            Mode::DryRun
        } else if let Some(spec) = &self.use_backend {
            Mode::Force(spec.clone())
        } else {
            Mode::Launch
        }
    }
}

/// Splits argv (without argv0) into agent's words and the CLI's words, then parses agent's.
///
/// agent's options are recognised anywhere before the first `--`; everything else,
/// including values that look like flags, passes through in order. That `--` is agent's when
/// no word of the CLI's came before it, and the CLI's (kept) when one did (DESIGN.md §23).
pub fn parse(args: Vec<OsString>) -> Result<Cli, clap::Error> {
    // agent's options are told apart by the static table [`OWN_OPTIONS`], and clap's command
    // is built only when one was given: a launch (`agent -p hi`, no option of agent's) never
    // builds it — building and matching it was a quarter of a warm launch's own
    // instructions. The listings of the management flags' own arguments are read from their
    // definitions only for `--help`.
    let mut ours: Vec<OsString> = vec!["agent".into()];
    let mut theirs: Vec<OsString> = Vec::new();
    // `--json` is kept in place among the CLI's words until we know whether this is a report.
    let mut json_at: Vec<usize> = Vec::new();
    let mut near_miss: Option<(String, String)> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            theirs.push(arg);
            continue;
        };
        if text == "--" {
            // Before any of the CLI's words it ends agent's options; after one, it is the
            // CLI's own (`-p -- "$TEXT"`) and is kept: the words after it are data.
            if !theirs.is_empty() {
                theirs.push(arg);
            }
            theirs.extend(args.by_ref());
            break;
        }
        let Some(long) = text.strip_prefix("--") else {
            theirs.push(arg);
            continue;
        };
        let (name, inline_value) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        match own_option(name) {
            // A management flag takes every word after it as its own sub-command line.
            Some(_) if MANAGEMENT.contains(&name) => {
                ours.push(arg);
                ours.extend(args.by_ref());
                break;
            }
            Some(_) if name == "json" => {
                json_at.push(theirs.len());
                theirs.push(arg);
            }
            Some(takes_value) => {
                ours.push(arg.clone());
                if takes_value
                    && inline_value.is_none()
                    && let Some(value) = args.next()
                {
                    ours.push(value);
                }
            }
            None => {
                if near_miss.is_none()
                    && let Some(ours) = closest_option(name)
                {
                    near_miss = Some((format!("--{name}"), format!("--{ours}")));
                }
                theirs.push(arg);
            }
        }
    }
    let mut cli = if ours.len() == 1 {
        Cli::with_no_option()
    } else {
        let mut command = if ours.iter().skip(1).any(|word| word == "--help") {
            self::command()
        } else {
            Cli::command()
        };
        let matches = command.try_get_matches_from_mut(ours)?;
        Cli::from_arg_matches(&matches)?
    };
    cli.mode = cli.take_mode();
    if !json_at.is_empty() && cli.mode.is_report() {
        cli.json = true;
        for index in json_at.into_iter().rev() {
            theirs.remove(index);
        }
    }
    // Byte for byte: a word that is not UTF-8 reaches the CLI as it was given.
    cli.cli_args = theirs;
    cli.near_miss = near_miss;
    Ok(cli)
}

/// Each of agent's long options: its name, whether it takes the next word as its value (an
/// option whose value is given only as `--flag=VALUE`, `--wait[=MAX]`, does not: the next
/// word is the CLI's), and whether `--help` shows it. Read by [`parse`] without building
/// clap's command; `tests::the_option_table_is_what_clap_defines` holds it to [`Cli`].
const OWN_OPTIONS: &[(&str, bool, bool)] = &[
    ("use", true, true),
    ("dry-run", false, true),
    ("wait", false, true),
    ("on-limit", true, true),
    ("outcome", true, true),
    ("list", false, true),
    ("tasks", false, true),
    ("status", false, true),
    ("check-fallback", false, true),
    ("budget", true, true),
    ("relay", true, true),
    ("dashboard", true, true),
    ("usage", true, true),
    ("accounts", true, true),
    ("doctor", false, true),
    ("unpark", true, true),
    ("install-watchdog", true, true),
    ("uninstall-watchdog", true, true),
    ("statusline", false, true),
    ("install-statusline", false, true),
    ("uninstall-statusline", false, true),
    ("config-template", false, true),
    ("config", true, true),
    ("json", false, true),
    ("color", true, true),
    ("quiet", false, true),
    ("generate-man", true, false),
    ("generate-completions", true, false),
    ("help", false, true),
    ("version", false, true),
];

/// `Some(takes_value)` when `name` is one of agent's long options (help and version included).
fn own_option(name: &str) -> Option<bool> {
    OWN_OPTIONS
        .iter()
        .find(|(long, _, _)| *long == name)
        .map(|(_, takes_value, _)| *takes_value)
}

impl Cli {
    /// What clap makes of a command line with no option of agent's (every flag off, `--color
    /// auto`); `tests::no_option_is_what_clap_makes_of_none` holds it to clap.
    fn with_no_option() -> Cli {
        Cli {
            use_backend: None,
            dry_run: false,
            wait: None,
            on_limit: None,
            outcome: None,
            list: false,
            tasks: false,
            status: false,
            check_fallback: false,
            budget: None,
            relay: None,
            dashboard: None,
            usage: None,
            accounts: None,
            doctor: false,
            unpark: None,
            install_watchdog: None,
            uninstall_watchdog: None,
            statusline: false,
            install_statusline: false,
            uninstall_statusline: false,
            config_template: false,
            config: None,
            json: false,
            color: ColorWhen::Auto,
            quiet: false,
            generate_man: None,
            generate_completions: None,
            near_miss: None,
            mode: Mode::Launch,
            cli_args: Vec::new(),
        }
    }
}

/// agent's visible long option closest to `name` (`stauts` → `status`), when it is a slip of
/// one or two letters: a word that far from all of agent's options is the CLI's.
fn closest_option(name: &str) -> Option<String> {
    let longs = OWN_OPTIONS
        .iter()
        .filter(|(_, _, shown)| *shown)
        .map(|(long, _, _)| *long);
    crate::text::closest(name, longs).map(str::to_string)
}

/// Parses a management flag's own arguments (`--budget set --calls 5`). A usage error or
/// `--help` is printed as clap prints it, and the code to exit with is returned.
pub fn parse_sub<T: Parser>(args: &[String]) -> Result<T, std::process::ExitCode> {
    T::try_parse_from(args).map_err(|err| {
        let _ = err.print();
        std::process::ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(args: &[&str]) -> Cli {
        parse(args.iter().map(OsString::from).collect()).expect("parses")
    }

    #[test]
    fn every_management_flag_has_its_definition_listed() {
        let mut names: Vec<&str> = management().iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        assert_eq!(names, MANAGEMENT);
    }

    #[test]
    fn a_management_flags_help_ends_with_its_listing() {
        let command = command();
        let help = |long: &str| {
            command
                .get_arguments()
                .find(|arg| arg.get_long() == Some(long))
                .and_then(|arg| arg.get_help())
                .map(ToString::to_string)
                .unwrap()
        };
        assert!(
            help("dashboard").ends_with(
                "Takes the rest of the command line: [--listen ADDR] [--allow-remote] [--open]"
            ),
            "{}",
            help("dashboard")
        );
        assert!(
            help("usage").contains("--by day|model|account|run|backend|client"),
            "{}",
            help("usage")
        );
    }

    #[test]
    fn no_help_states_a_default_clap_adds() {
        for (name, sub) in management() {
            let mut commands = vec![sub];
            while let Some(command) = commands.pop() {
                for arg in command.get_arguments() {
                    let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                    assert!(
                        arg.get_default_values().is_empty() || !help.contains("[default:"),
                        "--{name} {}: --{} says its default twice",
                        command.get_name(),
                        arg.get_id()
                    );
                }
                commands.extend(command.get_subcommands().cloned());
            }
        }
    }

    #[test]
    fn unknown_words_pass_through_in_order() {
        let cli = split(&["-p", "hi", "--model", "x", "--verbose", "-c"]);
        assert_eq!(
            cli.cli_args,
            ["-p", "hi", "--model", "x", "--verbose", "-c"]
        );
    }

    #[test]
    fn the_option_table_is_what_clap_defines() {
        use clap::ArgAction;
        let command = Cli::command();
        let mut defined: Vec<(String, bool, bool)> = command
            .get_arguments()
            .filter_map(|arg| {
                let long = arg.get_long()?;
                let takes_value = matches!(arg.get_action(), ArgAction::Set | ArgAction::Append)
                    && !arg.is_require_equals_set();
                Some((long.to_string(), takes_value, !arg.is_hide_set()))
            })
            .collect();
        defined.push(("help".into(), false, true));
        defined.push(("version".into(), false, true));
        defined.sort();
        let mut table: Vec<(String, bool, bool)> = OWN_OPTIONS
            .iter()
            .map(|(long, takes_value, shown)| (long.to_string(), *takes_value, *shown))
            .collect();
        table.sort();
        assert_eq!(table, defined);
    }

    #[test]
    fn no_option_is_what_clap_makes_of_none() {
        let matches = Cli::command().try_get_matches_from(["agent"]).unwrap();
        let mut by_clap = Cli::from_arg_matches(&matches).unwrap();
        by_clap.mode = by_clap.take_mode();
        assert_eq!(
            format!("{:?}", Cli::with_no_option()),
            format!("{by_clap:?}")
        );
        // And a launch's words take that way.
        let cli = split(&["-p", "hi", "--allowedTools", "Write"]);
        assert_eq!(format!("{:?}", cli.mode), "Launch");
        assert_eq!(cli.cli_args, ["-p", "hi", "--allowedTools", "Write"]);
    }

    #[test]
    fn own_options_are_taken_anywhere_before_double_dash() {
        let cli = split(&["-p", "hi", "--use", "claude:sonnet", "--resume"]);
        assert_eq!(cli.use_backend.as_deref(), Some("claude:sonnet"));
        assert_eq!(cli.cli_args, ["-p", "hi", "--resume"]);
    }

    #[test]
    fn double_dash_ends_agent_options() {
        let cli = split(&["--dry-run", "--", "--list", "--", "x"]);
        assert!(cli.dry_run);
        assert!(!cli.list);
        assert_eq!(cli.cli_args, ["--list", "--", "x"]);
    }

    #[test]
    fn a_double_dash_after_a_cli_word_is_the_clis_and_ends_agents_options_too() {
        let cli = split(&["-p", "--", "--dangerously-skip-permissions", "--status"]);
        assert!(!cli.status);
        assert_eq!(
            cli.cli_args,
            ["-p", "--", "--dangerously-skip-permissions", "--status"]
        );
        let cli = split(&["--", "-p", "--", "--list"]);
        assert_eq!(cli.cli_args, ["-p", "--", "--list"]);
    }

    #[test]
    fn inline_values_are_understood() {
        let cli = split(&["--use=gemini", "--color=never", "hi"]);
        assert_eq!(cli.use_backend.as_deref(), Some("gemini"));
        assert_eq!(cli.color, ColorWhen::Never);
        assert_eq!(cli.cli_args, ["hi"]);
    }

    #[test]
    fn a_slip_of_agents_own_option_is_noted_and_a_cli_word_is_not() {
        assert_eq!(
            split(&["--stauts"]).near_miss,
            Some(("--stauts".into(), "--status".into()))
        );
        assert_eq!(
            split(&["--dry-rnu", "-p", "hi"]).near_miss,
            Some(("--dry-rnu".into(), "--dry-run".into()))
        );
        for words in [
            &["--verbose"][..],
            &["--model", "x"],
            &["--resume"],
            &["--continue"],
            &["--debug"],
            &["--", "--stauts"],
        ] {
            assert_eq!(split(words).near_miss, None, "{words:?}");
        }
    }

    #[test]
    fn json_belongs_to_the_cli_in_a_launch_and_to_agent_in_a_report() {
        assert_eq!(
            split(&["exec", "--json", "hi"]).cli_args,
            ["exec", "--json", "hi"]
        );
        let report = split(&["--list", "--json"]);
        assert!(report.json);
        assert!(report.cli_args.is_empty());
    }

    fn mode(args: &[&str]) -> Mode {
        split(args).mode
    }

    #[test]
    fn each_flag_is_its_mode_and_plain_words_are_a_launch() {
        assert_eq!(mode(&["-p", "hi"]), Mode::Launch);
        assert_eq!(mode(&[]), Mode::Launch);
        assert_eq!(
            mode(&["--use", "codex", "-p", "hi"]),
            Mode::Force("codex".into())
        );
        assert_eq!(mode(&["--dry-run", "--use", "codex"]), Mode::DryRun);
        assert_eq!(mode(&["--status"]), Mode::Status);
        assert_eq!(
            mode(&["--budget", "set", "--calls", "5"]),
            Mode::Budget(vec!["set".into(), "--calls".into(), "5".into()])
        );
        assert_eq!(mode(&["--usage"]), Mode::Usage(Vec::new()));
        assert_eq!(
            mode(&["--relay", "serve"]),
            Mode::Relay(vec!["serve".into()])
        );
    }

    #[test]
    fn the_first_mode_in_the_order_wins_when_several_are_asked_for() {
        assert_eq!(mode(&["--status", "--list"]), Mode::List);
        assert_eq!(mode(&["--check-fallback", "--doctor"]), Mode::Doctor);
        assert_eq!(mode(&["--dry-run", "--status"]), Mode::Status);
    }
}
