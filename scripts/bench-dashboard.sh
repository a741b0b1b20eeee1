#!/usr/bin/env bash
# How long `agent --dashboard` takes to render its page over a 1,000,000-line ledger (the
# usage benchmark's data, benches/usage.rs), and how much the page weighs. Goals: < 50 ms
# at the median, < 100 KB. Prints a Markdown snippet for docs/performance.md at the end.
#
#   scripts/bench-dashboard.sh [--runs N] [--lines N] [--no-build]
#   BENCH_BASELINE=/tmp/agent-old scripts/bench-dashboard.sh   # also an older build, side by side
#
# The first load reads the whole ledger; the median is over the loads after it, each of
# which first appends one line to the ledger (as a running agent would), so every load
# has something new to read. Peak RSS is the dashboard's (Linux). Needs cargo and curl. Everything stays on 127.0.0.1.
set -euo pipefail

RUNS=21
LINES=1000000
BUILD=1
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        --lines) LINES=${2:?--lines needs a number}; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() { printf 'bench: %s\n' "$*" >&2; }
work=$(mktemp -d)
server=""
stop() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    server=""
}
cleanup() {
    stop
    rm -rf "$work"
}
trap cleanup EXIT

if [ "$BUILD" = 1 ]; then
    say "building the release binary"
    cargo build --release --quiet
fi
mkdir -p "$work/home" "$work/state"
say "writing a $LINES-line ledger"
LINES=$LINES LEDGER_ONLY="$work/state/usage.jsonl" cargo bench --quiet --bench usage >/dev/null

# One line like the ledger's, for now (inside the page's window).
extra=$(tail -n 1 "$work/state/usage.jsonl" | sed "s/\"time\":\"[^\"]*\"/\"time\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"/")

measure() { # binary label
    rm -f "$work/url"
    HOME="$work/home" AGENT_STATE_DIR="$work/state" XDG_CONFIG_HOME="$work/home/.config" \
        "$1" --dashboard >"$work/url" 2>/dev/null &
    server=$!
    for _ in $(seq 100); do
        [ -s "$work/url" ] && break
        sleep 0.1
    done
    url=$(sed -n 's/^dashboard: //p' "$work/url")
    [ -n "$url" ] || { say "the dashboard did not start"; exit 1; }
    base=${url%%/\?*}
    # The printed URL opens one session: its cookie, in curl's jar, opens every load.
    rm -f "$work/cookies"
    curl -s -o /dev/null -c "$work/cookies" "$url"
    first=$(curl -s -o "$work/page.html" -w '%{time_total}' -b "$work/cookies" "$base/")
    times=()
    for _ in $(seq "$RUNS"); do
        printf '%s\n' "$extra" >>"$work/state/usage.jsonl"
        times+=("$(curl -s -o "$work/page.html" -w '%{time_total}' -b "$work/cookies" "$base/")")
    done
    rss=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$server/status" 2>/dev/null || echo "?")
    stop
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] * 1000 }')
    fastest=$(printf '%s\n' "${times[@]}" | sort -n | awk 'NR == 1 { printf "%.1f", $1 * 1000 }')
    first=$(awk -v t="$first" 'BEGIN { printf "%.0f", t * 1000 }')
    size=$(wc -c <"$work/page.html")
    echo "| $2 | $LINES | $first ms | $median ms | $fastest ms | $((size / 1024)) KB | $rss MB |"
}

echo "| build | ledger lines | first load | median load | fastest | page size | peak RSS |"
echo "|---|---:|---:|---:|---:|---:|---:|"
if [ -n "${BENCH_BASELINE:-}" ]; then
    measure "$BENCH_BASELINE" "baseline"
fi
measure target/release/agent "this build"
