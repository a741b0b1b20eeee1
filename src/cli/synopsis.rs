//! The one-line listing of a management flag's own arguments (`--budget status [--json] |
//! set [--calls N] [--tokens N] | …`), read from its clap definition: top-level `--help`,
//! the man page and the completions show this text, so none of them can name a flag the
//! sub-command does not take or leave one out.

use clap::{Arg, ArgAction, Command};

/// `command`'s arguments, and each of its sub-commands with theirs, after their names:
/// `serve [--listen ADDR] [--allow-remote] | init [--force] | tokens add NAME … | …`.
pub fn synopsis(command: &Command) -> String {
    let mut forms = Vec::new();
    collect(command, "", &mut forms);
    forms.join(" | ")
}

fn collect(command: &Command, prefix: &str, forms: &mut Vec<String>) {
    let own = arguments(command);
    if command.get_subcommands().next().is_none() || !own.is_empty() {
        let form = [prefix, own.as_str()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        forms.push(form);
    }
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = if prefix.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{prefix} {}", sub.get_name())
        };
        collect(sub, &name, forms);
    }
}

/// The positionals (`NAME`, `[NAME]`), then the options in the order they are defined.
fn arguments(command: &Command) -> String {
    let shown: Vec<&Arg> = command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set() && !matches!(arg.get_id().as_str(), "help" | "version"))
        .collect();
    let positionals = shown.iter().filter(|arg| arg.is_positional()).map(|arg| {
        let name = value_name(arg);
        if arg.is_required_set() {
            name
        } else {
            format!("[{name}]")
        }
    });
    let options = shown
        .iter()
        .filter(|arg| !arg.is_positional())
        .filter_map(|arg| {
            let long = arg.get_long()?;
            let form = match arg.get_action() {
                ArgAction::Set | ArgAction::Append => format!("--{long} {}", value(arg)),
                _ => format!("--{long}"),
            };
            Some(if arg.is_required_set() {
                form
            } else {
                format!("[{form}]")
            })
        });
    positionals.chain(options).collect::<Vec<_>>().join(" ")
}

/// `day|model|…` for a closed set of values (`[,…]` when several may be given), else the
/// value's name.
fn value(arg: &Arg) -> String {
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|value| !value.is_hide_set())
        .map(|value| value.get_name().to_string())
        .collect();
    let one = if possible.is_empty() {
        value_name(arg)
    } else {
        possible.join("|")
    };
    if arg.get_value_delimiter().is_some() {
        format!("{one}[,…]")
    } else {
        one
    }
}

fn value_name(arg: &Arg) -> String {
    arg.get_value_names()
        .and_then(|names| names.first())
        .map_or_else(|| arg.get_id().as_str().to_uppercase(), ToString::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn a_flat_command_lists_its_options_and_their_values() {
        assert_eq!(
            synopsis(&crate::cli::dashboard::DashboardCli::command()),
            "[--listen ADDR] [--allow-remote] [--open]"
        );
        let usage = synopsis(&crate::cli::usage::UsageCli::command());
        assert!(
            usage.starts_with("[--by day|model|account|run|backend|client] [--since DATE]"),
            "{usage}"
        );
        // `--source`: agent's ledger, then every CLI agent has an adapter for (in this test
        // build, the stand-in too), by its adapter's name.
        assert!(
            usage.contains("[--source agent|claude|codex|gemini|agy|opencode"),
            "{usage}"
        );
        let every_cli: Vec<&str> = crate::adapter::ALL.iter().map(|f| f.name()).collect();
        assert!(
            usage.contains(&format!("[--source agent|{}[,…]]", every_cli.join("|"))),
            "{usage}"
        );
    }

    #[test]
    fn sub_commands_are_listed_by_their_whole_names_with_positionals_first() {
        let relay = synopsis(&crate::cli::relay::RelayCli::command());
        assert!(
            relay.starts_with("serve [--listen ADDR] [--allow-remote] | init [--force] | "),
            "{relay}"
        );
        assert!(
            relay.contains(
                "tokens add NAME [--daily-calls N] [--daily-tokens N] [--force] | tokens list [--json] | tokens revoke NAME"
            ),
            "{relay}"
        );
        let accounts = synopsis(&crate::cli::accounts::AccountsCli::command());
        assert!(accounts.contains("test [NAME] [--json]"), "{accounts}");
        assert!(
            accounts.contains("--kind oauth|api_key|login [--dir DIR] [--priority"),
            "required options have no brackets: {accounts}"
        );
    }
}
