#!/bin/sh
# The credential relay's added latency, beside LiteLLM's proxy, in one run on one machine.
#
# A fixed-answer upstream (nginx, answering every request with the same OpenAI chat
# completion) listens on loopback. wrk then measures, for each of three paths to it —
# the upstream directly, `agent --relay serve`, and LiteLLM's proxy (from PyPI) — the
# latency at concurrency 1 (sequential) and 32. The added latency of a proxy is its
# percentile minus the direct one. Every request is a POST of the same small chat
# completion; the relay does its full work (token check, budget reservation, key
# injection, usage read, ledger line).
#
#   scripts/bench-relay.sh                 # 8 s per measurement
#   BENCH_SECONDS=15 scripts/bench-relay.sh
#   BENCH_BASELINE=/tmp/agent-old scripts/bench-relay.sh   # also an older build's relay, side by side
#
# Installs what it needs: nginx and wrk from Debian (apt-get, as root), LiteLLM into a
# venv under ${AGENT_BENCH_CACHE:-~/.cache/agent-bench}. Builds agent in release mode.
# Nothing but 127.0.0.1 is ever contacted; every process it starts is stopped at the end.
set -eu

LITELLM_VERSION=1.108.7
SECONDS_EACH=${BENCH_SECONDS:-8}

BENCH_NAME=bench-relay
. "$(dirname "$0")/bench/common.sh"

# p50 and p99 of one wrk run, in microseconds: "P50 P99 REQS_PER_SEC"
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
        $1 == "99%" { p99 = us($2) }
        $1 == "Requests/sec:" { rps = $2 }
        END { printf "%.1f %.1f %.0f\n", p50, p99, rps }'
}

