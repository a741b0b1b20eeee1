#!/bin/sh
# The relay with its state in files (the default) beside the relay with its state on Redis
# (`[store] kind = "redis"`), in one run on one machine.
#
# A fixed-answer upstream (nginx, answering every POST with the same OpenAI chat
# completion) and a redis-server listen on loopback. wrk measures, for the upstream
# directly, the relay on the file store and the relay on the Redis store, the latency at
# concurrency 1 and the throughput at 32; the added latency of a relay is its p50 minus the
# direct one. Then budget exactness under load: two relay replicas on the Redis store with
# a team cap of N calls get 3N calls at concurrency 32 between them (scripts/bench/fire.py),
# and the upstream's access log counts how many reached it — exactly N, or the script fails.
#
#   scripts/bench-store.sh                     # 8 s per measurement, N = 500
#   BENCH_SECONDS=4 BENCH_CAP=1000 scripts/bench-store.sh
#
# Installs what it needs from Debian (apt-get, as root): nginx, wrk, curl, redis-server.
# Builds agent in release mode. Nothing but 127.0.0.1 is ever contacted; every process it
# starts is stopped at the end.
set -eu

SECONDS_EACH=${BENCH_SECONDS:-8}
CAP=${BENCH_CAP:-500}

BENCH_NAME=bench-store
. "$(dirname "$0")/bench/common.sh"

# p50 of one wrk run in microseconds, and requests a second: "P50 REQS_PER_SEC"
measure() { # url connections
    threads=1
    [ "$2" -gt 1 ] && threads=2
    out=$(wrk -t "$threads" -c "$2" -d "${SECONDS_EACH}s" --latency -s "$work/post.lua" "$1")
    echo "$out" >>"$work/wrk.log"
    if echo "$out" | grep -q 'Non-2xx'; then
        echo "$out" >&2
        die "non-2xx answers from $1"
    fi
    echo "$out" | awk '
        function us(v) {
            if (v ~ /us$/) { sub(/us$/, "", v); return v + 0 }
            if (v ~ /ms$/) { sub(/ms$/, "", v); return v * 1000 }
            if (v ~ /s$/) { sub(/s$/, "", v); return v * 1000000 }
            return v
        }
        $1 == "50%" { p50 = us($2) }
        $1 == "Requests/sec:" { rps = $2 }
        END { printf "%.1f %.0f\n", p50, rps }'
}

# `agent --relay serve` on 127.0.0.1:PORT with CONFIG and a state directory of its own;
# its pid is left in $relay_pid.
start_relay() { # name config port
    AGENT_CONFIG=$2 AGENT_STATE_DIR=$work/state-$1 \
        AGENT_RELAY_TOKEN=$token AGENT_RELAY_OPENAI_KEY=sk-bench-upstream \
        "$agent" --quiet --relay serve --listen "127.0.0.1:$3" >"$work/$1.log" 2>&1 &
    relay_pid=$!
    pids="$pids $relay_pid"
    wait_http "http://127.0.0.1:$3/healthz" "$1"
}

main() {
    cd "$(dirname "$0")/.."
    need_debian nginx nginx-light
    need_debian wrk wrk
    need_debian curl curl
    need_debian redis-server redis-server
    need_debian redis-cli redis-tools
    command -v python3 >/dev/null 2>&1 || die "python3 is needed for the load client"

    say "building agent (release)"
    cargo build --release --quiet
    agent=${CARGO_TARGET_DIR:-$PWD/target}/release/agent

    work=$(mktemp -d)
    pids=""
    trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done; sleep 0.3; rm -rf "$work"' EXIT
    trap 'exit 130' INT TERM

    token=sk-bench-token-0123456789abcdef0123456789
    nginx_port=$(free_port)
    counted_port=$(free_port)
    redis_port=$(free_port)
    files_port=$(free_port)
    shared_port=$(free_port)
    replica_a_port=$(free_port)
    replica_b_port=$(free_port)

    # Beside the upstream, a second server with the same answer that logs every request,
    # so the calls that reached the upstream in the exactness run can be counted.
    mkdir -p "$work/redis"
    start_upstream "$nginx_port" "    server {
        listen 127.0.0.1:$counted_port;
        access_log $work/nginx/counted.log;
        location / {
            default_type application/json;
            return 200 '$BENCH_ANSWER';
        }
    }"

    redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
        --dir "$work/redis" >"$work/redis.log" 2>&1 &
    pids="$pids $!"
    i=0
    until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do
        i=$((i + 1))
        [ "$i" -lt 100 ] || die "redis-server did not start"
        sleep 0.1
    done

    cat >"$work/files.toml" <<EOF
[budget]
calls = 0
tokens = 0

