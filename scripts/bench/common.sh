# Helpers shared by the benchmark scripts (sourced, POSIX sh). The script sets BENCH_NAME
# first (for messages) and `work` (its scratch directory, where each server logs) before
# it waits on a server.

say() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; }
die() {
    printf '%s: error: %s\n' "$BENCH_NAME" "$*" >&2
    exit 1
}

# Installs a Debian package when a command is missing (root with apt-get), else says how.
need_debian() { # command package
    command -v "$1" >/dev/null 2>&1 && return 0
    command -v apt-get >/dev/null 2>&1 || die "$1 is missing and there is no apt-get to install $2"
    [ "$(id -u)" = 0 ] || die "$1 is missing: install the Debian package $2 (needs root)"
    say "installing $2 from Debian"
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null || die "apt-get install $2 failed"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until URL answers, for at most TENTHS tenths of a second (default 300), showing the
# end of "$work/WHAT.log" if it never does.
wait_http() { # url what [tenths]
    i=0
    until curl -s -o /dev/null "$1" 2>/dev/null; do
        i=$((i + 1))
        if [ "$i" -ge "${3:-300}" ]; then
            tail -n 20 "$work/$2.log" >&2
            die "$2 did not start"
        fi
        sleep 0.1
    done
}

# The one answer the fixed upstream gives: a small OpenAI chat completion.
BENCH_ANSWER='{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"bench-model","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":1,"total_tokens":9}}'

# A fixed-answer upstream: nginx on 127.0.0.1:PORT answering every request with
# BENCH_ANSWER, EXTRA (more nginx `server` blocks) beside it; waits until it answers and adds
# its pid to $pids.
start_upstream() { # port [extra] [tenths]
    mkdir -p "$work/nginx/logs"
    user_line=""
    [ "$(id -u)" = 0 ] && user_line="user root;"
    cat >"$work/nginx/nginx.conf" <<NGINX
$user_line
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    keepalive_requests 10000000;
    keepalive_timeout 120s;
    tcp_nodelay on;
    server {
        listen 127.0.0.1:$1;
        location / {
            default_type application/json;
            return 200 '$BENCH_ANSWER';
        }
    }
${2:-}
}
NGINX
    nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" >"$work/nginx.log" 2>&1 &
    pids="$pids $!"
    wait_http "http://127.0.0.1:$1/" nginx "${3:-300}"
}
