#!/bin/sh
# Builds agent's release binary the way it is shipped, into target/release/agent, and
# prints that path. POSIX sh.
#
#   scripts/build-release.sh [--dynamic]
#
# On Linux with glibc, when a static libc is installed (Debian: libc6-dev has it), the
# binary is linked statically and not position-independent (the flags
# scripts/release-rustflags.sh gives, as the release workflow's builds get them): a launch
# then maps no shared library and the loader applies no relocation, which
# scripts/bench-launch.sh measured as the largest share of agent's own cost of a launch
# (docs/performance.md). Elsewhere, or with --dynamic, it is cargo's default build.
# install.sh and the benchmarks build through this script, so what they install and
# measure is one build.
#
# A static glibc resolves host names itself (files and DNS, as /etc/nsswitch.conf's usual
# "hosts: files dns"); other name services (mDNS, LDAP) are not loaded by a static binary.
set -eu

dynamic=no
for arg in "$@"; do
    case "$arg" in
        --dynamic) dynamic=yes ;;
        -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) printf 'build-release.sh: unknown argument: %s\n' "$arg" >&2; exit 2 ;;
    esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
host=$(rustc -vV | sed -n 's/^host: //p')
out="$root/target/release/agent"

static_libc_present() {
    command -v cc >/dev/null 2>&1 || return 1
    libc_a=$(cc -print-file-name=libc.a 2>/dev/null) || return 1
    [ -f "$libc_a" ]
}

case "$host" in
    *-linux-gnu)
        if [ "$dynamic" = no ] && static_libc_present; then
            printf 'build-release.sh: static, non-PIE build for %s\n' "$host" >&2
            # --target keeps these flags off build scripts and proc-macros, which cannot
            # be static.
            RUSTFLAGS="${RUSTFLAGS:-} $(sh "$root/scripts/release-rustflags.sh" "$host")" \
                cargo build --release --locked --target "$host" >&2
            mkdir -p "$root/target/release"
            cp "$root/target/$host/release/agent" "$out.tmp.$$"
            mv -f "$out.tmp.$$" "$out"
            printf '%s\n' "$out"
            exit 0
        fi
        ;;
esac
printf 'build-release.sh: default (dynamic) build for %s\n' "$host" >&2
cargo build --release --locked >&2
printf '%s\n' "$out"
