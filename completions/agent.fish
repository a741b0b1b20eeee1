complete -c agent -l use -d 'Force a backend (and model): no probes, no fallback; agent execs the CLI in its place' -r
complete -c agent -l budget -d 'The daily call and token budget: `status [--json]`, `set --calls N --tokens N` (0 = unlimited), `recent [--tail N] [--json]`. Takes the rest of the command line' -r
complete -c agent -l relay -d 'The credential relay: `serve [--listen ADDR] [--allow-remote]` (keys stay on this host; clients hold a relay token), `init [--force]` (make the token), `tokens add|list|revoke` (one token per person, with daily caps), `install [--dry-run]` (a systemd user service or launchd agent). Takes the rest of the command line' -r
complete -c agent -l dashboard -d 'A local page of health, windows, budget and usage: `[--listen ADDR] [--allow-remote]`. Prints a one-time URL that sets the access cookie; the relay\'s token works too. Takes the rest of the command line' -r
complete -c agent -l usage -d 'Calls, tokens, cost and cache efficiency from agent\'s ledger and the CLIs\' own records, each call once: `[--by day|model|account|run|backend] [--since DATE] [--until DATE] [--tz-offset-hours N] [--json]`; `--reconcile [--reasoning-in-output]` checks the CLIs\' records against the relay\'s. Takes the rest of the command line' -r
complete -c agent -l accounts -d 'Credential pools: `list [--json]`, `add NAME --backend B --kind oauth|api_key` (the secret is read from stdin, checked, stored 0600), `remove NAME`, `test [NAME]`. Takes the rest of the command line' -r
complete -c agent -l install-watchdog -d 'Schedule --check-fallback (launchd, systemd user timer, or cron): `[--every 2h] [--dir DIR] [--dry-run] [--scheduler launchd|systemd|cron]`. The check runs in DIR (default: the current directory), where each CLI must trust the folder. Takes the rest of the command line' -r
complete -c agent -l uninstall-watchdog -d 'Remove the scheduled watchdog: `[--dry-run] [--scheduler launchd|systemd|cron]`' -r
complete -c agent -l config -d 'Configuration file [default: $AGENT_CONFIG, else ~/.config/agent/config.toml]' -r -F
complete -c agent -l color -d 'When to colour agent\'s own output (NO_COLOR is honoured)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c agent -l generate-man -d 'Write the man page into DIR (for packagers)' -r -F
complete -c agent -l generate-completions -d 'Write bash, zsh and fish completions into DIR (for packagers)' -r -F
complete -c agent -l dry-run -d 'Choose a rung (probing as a launch would) and print the command, environment names and the reason; run nothing'
complete -c agent -l list -d 'Print the backends and the rung table'
complete -c agent -l status -d 'Probe every rung for real, in parallel (ignoring cached health), and report each'
complete -c agent -l check-fallback -d 'Probe every provider-independent rung; exit 1 if one is dead (DEGRADED) or none answers (DOWN). For the watchdog'
complete -c agent -l doctor -d 'Check the setup — config, state directory, binaries (with --version), credentials (present or not, never shown), budget, watchdog — and say how to fix each problem; changes nothing. Exit 1 when a problem is found'
complete -c agent -l statusline -d 'Claude Code\'s `statusLine` command: reads its JSON on stdin, records the login\'s usage windows (no network call) and prints one line — model, windows with their resets, the last --check-fallback verdict, the rung agent launched'
complete -c agent -l install-statusline -d 'Make `agent --statusline` Claude Code\'s statusLine (settings.json backed up first; an existing statusLine command is kept and shown beside agent\'s)'
complete -c agent -l uninstall-statusline -d 'Put back the statusLine agent replaced, exactly as it was'
complete -c agent -l json -d 'Machine-readable output for --list, --status, --check-fallback and --dry-run'
complete -c agent -l quiet -d 'Print no notices (errors are still printed)'
complete -c agent -s h -l help -d 'Print help'
complete -c agent -s V -l version -d 'Print version'
