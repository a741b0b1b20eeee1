#!/bin/sh
# Makes docs/dashboard.png, docs/dashboard.md's picture of `agent --dashboard`, from a sandbox
# that looks like a subscriber's day (tests/dashboard.rs `the_readme_screenshot`): Claude
# Code parked by its full 5-hour window, Codex proved by its own check at 62 % of its
# 5-hour window, Gemini OK, a week of usage. Needs Chromium (Debian's `chromium`).
set -eu

main() {
    root=$(cd "$(dirname "$0")/.." && pwd)
    need_cmd cargo
    need_cmd chromium
    AGENT_DASHBOARD_SCREENSHOT="$root/docs/dashboard.png" \
        cargo test --manifest-path "$root/Cargo.toml" --test lib \
        dashboard::the_readme_screenshot -- --exact --quiet
    echo "wrote $root/docs/dashboard.png"
}

need_cmd() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "dashboard-screenshot: needs $1" >&2
        exit 1
    fi
}

main "$@"