[relay.upstreams.openai]
base = "http://127.0.0.1:$nginx_port"
EOF
    cat >"$work/shared.toml" <<EOF
[store]
kind = "redis"
url = "redis://127.0.0.1:$redis_port"
prefix = "bench-latency"

$(cat "$work/files.toml")
EOF
    cat >"$work/capped.toml" <<EOF
[store]
kind = "redis"
url = "redis://127.0.0.1:$redis_port"
prefix = "bench-exact"

[budget]
calls = $CAP
tokens = 0

[relay.upstreams.openai]
base = "http://127.0.0.1:$counted_port"
EOF
    start_relay files "$work/files.toml" "$files_port"
    start_relay shared "$work/shared.toml" "$shared_port"
    start_relay replica-a "$work/capped.toml" "$replica_a_port"
    replica_a=$relay_pid
    start_relay replica-b "$work/capped.toml" "$replica_b_port"
    replica_b=$relay_pid

    cat >"$work/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '{"model":"bench-model","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer $token"
EOF
    direct=http://127.0.0.1:$nginx_port/v1/chat/completions
    files=http://127.0.0.1:$files_port/openai/v1/chat/completions
    shared=http://127.0.0.1:$shared_port/openai/v1/chat/completions
    for url in $direct $files $shared; do
        wrk -t 1 -c 4 -d 2s -s "$work/post.lua" "$url" >/dev/null
    done

    say "measuring ${SECONDS_EACH}s per path and concurrency"
    d1=$(measure "$direct" 1)
    f1=$(measure "$files" 1)
    s1=$(measure "$shared" 1)
    d32=$(measure "$direct" 32)
    f32=$(measure "$files" 32)
    s32=$(measure "$shared" 32)

    say "budget exactness: cap $CAP, $((3 * CAP)) calls at concurrency 32 over two replicas"
    answers=$(python3 scripts/bench/fire.py "$((3 * CAP))" 32 "$token" \
        "http://127.0.0.1:$replica_a_port/openai/v1/chat/completions" \
        "http://127.0.0.1:$replica_b_port/openai/v1/chat/completions")
    # SIGTERM: the replicas write their last ledger lines before they exit.
    kill "$replica_a" "$replica_b"
    wait "$replica_a" "$replica_b" || true
    reached=$(wc -l <"$work/nginx/counted.log")
    ok=$(echo "$answers" | awk '$1 == 200 { print $2 }')
    refused=$(echo "$answers" | awk '$1 == 429 { print $2 }')
    lines=$(redis-cli -p "$redis_port" xlen bench-exact:ledger)
    counted=$(redis-cli -p "$redis_port" --scan --pattern 'bench-exact:budget:*' |
        grep -v ':limits$' | head -n 1 | xargs -r -I KEY redis-cli -p "$redis_port" hget KEY calls)

    printf '%s %s %s\n%s %s %s\n' "$d1" "$f1" "$s1" "$d32" "$f32" "$s32" | awk -v seconds="$SECONDS_EACH" '
        function ms(us) { return sprintf("%.3f ms", us / 1000) }
        NR == 1 {
            printf "concurrency 1 (%ss each, wrk):\n", seconds
            printf "  %-26s p50 %10s  %8d req/s\n", "upstream directly", ms($1), $2
            printf "  %-26s p50 %10s  %8d req/s   added p50 %s\n", "relay, file store", ms($3), $4, ms($3 - $1)
            printf "  %-26s p50 %10s  %8d req/s   added p50 %s\n", "relay, Redis store", ms($5), $6, ms($5 - $1)
        }
        NR == 2 {
            printf "concurrency 32:\n"
            printf "  %-26s p50 %10s  %8d req/s\n", "upstream directly", ms($1), $2
            printf "  %-26s p50 %10s  %8d req/s\n", "relay, file store", ms($3), $4
            printf "  %-26s p50 %10s  %8d req/s\n", "relay, Redis store", ms($5), $6
        }'
    printf 'budget exactness (cap %d, %d calls at concurrency 32, two replicas on Redis):\n' "$CAP" "$((3 * CAP))"
    printf '  reached the upstream %d, answered 200 %s, 429 %s; ledger stream %s lines; budget counted %s\n' \
        "$reached" "${ok:-0}" "${refused:-0}" "$lines" "${counted:-?}"
    [ "$reached" -eq "$CAP" ] || die "$reached calls reached the upstream, not the cap's $CAP"
    [ "${ok:-0}" -eq "$CAP" ] || die "${ok:-0} calls were answered 200, not the cap's $CAP"
    [ "$lines" -eq "$((3 * CAP))" ] || die "the ledger stream has $lines lines, not one per call"
}

main "$@"
