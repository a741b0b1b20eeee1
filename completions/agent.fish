complete -c agent -l use -d 'Force a backend (and model): no probes, no fallback; agent execs the CLI in its place' -r
complete -c agent -l wait -d 'When every rung that could run is parked until a known reset, wait for the earliest (at most MAX: 90s, 45m, 6h, 2d; up to 7d), with a countdown, then run once — instead of exiting 75. AGENT_WAIT=MAX does the same for every launch' -r
complete -c agent -l on-limit -d 'What to do when a session runs out of its usage window mid-work, once its CLI has exited: `continue` on the next open rung with a brief of the session, `resume` the same session after the reset (waiting as --wait does), `stop` with the CLI\'s exit code, or `ask` which. Default: on_limit in the config, else ask on a terminal and stop off one. AGENT_ON_LIMIT=WHEN does the same for every launch' -r -f -a "ask\t''
continue\t''
resume\t''
stop\t''"
complete -c agent -l outcome -d 'When the launch ends, however it ends, write one JSON object to FILE (0600, replaced atomically) for scripts: agent\'s exit code, each rung started and how its run ended (done, fast_fail, limit, error, signal, usage_error), the hand-off brief, the seconds waited. AGENT_OUTCOME=FILE does the same for every launch' -r -F
complete -c agent -l unpark -d 'Forget what parks a login or a rung — its usage windows past the mark, a quota cooldown — for when you know better (the window reset early, you bought more), and say what was forgotten. NAME: a rung\'s number, a backend, a login account' -r
complete -c agent -l config -d 'Configuration file, a regular file no other user can change [default: $AGENT_CONFIG, else ~/.config/agent/config.toml]' -r -F
complete -c agent -l color -d 'When to colour agent\'s own output (NO_COLOR is honoured)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c agent -l generate-man -d 'Write the man page into DIR (for packagers)' -r -F
complete -c agent -l generate-completions -d 'Write bash, zsh and fish completions into DIR (for packagers)' -r -F
complete -c agent -l budget -d 'The daily call and token budget (a cap of 0 is unlimited). Takes the rest of the command line: status [--json] | set [--calls N] [--tokens N] | recent [--tail N] [--json]' -r
complete -c agent -l relay -d 'The credential relay: keys stay on this host, clients hold a relay token (`init` makes it, `tokens` one per person with daily caps, `install` a systemd user service or launchd agent). Takes the rest of the command line: serve [--listen ADDR] [--allow-remote] | init [--force] | tokens add NAME [--daily-calls N] [--daily-tokens N] [--force] | tokens list [--json] | tokens revoke NAME | install [--dry-run] [--service launchd|systemd]' -r
complete -c agent -l dashboard -d 'A local page of health, windows, budget and usage. Prints a one-time URL that sets the access cookie (`--open` opens it in the browser); the relay\'s token works too. Takes the rest of the command line: [--listen ADDR] [--allow-remote] [--open]' -r
complete -c agent -l usage -d 'Calls, tokens, cost and cache efficiency from agent\'s ledger and the CLIs\' own records, each call once; `--reconcile` checks the CLIs\' records against the relay\'s. Takes the rest of the command line: [--by day|model|account|run|backend|client] [--since DATE] [--until DATE] [--tz-offset-hours N] [--source agent|claude|codex|gemini|agy|opencode[,…]] [--reconcile] [--reasoning-in-output] [--json]' -r
complete -c agent -l accounts -d 'Credential pools (`add` reads the secret from stdin, checks it and stores it 0600). Takes the rest of the command line: list [--json] | add NAME --backend BACKEND --kind oauth|api_key|login [--dir DIR] [--priority N] [--expires DATE] [--secret-var VAR] [--monthly-budget-usd USD] | remove NAME | test [NAME] [--json]' -r
complete -c agent -l install-watchdog -d 'Schedule --check-fallback (launchd, systemd user timer, or cron). The check runs in DIR (default: the current directory), where each CLI must trust the folder. Takes the rest of the command line: [--every INTERVAL] [--dir DIR] [--dry-run] [--scheduler launchd|systemd|cron]' -r
complete -c agent -l uninstall-watchdog -d 'Remove the scheduled watchdog. Takes the rest of the command line: [--dry-run] [--scheduler launchd|systemd|cron]' -r
complete -c agent -l dry-run -d 'Choose a rung (probing as a launch would) and print the command, environment names and the reason; run nothing'
complete -c agent -l list -d 'Print the backends, what agent can do with their sessions, and the rung table'
complete -c agent -l tasks -d 'This folder\'s tasks that crossed CLIs, newest first: each session that carried one (rung, session id, how it ended, the brief it was given) and what `agent -c` here does — continue where the task lives, or take it back up to a rung whose window reset'
complete -c agent -l status -d 'Check every rung for real, in parallel (ignoring cached health): an API probe, or for a subscription login the CLI\'s own headless check, with the model and home the launch uses, once per login and model (reused for self_check_cache_seconds). One row per rung, its state said once, fitted to COLUMNS or the terminal\'s width'
complete -c agent -l check-fallback -d 'Check every provider-independent rung as --status does; exit 1 unless every one is proved: one failed, parked or not proved is DEGRADED, none answering is DOWN. For the watchdog'
complete -c agent -l doctor -d 'Check the setup — config, state directory, binaries (with --version), credentials (present or not, never shown), budget, watchdog — and whether a launch here could run any rung; say how to fix each problem (for a cron job, the PATH to add); changes nothing. Exit 1 when a problem is found'
complete -c agent -l statusline -d 'Claude Code\'s `statusLine` command: reads its JSON on stdin, records the login\'s usage windows (no network call) and prints one line — model, windows with their resets, the last --check-fallback verdict, the rung agent launched'
complete -c agent -l install-statusline -d 'Make `agent --statusline` Claude Code\'s statusLine (settings.json backed up first, a link to it kept and written through; an existing statusLine command is kept and shown beside agent\'s)'
complete -c agent -l uninstall-statusline -d 'Put back the statusLine agent replaced, exactly as it was'
complete -c agent -l config-template -d 'Print a configuration file with every key agent reads, each at its default and commented out, with what it means: save it as ~/.config/agent/config.toml and change what you need'
complete -c agent -l json -d 'Machine-readable output for --list, --tasks, --status, --check-fallback and --dry-run'
complete -c agent -l quiet -d 'Print no notices (errors are still printed)'
complete -c agent -s h -l help -d 'Print help'
complete -c agent -s V -l version -d 'Print version'
