#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2153 # $HOME for a shell to expand; variables passed into the namespace
# Proves the release installs without Rust, offline, as a user would install it: the same
# dist and configuration as the release workflow build this machine's archive and the
# installers, a static file server on loopback stands in for the GitHub release, and each
# way in — the shell installer, the npm package, the archive by hand as README's Get it says
# — is run in a fresh home under `env -i`, then agent runs from there.
#
#   scripts/release-smoke.sh [--no-build] [--keep]
#
#   --no-build  reuse the archive and installers of the last run (iterating on this script)
#   --keep      keep the sandbox (homes, server logs) and say where it is
#
# 1. dist, at the version dist-workspace.toml pins (from PyPI, cached in
#    ${AGENT_DIST_CACHE:-~/.cache/agent-dist}), plans the release: it prints the targets
#    and artifacts, and fails when .github/workflows/release.yml is not what the
#    configuration generates.
# 2. dist builds with the release's configuration plus this machine's target: the release
#    builds Linux for musl, which this machine has no Rust target for, so
#    x86_64-unknown-linux-gnu stands in, with the same fast-launch flags
#    (scripts/release-rustflags.sh: static, non-PIE). The build runs in a copy of the
#    checkout under target/release-smoke (its dist-workspace.toml gains the one target)
#    and shares target/ with the checkout's builds.
# 3. Everything after that runs in a network namespace of its own whose only interface is
#    loopback (unshare -n): an installer that ignored its loopback URL cannot reach GitHub,
#    it fails here, and the script says the override was not honoured. In it:
#    a. `curl … /agent-installer.sh | sh` with AGENT_DOWNLOAD_URL at the server;
#    b. `npm install -g` of the generated npm package, its download URL the server's
#       (npm itself offline, from the cache the script fills before: one small module);
#    c. README's Get it "by hand" block, run as written but for its URL and target;
#    each then `agent --version` (the linkage it claims, checked against its ELF header),
#    `agent --doctor`, and a launch whose probe reaches a mock API as `localhost` (a host
#    name resolved through /etc/hosts by the installed binary) before a fake `claude` on a
#    temporary PATH gets `-p hi`. The time from running the installer to agent answering
#    is printed for each. A corrupted archive and an archive whose checksum is wrong are
#    each refused by the shell installer and by the README's commands with nothing
#    installed; the corrupted one by the npm package too (dist's npm installer checks no
#    checksum: the script shows that a well-formed archive of other bytes gets in there,
#    and that its node wrapper turns a CLI's death by a signal into exit 0, as README says).
#    README's uninstall after the installer and `npm uninstall -g` leave nothing of agent.
#    The binstall metadata and the Homebrew formula are checked against the served archive.
#
# Linux only (network namespaces, ELF). Needs python3 (with venv), node and npm, curl, xz,
# sha256sum, unshare and ip.
set -euo pipefail

BUILD=1
KEEP=0
INSIDE=0
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) BUILD=0; shift ;;
        --keep) KEEP=1; shift ;;
        --inside-namespace) INSIDE=1; shift ;;
        -h | --help) sed -n '3,44p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) printf 'release-smoke: unknown argument: %s\n' "$1" >&2; exit 2 ;;
    esac
done

say() { printf 'release-smoke: %s\n' "$*" >&2; }
die() {
    printf 'release-smoke: FAILED: %s\n' "$*" >&2
    exit 1
}
need_cmd() { command -v "$1" >/dev/null 2>&1 || die "$1 is missing ($2)"; }
now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)

# ---- outside: plan, build, prepare --------------------------------------------------------