main() {
    cd "$(dirname "$0")/.."
    need_debian nginx nginx-light
    need_debian wrk wrk
    need_debian curl curl
    command -v python3 >/dev/null 2>&1 || die "python3 is needed for LiteLLM"

    cache=${AGENT_BENCH_CACHE:-$HOME/.cache/agent-bench}
    venv=$cache/litellm-$LITELLM_VERSION
    if ! "$venv/bin/python" -c 'import litellm' >/dev/null 2>&1; then
        say "installing litellm[proxy]==$LITELLM_VERSION from PyPI into $venv"
        rm -rf "$venv"
        mkdir -p "$cache"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "litellm[proxy]==$LITELLM_VERSION" ||
            die "pip install litellm[proxy]==$LITELLM_VERSION failed"
    fi

    say "building agent (release)"
    cargo build --release --quiet
    agent=${CARGO_TARGET_DIR:-$PWD/target}/release/agent
    baseline=${BENCH_BASELINE:-}
    [ -z "$baseline" ] || [ -x "$baseline" ] || die "BENCH_BASELINE=$baseline is not an executable"

    work=$(mktemp -d)
    pids=""
    trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done; sleep 0.3; rm -rf "$work"' EXIT
    trap 'exit 130' INT TERM

    # One token for both proxies: the relay's token and LiteLLM's master key (which must
    # start with sk-). Each checks it on every request.
    token=sk-bench-token-0123456789abcdef0123456789
    nginx_port=$(free_port)
    relay_port=$(free_port)
    litellm_port=$(free_port)

    start_upstream "$nginx_port" "" 900

    cat >"$work/config.toml" <<EOF
[budget]
calls = 0
tokens = 0

[relay.upstreams.openai]
base = "http://127.0.0.1:$nginx_port"
EOF
    AGENT_CONFIG=$work/config.toml AGENT_STATE_DIR=$work/state \
        AGENT_RELAY_TOKEN=$token AGENT_RELAY_OPENAI_KEY=sk-bench-upstream \
        "$agent" --quiet --relay serve --listen "127.0.0.1:$relay_port" >"$work/relay.log" 2>&1 &
    pids="$pids $!"
    wait_http "http://127.0.0.1:$relay_port/healthz" relay 900
    if [ -n "$baseline" ]; then
        base_port=$(free_port)
        AGENT_CONFIG=$work/config.toml AGENT_STATE_DIR=$work/state-baseline \
            AGENT_RELAY_TOKEN=$token AGENT_RELAY_OPENAI_KEY=sk-bench-upstream \
            "$baseline" --quiet --relay serve --listen "127.0.0.1:$base_port" >"$work/baseline.log" 2>&1 &
        pids="$pids $!"
        wait_http "http://127.0.0.1:$base_port/healthz" baseline 900
    fi

    cat >"$work/litellm.yaml" <<EOF
model_list:
  - model_name: bench-model
    litellm_params:
      model: openai/bench-model
      api_base: http://127.0.0.1:$nginx_port/v1
      api_key: sk-bench-upstream
litellm_settings:
  set_verbose: false
  telemetry: false
general_settings:
  master_key: $token
EOF
    LITELLM_LOG=ERROR LITELLM_TELEMETRY=False NO_DOCS=True \
        "$venv/bin/litellm" --config "$work/litellm.yaml" --host 127.0.0.1 --port "$litellm_port" \
        >"$work/litellm.log" 2>&1 &
    pids="$pids $!"
    wait_http "http://127.0.0.1:$litellm_port/health/liveliness" litellm 900

    cat >"$work/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '{"model":"bench-model","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer $token"
EOF

    direct=http://127.0.0.1:$nginx_port/v1/chat/completions
    relay=http://127.0.0.1:$relay_port/openai/v1/chat/completions
    litellm=http://127.0.0.1:$litellm_port/v1/chat/completions
    older=""
    [ -z "$baseline" ] || older=http://127.0.0.1:$base_port/openai/v1/chat/completions
    # Warm every path (connection pools, LiteLLM's first-call imports).
    for url in $direct $relay $older $litellm; do
        wrk -t 1 -c 4 -d 2s -s "$work/post.lua" "$url" >/dev/null
    done

    say "measuring ${SECONDS_EACH}s per path and concurrency"
    results=""
    for c in 1 32; do
        d=$(measure "$direct" "$c")
        b="- - -"
        [ -z "$older" ] || b=$(measure "$older" "$c")
        r=$(measure "$relay" "$c")
        l=$(measure "$litellm" "$c")
        results="$results$c $d $r $l $b
"
    done
    calls=$(wc -l <"$work/state/usage.jsonl")

    printf '%s' "$results" | awk -v seconds="$SECONDS_EACH" -v version="$LITELLM_VERSION" -v calls="$calls" '
        function ms(us) { return sprintf("%.3f ms", us / 1000) }
        {
            c = $1; dp50 = $2; dp99 = $3; drps = $4
            rp50 = $5; rp99 = $6; rrps = $7
            lp50 = $8; lp99 = $9; lrps = $10
            bp50 = $11; bp99 = $12; brps = $13
            printf "concurrency %d (%ss each, wrk):\n", c, seconds
            printf "  %-22s p50 %10s  p99 %10s  %8d req/s\n", "upstream directly", ms(dp50), ms(dp99), drps
            printf "  %-22s p50 %10s  p99 %10s  %8d req/s   added: p50 %s, p99 %s\n", "agent relay", ms(rp50), ms(rp99), rrps, ms(rp50 - dp50), ms(rp99 - dp99)
            if (bp50 != "-")
                printf "  %-22s p50 %10s  p99 %10s  %8d req/s   added: p50 %s, p99 %s\n", "agent relay (baseline)", ms(bp50), ms(bp99), brps, ms(bp50 - dp50), ms(bp99 - dp99)
            printf "  %-22s p50 %10s  p99 %10s  %8d req/s   added: p50 %s, p99 %s\n", "LiteLLM " version, ms(lp50), ms(lp99), lrps, ms(lp50 - dp50), ms(lp99 - dp99)
            ra = rp50 - dp50; la = lp50 - dp50
            if (ra > 0) printf "  LiteLLM adds %.0fx the relay'"'"'s latency at p50", la / ra
            ra = rp99 - dp99; la = lp99 - dp99
            if (ra > 0) printf ", %.0fx at p99", la / ra
            printf "\n"
        }
        END { printf "the relay recorded %d calls in its ledger\n", calls }'
}

main "$@"
