#!/bin/sh
# Install the real AI coding CLIs the end-to-end suite (tests/e2e.rs) runs, at pinned
# versions, into a cache directory that later runs reuse. Prints the directory holding
# `claude`, `codex`, `gemini` and `opencode` as its last line on stdout:
#
#   AGENT_E2E_BIN=$(scripts/install-real-clis.sh | tail -n 1) cargo test --test e2e
#
# Cache: ${AGENT_E2E_CACHE:-$HOME/.cache/agent-e2e}/<hash of the pins and platform>. A
# cached install is reused when every binary answers `--version` (offline) with its pinned
# version; otherwise it is installed afresh from the npm registry. A pinned version the
# registry does not have is an error: no other version is ever substituted.
#
# Needs node (>= 20) and npm. Progress goes to stderr.
set -eu

CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
GEMINI_CLI_VERSION=0.61.0
OPENCODE_VERSION=1.18.33

say() { printf 'install-real-clis: %s\n' "$*" >&2; }
die() {
    printf 'install-real-clis: error: %s\n' "$*" >&2
    exit 1
}
need_cmd() {
    command -v "$1" >/dev/null 2>&1 || die "$1 is missing: $2"
}

# package@version, one per line.
pins() {
    printf '%s\n' \
        "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
        "@openai/codex@$CODEX_VERSION" \
        "@google/gemini-cli@$GEMINI_CLI_VERSION" \
        "opencode-ai@$OPENCODE_VERSION"
}

# The version string `NAME --version` must contain.
expected_version() {
    case "$1" in
        claude) echo "$CLAUDE_CODE_VERSION" ;;
        codex) echo "$CODEX_VERSION" ;;
        gemini) echo "$GEMINI_CLI_VERSION" ;;
        opencode) echo "$OPENCODE_VERSION" ;;
    esac
}

# A short hash of the pins, the platform and node's module ABI (native addons and the
# platform-specific binaries depend on the last two).
cache_key() {
    {
        pins
        uname -s -m
        node -p 'process.versions.modules'
    } | if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi |
        cut -c1-16
}

# Runs a command with a time limit when `timeout` exists (GNU coreutils; not on macOS).
with_timeout() {
    if command -v timeout >/dev/null 2>&1; then
        timeout "$@"
    else
        shift
        "$@"
    fi
}

# True when every CLI under $1/node_modules/.bin runs `--version` offline and reports its
# pinned version. Runs them in a throw-away HOME so nothing is written to the user's.
is_complete() {
    bin=$1/node_modules/.bin
    scratch=$(mktemp -d)
    ok=0
    for cli in claude codex gemini opencode; do
        [ -x "$bin/$cli" ] || {
            say "$cli is missing in $1"
            ok=1
            break
        }
        want=$(expected_version "$cli")
        got=$(HOME=$scratch TMPDIR=$scratch NO_COLOR=1 with_timeout 60 "$bin/$cli" --version </dev/null 2>/dev/null) || {
            say "$cli --version failed in $1"
            ok=1
            break
        }
        case "$got" in
            *"$want"*) ;;
            *)
                say "$cli --version says \"$got\", not $want"
                ok=1
                break
                ;;
        esac
    done
    rm -rf "$scratch"
    return "$ok"
}

# Fails loudly unless the registry has every pinned version.
check_registry() {
    registry=$(npm config get registry)
    for pin in $(pins); do
        package=${pin%@*}
        version=${pin##*@}
        if ! found=$(npm view "$pin" version --loglevel=error 2>&1); then
            case "$found" in
                *E404*) ;; # the version (or the package) is not there: said below
                *) die "npm view $pin failed (is $registry reachable?): $found" ;;
            esac
        fi
        [ "$found" = "$version" ] ||
            die "$package $version is not in the registry ($registry); refusing to install another version — update the pin in $0"
    done
}

main() {
    need_cmd node "install Node.js 20 or newer (the CLIs run on it)"
    need_cmd npm "install npm (it comes with Node.js)"

    cache=${AGENT_E2E_CACHE:-${HOME:?HOME is not set}/.cache/agent-e2e}
    dir=$cache/$(cache_key)
    if [ -d "$dir" ] && is_complete "$dir"; then
        say "reusing $dir"
    else
        if [ -e "$dir" ]; then
            say "$dir is incomplete: installing again"
            rm -rf "$dir"
        fi
        check_registry
        mkdir -p "$cache"
        work=$(mktemp -d "$cache/.install.XXXXXX")
        trap 'rm -rf "$work"' EXIT
        trap 'exit 130' INT TERM
        say "installing $(pins | tr '\n' ' ')into $dir"
        printf '{ "name": "agent-e2e-clis", "private": true }\n' >"$work/package.json"
        # shellcheck disable=SC2046 # one word per pin
        (cd "$work" && npm install --save-exact --no-audit --no-fund --loglevel=error \
            $(pins) >&2) || die "npm install failed"
        is_complete "$work" || die "the installed CLIs do not run; see the messages above"
        # Another run may have finished first; either install is as good.
        [ -d "$dir" ] || mv "$work" "$dir" || die "cannot move $work to $dir"
        rm -rf "$work"
        trap - EXIT INT TERM
    fi
    echo "$dir/node_modules/.bin"
}

main "$@"
