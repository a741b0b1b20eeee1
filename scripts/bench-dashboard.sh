#!/usr/bin/env bash
# How long `agent --dashboard` takes to render its page over a 1,000,000-line ledger (the
# usage benchmark's data, benches/usage.rs), and how much the page weighs. Goals: < 50 ms
# at the median, < 100 KB. Prints a Markdown snippet for the README at the end.
#
#   scripts/bench-dashboard.sh [--runs N] [--lines N] [--no-build]
#
# Needs cargo and curl. Everything stays on 127.0.0.1.
set -euo pipefail

RUNS=21
LINES=1000000
BUILD=1
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        --lines) LINES=${2:?--lines needs a number}; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() { printf 'bench: %s\n' "$*" >&2; }
work=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
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

HOME="$work/home" AGENT_STATE_DIR="$work/state" XDG_CONFIG_HOME="$work/home/.config" \
    target/release/agent --dashboard >"$work/url" 2>/dev/null &
server=$!
for _ in $(seq 100); do
    [ -s "$work/url" ] && break
    sleep 0.1
done
url=$(sed -n 's/^dashboard: //p' "$work/url")
[ -n "$url" ] || { say "the dashboard did not start"; exit 1; }
base=${url%%/\?*}
token=${url##*token=}

times=()
for _ in $(seq "$RUNS"); do
    times+=("$(curl -s -o "$work/page.html" -w '%{time_total}' -H "Authorization: Bearer $token" "$base/")")
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.0f", a[int((NR + 1) / 2)] * 1000 }')
fastest=$(printf '%s\n' "${times[@]}" | sort -n | awk 'NR == 1 { printf "%.0f", $1 * 1000 }')
size=$(wc -c <"$work/page.html")
echo "| ledger lines | page median | fastest | page size |"
echo "|---:|---:|---:|---:|"
echo "| $LINES | $median ms | $fastest ms | $((size / 1024)) KB |"
