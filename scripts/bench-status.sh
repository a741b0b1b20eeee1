#!/usr/bin/env bash
# How long `agent --status` takes now that it runs each login rung's CLI as its own check,
# one thread per rung: about the slowest CLI's check, not their sum. Three login rungs
# (Claude Code, Codex, Gemini CLI, logged in by fixture files in a sandbox HOME) whose CLIs
# are fake scripts that sleep 0.6·S, 0.8·S and 1.0·S seconds and then print what the real
# CLI prints headless (tests/fixtures/self_check/*-answered.*). Measured side by side in one
# hyperfine run:
#   new      this build's --status, the check cache expired each run (self_check_cache_seconds = 0)
#   slowest  the slowest fake CLI alone, in its self-check form
#   sum      the three fake CLIs run one after another by a shell (the "sum" floor)
# and, in a second run with ten times the runs (they take milliseconds):
#   old      the baseline build's --status (it runs no CLI for a login rung)
#   cached   this build's --status within the check cache (the default 100 minutes)
# Prints a Markdown snippet for docs/performance.md at the end.
#
#   scripts/bench-status.sh [--runs N] [--warmup N] [--sleep S] [--no-build] [--keep]
#   BENCH_BASELINE=/tmp/agent-old scripts/bench-status.sh   # an older build instead of building 84b1531
#   BENCH_BASELINE_REV=<commit> scripts/bench-status.sh     # build that commit as the baseline
#
# Needs hyperfine, python3, git and cargo. The baseline is built from `git archive` of the
# commit into the sandbox, with a copy of this checkout's release dependencies, so it only
# compiles agent itself. Everything the run writes (state, HOME, the baseline's build) is in
# one temporary directory, removed at the end (kept with --keep).
set -euo pipefail

RUNS=10
WARMUP=1
SLEEP=1
BUILD=1
KEEP=0
BASELINE_REV=${BENCH_BASELINE_REV:-84b1531}

usage() {
    sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'
}

say() { printf 'bench: %s\n' "$*" >&2; }
die() {
    printf 'bench: error: %s\n' "$*" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        --warmup) WARMUP=${2:?--warmup needs a number}; shift 2 ;;
        --sleep) SLEEP=${2:?--sleep needs seconds}; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --keep) KEEP=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
case "$SLEEP" in '' | *[!0-9.]*) die "--sleep takes seconds, e.g. 1 or 0.5" ;; esac

if ! command -v hyperfine >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing hyperfine"
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null
    else
        die "hyperfine is missing: apt-get install hyperfine (or cargo install hyperfine)"
    fi
fi
command -v python3 >/dev/null 2>&1 || die "python3 is missing"
command -v cargo >/dev/null 2>&1 || die "cargo is missing: install Rust (https://rustup.rs)"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FIXTURES=$ROOT/tests/fixtures/self_check