outside() {
    [ "$(uname -s)" = Linux ] || die "Linux only: the installs run in a network namespace of their own"
    need_cmd python3 "it installs dist and serves the release"
    need_cmd node "the npm package runs on it"
    need_cmd npm "it installs the npm package"
    need_cmd curl "the installer and the README download with it"
    need_cmd xz "the archives are .tar.xz"
    need_cmd sha256sum "the checksums"
    need_cmd unshare "the installs run with loopback alone"
    need_cmd ip "it brings loopback up in the installs' namespace"
    local started
    started=$(now)
    cd "$ROOT"

    local dist_version dist
    dist_version=$(sed -n 's/^cargo-dist-version = "\(.*\)"$/\1/p' dist-workspace.toml)
    [ -n "$dist_version" ] || die "dist-workspace.toml names no cargo-dist-version"
    dist=$(install_dist "$dist_version")

    say "dist plan (the release: its targets and artifacts; fails when release.yml is stale)"
    "$dist" plan >&2 || die "dist plan failed: the release workflow and dist-workspace.toml disagree (run: $dist generate)"

    local host tree distrib
    host=$(rustc -vV | sed -n 's/^host: //p')
    tree="$ROOT/target/release-smoke/tree"
    distrib="$tree/target/distrib"
    if [ "$BUILD" -eq 1 ]; then
        build_release "$dist" "$host" "$tree"
    fi
    [ -f "$distrib/agent-$host.tar.xz" ] || die "no archive for $host in $distrib (run without --no-build)"

    SANDBOX=$(mktemp -d "${TMPDIR:-/tmp}/agent-release-smoke.XXXXXX")
    export SANDBOX
    trap cleanup EXIT
    prepare_release "$distrib" "$host" "$dist_version"

    say "the installs, in a network namespace with loopback alone"
    local unshare=(unshare --net)
    [ "$(id -u)" -eq 0 ] || unshare=(unshare --net --map-root-user)
    "${unshare[@]}" -- env SANDBOX="$SANDBOX" HOST_TARGET="$host" ROOT="$ROOT" \
        NPM_CACHE="$NPM_CACHE" DIST_VERSION="$dist_version" \
        bash "$ROOT/scripts/release-smoke.sh" --inside-namespace \
        || die "an install failed (above)"
    cat "$SANDBOX/times" >&2
    say "passed in $(seconds_since "$started") s"
}

cleanup() {
    if [ "$KEEP" -eq 1 ]; then
        say "sandbox kept at $SANDBOX"
    else
        rm -rf "$SANDBOX"
    fi
}

# dist at VERSION: the one on PATH when it is that version, else Astral's build of that
# tag from PyPI (astral-dev-toolchain-cargo-dist) in a cached virtualenv. Prints its path.
install_dist() {
    local version=$1 venv
    if command -v dist >/dev/null 2>&1 && [ "$(dist --version 2>/dev/null)" = "cargo-dist $version" ]; then
        command -v dist
        return
    fi
    venv="${AGENT_DIST_CACHE:-$HOME/.cache/agent-dist}/$version"
    if [ "$("$venv/bin/dist" --version 2>/dev/null)" != "cargo-dist $version" ]; then
        say "installing dist $version from PyPI into $venv"
        rm -rf "$venv"
        python3 -m venv "$venv" >&2 || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
        "$venv/bin/pip" install --quiet "astral-dev-toolchain-cargo-dist==$version" >&2 \
            || die "could not install dist $version from PyPI"
    fi
    [ "$("$venv/bin/dist" --version)" = "cargo-dist $version" ] || die "$venv/bin/dist is not dist $version"
    printf '%s\n' "$venv/bin/dist"
}

# Builds the archive for HOST and the installers with dist, in a copy of the checkout
# whose configuration gains HOST as a target (nothing else changes).
build_release() {
    local dist=$1 host=$2 tree=$3 built
    say "copying the checkout to $tree (tracked and new files; their times kept, so cargo reuses what did not change)"
    rm -rf "$tree"
    mkdir -p "$tree"
    git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' path; do [ -e "$ROOT/$path" ] && printf '%s\0' "$path"; done |
        tar -C "$ROOT" --null -T - -cf - | tar -C "$tree" -xpf -
    # The copy's commit is the checkout's (build.rs asks git for `--version`).
    printf 'gitdir: %s\n' "$(git -C "$ROOT" rev-parse --absolute-git-dir)" >"$tree/.git"
    python3 - "$tree/dist-workspace.toml" "$host" <<'EOF'
import sys
path, host = sys.argv[1:]
text = open(path).read()
changed = text.replace("targets = [\n", f'targets = [\n    "{host}",\n', 1)
if changed == text:
    sys.exit("release-smoke: dist-workspace.toml has no 'targets = [' line to add the host to")
open(path, "w").write(changed)
EOF
    # The two steps of the release workflow: each target's job builds its archive (with
    # the flags .github/release-build-setup.yml sets) and keeps its manifest in
    # target/distrib, then one job builds the installers from those manifests (the
    # checksums written into the shell installer come from them).
    local flags
    flags=$(sh "$ROOT/scripts/release-rustflags.sh" "$host")
    say "dist build --artifacts=local --target=$host (RUSTFLAGS=$flags), as the release workflow's build job"
    built=$(now)
    (cd "$tree" && RUSTFLAGS="$flags" CARGO_TARGET_DIR="$ROOT/target" \
        "$dist" build --print=linkage --output-format=json --artifacts=local --target="$host" \
        --allow-dirty >dist-manifest.json) || die "dist build (local artifacts) failed"
    cp "$tree/dist-manifest.json" "$tree/target/distrib/$host-dist-manifest.json"
    say "dist build --artifacts=global, as the release workflow's installers job"
    (cd "$tree" && "$dist" build --output-format=json --artifacts=global --allow-dirty \
        >dist-manifest-global.json) || die "dist build (installers) failed"
    say "dist build took $(seconds_since "$built") s"
}

