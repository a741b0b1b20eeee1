#!/bin/sh
# Runs the end-to-end suite (tests/e2e.rs) against the NEWEST published CLIs, not the pins in
# scripts/install-real-clis.sh: a compatibility check for the day a new release lands. CI
# gates on the pinned ones; `.ci/run` runs this one only with AGENT_E2E_NEWEST=1, as a report
# whose failure never fails CI: its result depends on what the npm registry publishes that day.
#
#   sh scripts/e2e-newest.sh            # install @latest of each, run the suite
#   sh scripts/e2e-newest.sh -- NAME    # pass arguments to the test binary (one test)
#
# Installs into a fresh temporary cache each time (${TMPDIR:-/tmp}/agent-e2e-newest.*),
# removed at the end; prints the versions it tested and the suite's result. Needs node (>= 20),
# npm and cargo; the npm registry is the only network it uses.
set -eu

say() { printf 'e2e-newest: %s\n' "$*" >&2; }
die() {
    printf 'e2e-newest: error: %s\n' "$*" >&2
    exit 1
}

command -v node >/dev/null 2>&1 || die "node is missing"
command -v npm >/dev/null 2>&1 || die "npm is missing"
command -v cargo >/dev/null 2>&1 || die "cargo is missing"

[ "${1:-}" = "--" ] && shift

cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/agent-e2e-newest.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

packages="@anthropic-ai/claude-code @openai/codex @google/gemini-cli opencode-ai"
say "installing the newest $packages into $work"
printf '{ "name": "agent-e2e-newest", "private": true }\n' >"$work/package.json"
latest=""
for package in $packages; do
    latest="$latest $package@latest"
done
# shellcheck disable=SC2086 # one word per package
(cd "$work" && npm install --save-exact --no-audit --no-fund --loglevel=error $latest >&2) ||
    die "npm install failed"

bin=$work/node_modules/.bin
versions=""
for cli in claude codex gemini opencode; do
    [ -x "$bin/$cli" ] || die "$cli is missing after the install"
    got=$(HOME=$work TMPDIR=$work NO_COLOR=1 "$bin/$cli" --version </dev/null 2>/dev/null | head -n 1) ||
        die "$cli --version failed"
    versions="$versions $cli=$got"
done
say "testing:$versions"

status=0
AGENT_E2E_BIN=$bin cargo test --locked --test e2e -- "$@" || status=$?
if [ "$status" -eq 0 ]; then
    say "PASS with the newest CLIs:$versions"
else
    say "FAIL (exit $status) with the newest CLIs:$versions"
fi
exit "$status"