WORK=$(mktemp -d "${TMPDIR:-/tmp}/agent-bench-status.XXXXXX")
cleanup() {
    if [ "$KEEP" = 1 ]; then
        say "sandbox kept at $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- builds -------------------------------------------------------------------------------

AGENT_BIN="$ROOT/target/release/agent"
if [ "$BUILD" = 1 ]; then
    say "cargo build --release"
    (cd "$ROOT" && cargo build --release --quiet)
fi
[ -x "$AGENT_BIN" ] || die "$AGENT_BIN is missing: build it or drop --no-build"

BASELINE=${BENCH_BASELINE:-}
if [ -n "$BASELINE" ]; then
    [ -x "$BASELINE" ] || die "BENCH_BASELINE=$BASELINE is not an executable"
    BASELINE_LABEL="BENCH_BASELINE build"
else
    git -C "$ROOT" rev-parse --verify -q "$BASELINE_REV^{commit}" >/dev/null \
        || die "no commit $BASELINE_REV in $ROOT to build the baseline from (or set BENCH_BASELINE)"
    BASELINE_LABEL="build of $(git -C "$ROOT" rev-parse --short "$BASELINE_REV")"
    say "building the baseline: $BASELINE_LABEL (release, in the sandbox)"
    mkdir -p "$WORK/baseline-src" "$WORK/baseline-target/release"
    git -C "$ROOT" archive "$BASELINE_REV" | tar -x -C "$WORK/baseline-src"
    # This checkout's compiled dependencies, so only agent itself is compiled again.
    for part in deps build .fingerprint; do
        [ -d "$ROOT/target/release/$part" ] \
            && cp -a "$ROOT/target/release/$part" "$WORK/baseline-target/release/"
    done
    (cd "$WORK/baseline-src" && CARGO_TARGET_DIR="$WORK/baseline-target" cargo build --release --quiet) \
        || die "could not build $BASELINE_REV"
    BASELINE="$WORK/baseline-target/release/agent"
fi

# ---- sandbox ------------------------------------------------------------------------------

mkdir -p "$WORK/home/.claude" "$WORK/home/.codex" "$WORK/home/.gemini" "$WORK/bin" \
    "$WORK/tmp" "$WORK/project"
for state in state-old state-new state-cached; do
    mkdir -p "$WORK/$state"
    chmod 700 "$WORK/$state"
done
# Copies, as an install makes (a file the linker just wrote runs slower: bench-launch.sh).
cp "$AGENT_BIN" "$WORK/bin/agent"
cp "$BASELINE" "$WORK/bin/agent-baseline"

# The logins, as tests/logins.rs `logged_in()` writes them: Claude Code's own (max), Codex's
# ChatGPT login (plus), Gemini CLI's Google login; tokens that expire in 2100.
b64url() { printf '%s' "$1" | base64 | tr -d '\n=' | tr '+/' '-_'; }
jwt() { printf '%s.%s.c2lnbmF0dXJl' "$(b64url '{"alg":"RS256","typ":"JWT"}')" "$(b64url "$1")"; }
cat >"$WORK/home/.claude/.credentials.json" <<'JSON'
{"claudeAiOauth": {"accessToken": "sk-ant-oat01-BENCHclaudeACCESS-0123456789", "refreshToken": "sk-ant-ort01-BENCHclaudeREFRESH-0123456789", "expiresAt": 4102444800000, "scopes": ["user:inference"], "subscriptionType": "max", "rateLimitTier": "default_claude_max_20x"}}
JSON
cat >"$WORK/home/.codex/auth.json" <<JSON
{"auth_mode": "chatgpt", "OPENAI_API_KEY": null, "tokens": {"id_token": "$(jwt '{"https://api.openai.com/auth":{"chatgpt_plan_type":"plus"}}')", "access_token": "$(jwt '{"exp":4102444800,"sub":"BENCHcodexACCESS"}')", "refresh_token": "rt_BENCHcodexREFRESH_0123456789", "account_id": "acct-bench"}, "last_refresh": "2026-11-30T12:00:00Z"}
JSON
cat >"$WORK/home/.gemini/oauth_creds.json" <<'JSON'
{"access_token": "ya29.BENCHgeminiACCESS-0123456789", "refresh_token": "1//BENCHgeminiREFRESH-0123456789", "token_type": "Bearer", "expiry_date": 4102444800000}
JSON
printf '%s\n' '{"security": {"auth": {"selectedType": "oauth-personal"}}}' >"$WORK/home/.gemini/settings.json"

# The fake CLIs: each sleeps its share of S, then prints what the real one printed headless
# when it answered "ok", and logs the call under BENCH_TAG (which command of the run).
delay() { awk -v s="$SLEEP" -v f="$1" 'BEGIN { printf "%.3f", s * f }'; }
CLAUDE_DELAY=$(delay 0.6)
CODEX_DELAY=$(delay 0.8)
GEMINI_DELAY=$(delay 1.0)
fake_cli() { # name delay
    cp "$FIXTURES/$1-answered.stdout" "$WORK/bin/$1.stdout"
    cp "$FIXTURES/$1-answered.stderr" "$WORK/bin/$1.stderr"
    cat >"$WORK/bin/$1" <<SH
#!/bin/sh
echo "\${BENCH_TAG:-untagged} $1 \$*" >>"$WORK/calls.log"
case "\${1:-}" in --version) echo "$1 0.0.0-bench"; exit 0 ;; esac
sleep $2
cat "$WORK/bin/$1.stdout"
cat "$WORK/bin/$1.stderr" >&2
exit $(cat "$FIXTURES/$1-answered.exit")
SH
    chmod +x "$WORK/bin/$1"
}
fake_cli claude "$CLAUDE_DELAY"
fake_cli codex "$CODEX_DELAY"
fake_cli gemini "$GEMINI_DELAY"
touch "$WORK/calls.log"

RUNGS='[[rungs]]
backend = "claude"

[[rungs]]
backend = "codex"

[[rungs]]
backend = "gemini"'
# The old build knows no self_check_cache_seconds (deny_unknown_fields): it and the cached
# run read the default configuration, the expired run the same with the cache at 0.
printf '%s\n' "$RUNGS" >"$WORK/config.toml"
printf 'self_check_cache_seconds = 0\n\n%s\n' "$RUNGS" >"$WORK/config-expired.toml"

# A command line that runs in the sandbox's clean environment, in the project directory.
sandboxed() { # tag config state-dir command...
    local tag=$1 config=$2 state=$3
    shift 3
    printf 'cd %q && env -i HOME=%q PATH=%q TMPDIR=%q LANG=C.UTF-8 BENCH_TAG=%q AGENT_CONFIG=%q AGENT_STATE_DIR=%q' \
        "$WORK/project" "$WORK/home" "$WORK/bin:/usr/bin:/bin" "$WORK/tmp" "$tag" \
        "$WORK/$config" "$WORK/$state"
    printf ' %q' "$@"
}
# How many times the commands tagged TAG ran a CLI's check (anything but `--version`), of
# CLI (any when not given).
checks() { # tag [cli]
    grep "^$1 ${2:-[a-z]*} " "$WORK/calls.log" | grep -vc ' --version$' || true
}

CMD_OLD=$(sandboxed old config.toml state-old agent-baseline --status)
CMD_NEW=$(sandboxed new config-expired.toml state-new agent --status)
CMD_CACHED=$(sandboxed cached config.toml state-cached agent --status)
PROMPT="Reply with the single word ok."
# The CLIs in the very words agent's check gives them (their dialects'), one after another.
SEQ="claude -p '$PROMPT' --output-format json; codex exec --json '$PROMPT'; gemini -o json -p '$PROMPT'"
CMD_SUM=$(sandboxed sum config.toml state-old sh -c "$SEQ")
CMD_SLOWEST=$(sandboxed slowest config.toml state-old gemini -o json -p "$PROMPT")

# ---- what each prints ---------------------------------------------------------------------

show() { # label command
    local out
    out=$(sh -c "$2" 2>&1) || die "$1 failed: $out"
    printf '%s\n' "$out" | sed "s/^/bench: $1: /" >&2
    printf '%s\n' "$out"
}
out=$(show old "$CMD_OLD")
[ "$(printf '%s\n' "$out" | grep -c '^OK')" = 3 ] || die "the baseline's --status did not say OK for the three logins"
[ "$(checks old)" = 0 ] || die "the baseline's --status ran a CLI's check"
out=$(show new "$CMD_NEW")
[ "$(printf '%s\n' "$out" | grep -c "^OK .*answered the CLI's own check")" = 3 ] \
    || die "the new --status did not answer from the three CLIs' own checks"
# The cached command's state: one check, then every measured run is within the cache.
show cached "$CMD_CACHED" >/dev/null
show cached "$CMD_CACHED" >/dev/null
[ "$(checks cached)" = 3 ] || die "the second --status within the cache ran a CLI again"
: >"$WORK/calls.log"

# ---- timing -------------------------------------------------------------------------------

# The two that run no CLI take milliseconds: they get ten times the runs, in a run of
# their own; the three that take seconds are measured side by side in another.
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
say "timing: $WARMUP warmup + $RUNS runs each; fake CLIs sleep ${CLAUDE_DELAY}/${CODEX_DELAY}/${GEMINI_DELAY} s"
hyperfine --style basic --warmup "$WARMUP" --runs "$RUNS" \
    --export-json "$WORK/results-slow.json" \
    -n "new --status, check cache expired" "$CMD_NEW" \
    -n "slowest CLI alone (gemini)" "$CMD_SLOWEST" \
    -n "the three CLIs one after another" "$CMD_SUM" >&2
say "timing: $((3 * WARMUP + 3)) warmup + $((10 * RUNS)) runs each of the two that run no CLI"
hyperfine --style basic --warmup "$((3 * WARMUP + 3))" --runs "$((10 * RUNS))" \
    --export-json "$WORK/results-fast.json" \
    -n "old --status ($BASELINE_LABEL)" "$CMD_OLD" \
    -n "new --status, check cache fresh" "$CMD_CACHED" >&2
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# Every run of the expired command ran each CLI once; the old and the cached ones none.
each=$((WARMUP + RUNS))
for cli in claude codex gemini; do
    n=$(checks new "$cli")
    [ "$n" = "$each" ] || die "new --status ran $cli $n times in $each runs"
done
[ "$(checks old)" = 0 ] || die "the old --status ran a CLI's check"
[ "$(checks cached)" = 0 ] || die "the --status within the cache ran a CLI's check"
say "checks run during the timing: new $(checks new) ($((3 * each)) expected), old $(checks old), cached $(checks cached)"

# ---- report -------------------------------------------------------------------------------

python3 - "$WORK/results-slow.json" "$WORK/results-fast.json" "$RUNS" "$SLEEP" "$CLAUDE_DELAY/$CODEX_DELAY/$GEMINI_DELAY" \
    "$("$AGENT_BIN" --version)" "$(nproc)" "$(uname -sr)" "$LOAD_BEFORE" "$LOAD_AFTER" \
    "$BASELINE_LABEL" <<'PY'
import json, sys

slow, fast, runs, sleep, delays, version, cpus, kernel, load_before, load_after, baseline = sys.argv[1:]
new, slowest, seq = json.load(open(slow))["results"]
old, cached = json.load(open(fast))["results"]


def fmt(r):
    mean, sd = r["mean"], r["stddev"] or 0.0
    if mean >= 0.1:
        return f"{mean:.3f} s ± {sd:.3f} s", f"{r['min']:.3f} s"
    return f"{mean * 1000:.1f} ms ± {sd * 1000:.1f} ms", f"{r['min'] * 1000:.1f} ms"


rows = [
    ("new `--status`, check cache expired (`self_check_cache_seconds = 0`)", new),
    ("the slowest CLI alone (fake `gemini`, its check's words)", slowest),
    ("the three CLIs one after another (a shell: the sum)", seq),
    (f"old `--status` ({baseline}: no CLI run for a login rung)", old),
    ("new `--status` within the check cache", cached),
]
to_slowest = new["mean"] / slowest["mean"]
to_sum = new["mean"] / seq["mean"]
over = (new["mean"] - slowest["mean"]) * 1000

print()
print("---- Markdown for docs/performance.md ----")
print()
print("| command | mean ± σ | min |")
print("|---|---:|---:|")
for label, r in rows:
    mean, low = fmt(r)
    print(f"| {label} | {mean} | {low} |")
print()
print(f"The expired `--status` takes {to_slowest:.2f}× the slowest CLI alone ({over:+.0f} ms) "
      f"and {to_sum:.2f}× the three run one after another. Measured with "
      f"`scripts/bench-status.sh --runs {runs} --sleep {sleep}`: fake CLIs sleeping {delays} s, "
      f"hyperfine, {runs} runs each ({int(runs) * 10} for the last two); {version}, {kernel}, {cpus} CPUs, "
      f"load average {load_before} before and {load_after} after.")
PY