# Lays out the release as GitHub would serve it (a good one, one with flipped bytes, one
# whose archive is well-formed but not the one its checksum names), the npm package
# pointed at the server, and npm's cache of the package's one module.
prepare_release() {
    local distrib=$1 host=$2 version=$3 tag archive
    tag="v$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -n 1)"
    archive="agent-$host.tar.xz"
    mkdir -p "$SANDBOX/www/good/$tag" "$SANDBOX/www/corrupt/$tag" "$SANDBOX/www/tampered/$tag"
    cp "$distrib"/*.tar.xz "$distrib"/*.sha256 "$distrib/sha256.sum" "$distrib/agent-installer.sh" \
        "$distrib/agent.rb" "$distrib/agent-npm-package.tar.gz" "$SANDBOX/www/good/$tag/"
    for bad in corrupt tampered; do
        cp "$SANDBOX/www/good/$tag"/* "$SANDBOX/www/$bad/$tag/"
    done
    # Flipped bytes in the middle of the compressed stream.
    python3 - "$SANDBOX/www/corrupt/$tag/$archive" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
for i in range(len(data) // 2, len(data) // 2 + 64):
    data[i] ^= 0xFF
open(sys.argv[1], "wb").write(data)
EOF
    # Well-formed, the same files, one README line more: another archive, not the one
    # the checksums name.
    mkdir -p "$SANDBOX/retar"
    tar -C "$SANDBOX/retar" -xJf "$distrib/$archive"
    echo "not the release" >>"$SANDBOX/retar/agent-$host/README.md"
    tar -C "$SANDBOX/retar" -cJf "$SANDBOX/www/tampered/$tag/$archive" "agent-$host"
    rm -rf "$SANDBOX/retar"
    printf '%s\n' "$tag" >"$SANDBOX/tag"

    # npm's cache gets the package's module from the registry now; the install inside
    # the namespace is offline.
    NPM_CACHE=${npm_config_cache:-$HOME/.npm}
    export NPM_CACHE
    say "filling npm's cache ($NPM_CACHE) with the npm package's dependencies"
    mkdir -p "$SANDBOX/npm-prime"
    npm install --prefix "$SANDBOX/npm-prime" --cache "$NPM_CACHE" --ignore-scripts --no-audit \
        --no-fund --loglevel=error "$distrib/agent-npm-package.tar.gz" >&2 \
        || die "npm could not fetch the npm package's dependencies"
    rm -rf "$SANDBOX/npm-prime"
}

# ---- inside the namespace: serve, install, run --------------------------------------------

inside() {
    ip link set lo up || die "could not bring loopback up in the namespace"
    if getent hosts github.com >/dev/null 2>&1; then
        die "github.com resolves inside the namespace: it is not offline"
    fi
    local tag host
    tag=$(cat "$SANDBOX/tag")
    host=$HOST_TARGET
    : >"$SANDBOX/times"

    # The release host: a static file server on 127.0.0.1, on a port the kernel picks.
    python3 -u -m http.server --bind 127.0.0.1 --directory "$SANDBOX/www" 0 \
        >"$SANDBOX/www.out" 2>"$SANDBOX/www.log" &
    local server=$!
    local port=""
    for _ in $(seq 200); do
        port=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$SANDBOX/www.out" | head -n 1)
        [ -n "$port" ] && break
        kill -0 "$server" 2>/dev/null || die "the file server did not start: $(cat "$SANDBOX/www.log")"
        sleep 0.05
    done
    [ -n "$port" ] || die "the file server printed no port"
    WWW="http://127.0.0.1:$port"
    say "the release is served at $WWW/good/$tag"

    # The API agent probes, reached by name: `localhost`, through /etc/hosts.
    grep -Eq '^127\.0\.0\.1[[:space:]].*\blocalhost\b' /etc/hosts \
        || die "/etc/hosts has no 127.0.0.1 localhost line"
    python3 "$ROOT/scripts/mock-anthropic.py" --log "$SANDBOX/mock.log" >"$SANDBOX/mock.port" &
    local mock=$!
    for _ in $(seq 200); do
        [ -s "$SANDBOX/mock.port" ] && break
        kill -0 "$mock" 2>/dev/null || die "the mock API did not start"
        sleep 0.05
    done
    MOCK_URL="http://localhost:$(head -n 1 "$SANDBOX/mock.port")"
    trap 'kill '"$server $mock"' 2>/dev/null || true' EXIT

    check_release_metadata "$tag" "$host"

    shell_installer_installs "$tag"
    npm_package_installs "$tag" "$host"
    readme_by_hand_installs "$tag" "$host"

    shell_installer_refuses corrupt "$tag"
    shell_installer_refuses tampered "$tag"
    readme_by_hand_refuses corrupt "$tag" "$host"
    readme_by_hand_refuses tampered "$tag" "$host"
    npm_package_refuses_corrupt "$tag" "$host"
    npm_package_checks_no_checksum "$tag" "$host"
}

# A fresh, empty home; prints its path.
fresh_home() {
    local home
    home=$(mktemp -d "$SANDBOX/home-$1.XXXXXX")
    printf '%s\n' "$home"
}

# Runs a command as a new user's shell would: an empty environment but HOME, a PATH of the
# system's directories (and EXTRA_PATH before them) and the variables given.
clean_env() {
    local home=$1
    shift
    env -i HOME="$home" PATH="${EXTRA_PATH:+$EXTRA_PATH:}/usr/local/bin:/usr/bin:/bin" \
        LANG=C.UTF-8 "$@"
}

# The requests the file server logged for PATH (a substring) since the mark.
served() {
    grep -c "\"GET [^ ]*$1 HTTP" "$SANDBOX/www.log" || true
}

# The files under HOME (the installers' own leftovers in it count too).
files_in() {
    (cd "$1" && find . -mindepth 1 \( -type f -o -type l \) | sort)
}

# The shell installer of the release at RELEASE (a path on the server), as `curl | sh`
# runs it, in HOME's clean environment, its downloads pointed at the server.
shell_install() {
    local release=$1 home=$2
    clean_env "$home" AGENT_DOWNLOAD_URL="$WWW/$release" sh -c \
        "curl --proto '=http' -LsSf '$WWW/$release/agent-installer.sh' | sh"
}

# `npm install -g` of the npm package PACKAGE (a tarball) into HOME/.npm-global, npm offline.
npm_install() {
    local package=$1 home=$2
    clean_env "$home" npm install -g --offline --cache "$NPM_CACHE" --prefix "$home/.npm-global" \
        --no-audit --no-fund --loglevel=error "$package"
}

# a. The shell installer, as `curl | sh` runs it.
shell_installer_installs() {
    local tag=$1 home before started
    home=$(fresh_home shell)
    before=$(served "/good/$tag/agent-$HOST_TARGET.tar.xz")
    started=$(now)
    shell_install "good/$tag" "$home" >"$SANDBOX/shell.out" 2>&1 || {
        cat "$SANDBOX/shell.out" >&2
        die "the shell installer failed"
    }
    [ "$(served "/good/$tag/agent-$HOST_TARGET.tar.xz")" -gt "$before" ] \
        || die "the shell installer did not download from $WWW: AGENT_DOWNLOAD_URL was not honoured"
    local agent="$home/.local/bin/agent"
    agent_answers shell "$home" "$agent" "$started" 'shell installer (curl | sh):'
    say "shell installer: installed $(files_in "$home" | tr '\n' ' ')"
    # PATH: ~/.profile sources the installer's env.sh, which puts ~/.local/bin first.
    grep -qF '. "$HOME/.config/agent/env.sh"' "$home/.profile" \
        || die "the shell installer did not source its env.sh from ~/.profile"
    [ "$(clean_env "$home" sh -c '. "$HOME/.profile"; command -v agent')" = "$agent" ] \
        || die "a login shell's profile does not put the installed agent on PATH"
    agent_runs shell "$home" "$agent" "$home/.local/bin"
    readme_uninstall_after_the_installer "$home"
}

# README's Get it uninstall after the installer: its `rm` list is every file the installer
# wrote but the profiles it added a line to.
readme_uninstall_after_the_installer() {
    local home=$1 files left
    files=$(python3 - "$ROOT/README.md" <<'EOF'
import re, sys
text = " ".join(open(sys.argv[1]).read().split())
found = re.search(r"To uninstall: after the installer, `rm ([^`]+)`", text)
if not found:
    sys.exit("release-smoke: README's Get it has no `rm …` to uninstall after the installer")
print("\n".join(found.group(1).split()))
EOF
) || die "README's uninstall after the installer is not found"
    (cd "$home" && rm -f fake-bin/claude calls/claude.args config.toml && rmdir fake-bin calls)
    rm -rf "$home/.local/state"
    while IFS= read -r file; do
        # shellcheck disable=SC2088 # README's words, matched as written
        case "$file" in
            "~/"*) rm "$home/${file#\~/}" || die "README's uninstall names $file, which the installer did not write" ;;
            *) die "README's uninstall names $file, not a file under ~" ;;
        esac
    done <<<"$files"
    left=$(files_in "$home" | tr '\n' ' ')
    [ "$left" = "./.profile ./.zshrc " ] \
        || die "after README's uninstall the installer's files are left: $left"
    say "shell installer: README's uninstall removed every file it wrote but the profiles it added a line to"
}

# The install LABEL put AGENT in place and it answers --version in HOME's clean
# environment; records the time since STARTED (the installer's start) under WHAT.
agent_answers() {
    local label=$1 home=$2 agent=$3 started=$4 what=$5
    [ -x "$agent" ] || die "$label: the install left no agent at $agent: $(cat "$SANDBOX/$label.out")"
    clean_env "$home" "$agent" --version >"$SANDBOX/$label.version" \
        || die "$label: the installed agent does not run: $agent --version"
    printf '%-30s %s s from running the installer to agent answering\n' "$what" \
        "$(seconds_since "$started")" >>"$SANDBOX/times"
}

# b. The npm package: `npm install -g` of its tarball, pointed at the server.
npm_package_installs() {
    local tag=$1 host=$2 home package before started
    home=$(fresh_home npm)
    package=$(npm_package_at "$WWW/good/$tag" npm-good)
    before=$(served "/good/$tag/agent-$host.tar.xz")
    started=$(now)
    npm_install "$package" "$home" >"$SANDBOX/npm.out" 2>&1 || {
        cat "$SANDBOX/npm.out" >&2
        die "npm install -g of the npm package failed"
    }
    [ "$(served "/good/$tag/agent-$host.tar.xz")" -gt "$before" ] \
        || die "the npm package did not download from $WWW"
    local agent="$home/.npm-global/bin/agent"
    agent_answers npm "$home" "$agent" "$started" 'npm package (npm install -g):'
    # What the npm bin runs: the binary the package unpacked (its linkage is checked there).
    local binary
    binary=$(find "$home/.npm-global/lib/node_modules" -path '*/.bin_real/agent' -type f | head -n 1)
    [ -n "$binary" ] || die "the npm package unpacked no binary"
    agent_runs npm "$home" "$agent" "$home/.npm-global/bin" "$binary"
    npm_wrapper_loses_a_signal "$home" "$agent" "$binary"
    clean_env "$home" npm uninstall -g --offline --cache "$NPM_CACHE" --prefix "$home/.npm-global" \
        --loglevel=error @agent-cli/agent >>"$SANDBOX/npm.out" 2>&1 || die "npm uninstall -g failed"
    [ -z "$(find "$home/.npm-global" -name 'agent*' 2>/dev/null)" ] \
        || die "npm uninstall -g left agent behind: $(find "$home/.npm-global" -name 'agent*')"
    say "npm package: npm uninstall -g removed it"
}

