#!/bin/sh
# Prints the RUSTFLAGS that make agent's release build the fast launch for a target: on
# Linux, a static libc and a binary that is not position-independent; elsewhere nothing.
# POSIX sh. One place for these flags: scripts/build-release.sh (./install.sh), the release
# workflow (.github/release-build-setup.yml, before `dist build`) and
# scripts/release-smoke.sh all ask it.
#
#   scripts/release-rustflags.sh TARGET
#
# -C target-feature=+crt-static links libc into the binary (musl's default, said anyway);
# -C relocation-model=static makes an ET_EXEC binary the loader maps and never relocates.
# scripts/bench-launch.sh measured the two as the largest share of agent's own cost of a
# warm launch (docs/performance.md). macOS has no static libSystem and requires PIE, so
# its build is cargo's default. Pass the flags with --target (dist and build-release.sh do):
# without it they would reach build scripts and proc-macros, which cannot be static.
set -eu

case "${1:-}" in
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    '') printf 'release-rustflags.sh: which target? (e.g. x86_64-unknown-linux-musl)\n' >&2; exit 2 ;;
    *-linux-musl | *-linux-gnu) printf '%s\n' '-C target-feature=+crt-static -C relocation-model=static' ;;
    *) printf '\n' ;;
esac