# npm's `agent` is dist's node script around the binary, and it exits 0 when its child
# dies by a signal (`process.exit(result.status)`, a null status): the binary passes a
# CLI's death by SIGTERM on as 143. Shown, so README's word on it stays true.
npm_wrapper_loses_a_signal() {
    local home=$1 wrapper=$2 binary=$3 dir="$1/signal-bin" direct through
    mkdir -p "$dir"
    printf '#!/bin/sh\nkill -TERM $$\n' >"$dir/claude"
    chmod +x "$dir/claude"
    direct=0
    EXTRA_PATH="$dir" clean_env "$home" "$binary" --use claude -p hi >/dev/null 2>&1 || direct=$?
    [ "$direct" -eq 143 ] || die "agent did not pass on a CLI's death by SIGTERM as 143: $direct"
    through=0
    EXTRA_PATH="$dir" clean_env "$home" "$wrapper" --use claude -p hi >/dev/null 2>&1 || through=$?
    rm -rf "$dir"
    if [ "$through" -eq 143 ]; then
        die "npm's agent now passes a signal's exit on (143): update README's Get it word on npm and this check"
    fi
    say "npm package: a CLI killed by SIGTERM is exit $through through npm's node script, 143 from the binary (README says so)"
}

# The generated npm package, its download URL set to BASE (the only change), packed again
# as SANDBOX/NAME.tgz; prints that path. Fails when any other URL is left in it.
npm_package_at() {
    local base=$1 name=$2 dir="$SANDBOX/$2"
    mkdir -p "$dir"
    tar -C "$dir" -xzf "$SANDBOX/www/good/$(cat "$SANDBOX/tag")/agent-npm-package.tar.gz"
    python3 - "$dir"/*/package.json "$base" <<'EOF'
import json, sys
path, base = sys.argv[1:]
package = json.load(open(path))
if "artifactDownloadUrls" not in package:
    sys.exit("release-smoke: the npm package has no artifactDownloadUrls to point at the server")
package["artifactDownloadUrls"] = [base]
json.dump(package, open(path, "w"), indent=2)
EOF
    tar -C "$dir" -czf "$SANDBOX/$name.tgz" "$(ls "$dir")"
    printf '%s\n' "$SANDBOX/$name.tgz"
}

# c. README's Get it "by hand" commands, as written but for the download URL and target.
readme_by_hand_installs() {
    local tag=$1 host=$2 home started
    home=$(fresh_home hand)
    readme_by_hand "$WWW/good/$tag" "$host" >"$SANDBOX/hand.sh"
    started=$(now)
    (cd "$home" && clean_env "$home" sh -eu "$SANDBOX/hand.sh") >"$SANDBOX/hand.out" 2>&1 || {
        cat "$SANDBOX/hand.sh" "$SANDBOX/hand.out" >&2
        die "README's by-hand install failed"
    }
    local agent="$home/.local/bin/agent"
    agent_answers hand "$home" "$agent" "$started" "by hand (README's Get it):"
    [ -f "$home/.local/share/man/man1/agent.1" ] || die "README's by-hand install put no man page"
    agent_runs hand "$home" "$agent" "$home/.local/bin"
}

# README's Get it by-hand block (the fenced block that checks the archive's sha256) with
# its release URL and target replaced. Prints it.
readme_by_hand() {
    local base=$1 host=$2
    python3 - "$ROOT/README.md" "$base" "$host" <<'EOF'
import re, sys
readme, base, host = sys.argv[1:]
blocks = re.findall(r"```sh\n(.*?)```", open(readme).read(), re.S)
hand = [b for b in blocks if "sha256sum -c" in b]
if len(hand) != 1:
    sys.exit(f"release-smoke: README has {len(hand)} sh blocks with 'sha256sum -c'; want the one by-hand install")
text = hand[0]
url = re.search(r"^url=(\S+)", text, re.M)
target = re.search(r"^target=(\S+)", text, re.M)
if not url or not target:
    sys.exit("release-smoke: README's by-hand block sets no url= or target= line")
text = text.replace(url.group(0), f"url={base}").replace(target.group(0), f"target={host}")
print(text)
EOF
}

# agent --version, --doctor and a launch, in HOME's clean environment. LABEL names the
# install; BIN_DIR goes first on PATH; BINARY is the file to check the linkage of (the
# agent itself unless a wrapper runs it).
agent_runs() {
    local label=$1 home=$2 agent=$3 bin_dir=$4 binary=${5:-$3}
    local version linkage
    version=$(cat "$SANDBOX/$label.version")
    printf '%s\n' "$version" | sed "s/^/  $label: /" >&2
    printf '%s\n' "$version" | head -n 1 | grep -qx "agent $(cut -c2- "$SANDBOX/tag")" \
        || die "$label: --version does not name this release: $version"
    printf '%s\n' "$version" | grep -q "^commit: [0-9a-f]\{12\}, built [0-9-]\{10\}$" \
        || die "$label: --version names no commit and build day: $version"
    printf '%s\n' "$version" | grep -q "^tested with: Claude Code " \
        || die "$label: --version names no tested CLI versions: $version"
    linkage=$(python3 "$ROOT/scripts/elf-linkage.py" "$binary") || die "$label: $binary is not a 64-bit ELF file"
    printf '%s\n' "$version" | grep -q "^build: $HOST_TARGET, $linkage$" \
        || die "$label: the binary is $linkage, --version says: $version"
    [ "$linkage" = "static, non-PIE" ] \
        || die "$label: the installed binary is $linkage, not the fast launch (static, non-PIE)"

    # A CLI on a temporary PATH that records what it was given.
    local fake="$home/fake-bin" calls="$home/calls"
    mkdir -p "$fake" "$calls"
    cat >"$fake/claude" <<EOF
#!/bin/sh
case "\$1" in --version) echo '2.1.332 (Claude Code)'; exit 0 ;; esac
printf '%s\n' "\$@" >"$calls/claude.args"
exit 0
EOF
    chmod +x "$fake/claude"
    cat >"$home/config.toml" <<'EOF'
probe_cache_seconds = 0

[[rungs]]
backend = "claude"
probe_model = "opus"
EOF
    local run_env=(AGENT_CONFIG="$home/config.toml" AGENT_PROXY_URL="$MOCK_URL"
        AGENT_PROXY_KEY=smoke-key-0123456789)

    EXTRA_PATH="$bin_dir:$fake" clean_env "$home" "${run_env[@]}" agent --doctor \
        >"$SANDBOX/$label.doctor" 2>&1 || {
        cat "$SANDBOX/$label.doctor" >&2
        die "$label: agent --doctor found a problem"
    }
    grep -q "$fake/claude" "$SANDBOX/$label.doctor" \
        || die "$label: --doctor did not find the CLI on PATH: $(cat "$SANDBOX/$label.doctor")"

    local probes_before launched
    probes_before=$(grep -c 'POST /v1/messages' "$SANDBOX/mock.log" 2>/dev/null || true)
    launched=$(now)
    EXTRA_PATH="$bin_dir:$fake" clean_env "$home" "${run_env[@]}" agent -p hi \
        >"$SANDBOX/$label.launch" 2>&1 || {
        cat "$SANDBOX/$label.launch" >&2
        die "$label: agent -p hi failed"
    }
    [ "$(grep -c 'POST /v1/messages' "$SANDBOX/mock.log")" -gt "${probes_before:-0}" ] \
        || die "$label: the launch made no probe of the mock at $MOCK_URL"
    # Claude Code gets the user's words last (agent puts its --session-id before them).
    [ "$(tail -n 2 "$calls/claude.args" 2>/dev/null | tr '\n' ' ')" = "-p hi " ] \
        || die "$label: the fake claude did not get '-p hi': $(cat "$calls/claude.args" 2>/dev/null)"
    say "$label: --version, --doctor, and a launch (probe to $MOCK_URL, then claude -p hi) in $(seconds_since "$launched") s"
}


# The shell installer given a bad archive (KIND: corrupt or tampered) refuses it, and
# nothing of agent is left in the home.
shell_installer_refuses() {
    local kind=$1 tag=$2 home before
    home=$(fresh_home "shell-$kind")
    before=$(served "/$kind/$tag/agent-$HOST_TARGET.tar.xz")
    if shell_install "$kind/$tag" "$home" >"$SANDBOX/shell-$kind.out" 2>&1; then
        die "the shell installer accepted the $kind archive"
    fi
    [ "$(served "/$kind/$tag/agent-$HOST_TARGET.tar.xz")" -gt "$before" ] \
        || die "the shell installer did not download the $kind archive from $WWW"
    grep -qi 'checksum' "$SANDBOX/shell-$kind.out" \
        || die "the shell installer refused the $kind archive without naming its checksum: $(cat "$SANDBOX/shell-$kind.out")"
    [ -z "$(files_in "$home")" ] \
        || die "the shell installer left files after refusing the $kind archive: $(files_in "$home")"
    say "shell installer: refused the $kind archive ($(grep -i -m1 'checksum' "$SANDBOX/shell-$kind.out")), home left empty"
}

# README's by-hand commands stop at the checksum, before anything is installed.
readme_by_hand_refuses() {
    local kind=$1 tag=$2 host=$3 home
    home=$(fresh_home "hand-$kind")
    readme_by_hand "$WWW/$kind/$tag" "$host" >"$SANDBOX/hand-$kind.sh"
    if (cd "$home" && clean_env "$home" sh -eu "$SANDBOX/hand-$kind.sh") >"$SANDBOX/hand-$kind.out" 2>&1; then
        die "README's by-hand commands accepted the $kind archive"
    fi
    grep -q "agent-$host.tar.xz: FAILED" "$SANDBOX/hand-$kind.out" \
        || die "README's by-hand commands failed on the $kind archive, but not at its checksum: $(cat "$SANDBOX/hand-$kind.out")"
    [ ! -e "$home/.local" ] || die "README's by-hand commands installed from the $kind archive: $(files_in "$home")"
    say "by hand: sha256sum -c refused the $kind archive, nothing installed"
}

# npm refuses an archive that does not unpack, and leaves no agent behind.
npm_package_refuses_corrupt() {
    local tag=$1 host=$2 home package before
    home=$(fresh_home npm-corrupt)
    package=$(npm_package_at "$WWW/corrupt/$tag" npm-corrupt)
    before=$(served "/corrupt/$tag/agent-$host.tar.xz")
    if npm_install "$package" "$home" >"$SANDBOX/npm-corrupt.out" 2>&1; then
        die "npm installed the npm package over a corrupt archive"
    fi
    [ "$(served "/corrupt/$tag/agent-$host.tar.xz")" -gt "$before" ] \
        || die "the npm package did not download the corrupt archive from $WWW"
    grep -q 'error occurred untarring' "$SANDBOX/npm-corrupt.out" \
        || die "npm failed on the corrupt archive, but not at unpacking it: $(cat "$SANDBOX/npm-corrupt.out")"
    [ -z "$(find "$home/.npm-global" -name agent -type f 2>/dev/null)" ] \
        || die "npm left an agent file after refusing the corrupt archive: $(files_in "$home")"
    [ ! -e "$home/.npm-global/lib/node_modules/@agent-cli" ] || [ -z "$(ls -A "$home/.npm-global/lib/node_modules/@agent-cli")" ] \
        || die "npm left the package after refusing the corrupt archive: $(files_in "$home")"
    if EXTRA_PATH="$home/.npm-global/bin" clean_env "$home" agent --version >/dev/null 2>&1; then
        die "an agent runs after npm refused the corrupt archive"
    fi
    # npm (7 and later) removes the package but keeps its bin link: say so when it does.
    local left=""
    [ -L "$home/.npm-global/bin/agent" ] && left=" (npm left its bin link dangling: bin/agent -> $(readlink "$home/.npm-global/bin/agent"))"
    say "npm package: refused the corrupt archive, nothing of agent that runs is left$left"
}

# dist's npm installer unpacks what the URL serves without checking a checksum: a
# well-formed archive of other bytes is installed. Shown, so that README's word on it stays
# true (and this says when a dist release starts checking).
npm_package_checks_no_checksum() {
    local tag=$1 host=$2 home package
    home=$(fresh_home npm-tampered)
    package=$(npm_package_at "$WWW/tampered/$tag" npm-tampered)
    if npm_install "$package" "$home" >"$SANDBOX/npm-tampered.out" 2>&1; then
        say "npm package: installed a well-formed archive whose checksum is wrong (dist $DIST_VERSION's npm installer checks none; README says so)"
    else
        die "npm refused the archive whose checksum is wrong: dist's npm installer now checks checksums — update README's Get it word on npm and this check"
    fi
}

# The binstall metadata (Cargo.toml) and the Homebrew formula name the served archive.
check_release_metadata() {
    local tag=$1 host=$2
    python3 - "$ROOT/Cargo.toml" "$SANDBOX/www/good/$tag" "$host" "$tag" <<'EOF'
import hashlib, re, sys, tarfile, tomllib
cargo, served, host, tag = sys.argv[1:]
manifest = tomllib.load(open(cargo, "rb"))
package = manifest["package"]
binstall = package["metadata"]["binstall"]
fill = {"repo": package["repository"], "name": package["name"], "version": package["version"],
        "target": host, "archive-suffix": ".tar.xz", "bin": "agent", "binary-ext": ""}
expand = lambda text: re.sub(r"\{ *([a-z-]+) *\}", lambda m: fill[m.group(1)], text)
url = expand(binstall["pkg-url"])
prefix = f"{package['repository']}/releases/download/{tag}/"
if not url.startswith(prefix):
    sys.exit(f"release-smoke: binstall's pkg-url {url} is not under {prefix}")
archive = f"{served}/{url[len(prefix):]}"
member = expand(binstall["bin-dir"])
with tarfile.open(archive) as tar:
    if member not in tar.getnames():
        sys.exit(f"release-smoke: binstall's bin-dir {member} is not in {archive}")
print(f"release-smoke: binstall metadata: {url} holds {member}", file=sys.stderr)

formula = open(f"{served}/agent.rb").read()
pairs = re.findall(r'url "([^"]+)"\s+sha256 "([0-9a-f]{64})"', formula)
if not pairs:
    sys.exit("release-smoke: the Homebrew formula names no url and sha256")
for url, sha in pairs:
    name = url.rsplit("/", 1)[1]
    if not url.startswith(prefix):
        sys.exit(f"release-smoke: the formula's {url} is not under {prefix}")
    actual = hashlib.sha256(open(f"{served}/{name}", "rb").read()).hexdigest()
    if actual != sha:
        sys.exit(f"release-smoke: the formula's sha256 for {name} is {sha}, the archive's {actual}")
    print(f"release-smoke: Homebrew formula: {name} sha256 matches", file=sys.stderr)
EOF
}

if [ "$INSIDE" -eq 1 ]; then
    inside
else
    outside
fi
