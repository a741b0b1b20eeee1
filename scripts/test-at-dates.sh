#!/usr/bin/env bash
# Runs the built test binaries at fixed instants and time zones under libfaketime, so a
# test (or product code) that only works on the day it was written, or only in UTC, fails
# here instead of on the first day after.
#
#   scripts/test-at-dates.sh            unit tests at every instant, the whole integration
#                                       suite at the first, its date tests (DATE_TESTS) at
#                                       the next two (what .ci/run does)
#   scripts/test-at-dates.sh --all      the whole integration suite at every instant
#   scripts/test-at-dates.sh --list     print the instants and exit
#
# The binaries run under faketime, not cargo (cargo itself hangs under it). The clock runs
# on from each instant; only the wall clock is faked (FAKETIME_DONT_FAKE_MONOTONIC), so
# timeouts and sleeps keep their real length. The integration tests hand TZ and
# libfaketime's variables to every child they start (tests/support/clock.rs), except
# redis-server, which cannot start under libfaketime and keeps the machine's clock.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# zone | local date and time | why this instant
INSTANTS=(
    "UTC|2026-12-31 12:00:00|the last day of a month and of a year"
    "Pacific/Kiritimati|2027-01-01 08:00:00|UTC+14: the local day is a day ahead of UTC's"
    "Pacific/Pago_Pago|2026-12-31 18:00:00|UTC-11: the local day is a day behind UTC's"
    "UTC|2028-02-29 12:00:00|a leap day"
    "Europe/Berlin|2027-03-28 12:00:00|Berlin's clocks go forward (a 23-hour day)"
    "Europe/Berlin|2027-10-31 12:00:00|Berlin's clocks go back (a 25-hour day)"
    "America/New_York|2027-03-14 12:00:00|New York's clocks go forward"
    "America/New_York|2027-11-07 12:00:00|New York's clocks go back"
)
# How many of the instants (from the top) the integration tests run at by default: a
# year's end in UTC and in the zones farthest from it, where a day's name differs from
# UTC's. The whole suite runs at the first (a test that only passes on the day it was
# written fails there, whatever it is about); at the others only DATE_TESTS, since a test
# that reads no day, reset or window passes or fails alike in every zone. The whole suite
# at every instant took about 20 minutes on 2 cores, past CI's 30-minute budget, and at
# three of them it was half of a loaded CI run.
INTEGRATION_AT=3

# The integration tests that deal with days, resets, windows, budgets and usage by day:
# libtest filters (a test runs when its name holds any of them). Modules first, then words
# that such a test's name holds wherever it lives. The date bugs this script found were in
# these modules (parking, dashboard, statusline, codex_sessions, logins) or in the whole
# suite's run at the first instant; a new module that reads a day belongs here.
DATE_TESTS=(
    accounts:: budget:: codex_sessions:: dashboard:: login_usage:: logins:: logins_pool::
    parking:: removed_account:: self_checks:: spend_limit:: state:: status_rows::
    statusline:: store_forgets:: usage:: usage_slip:: wait_reopen:: waiting::
    reset window reopen month week _day day_ today midnight
)

# Integration tests left out under the faked clock, each for a reason that is not a date:
# - reads what a shared Redis store stamped with its own clock (stream ids are the
#   server's milliseconds): the store cannot share a faked clock;
# - streams gigabyte files through every reader (some 10 s of a test thread) and reads no
#   date.
SKIP_UNDER_FAKED_CLOCK=(
    team_relay::usage_with_since_reads_the_team_stream_from_the_window_on
    foreign_files::every_reader_returns_in_time_holding_no_more_than_its_cap_whatever_the_file
)

say() { printf '%s\n' "$*"; }
die() {
    say "test-at-dates: $*" >&2
    exit 2
}

main() {
    local all=false
    case "${1:-}" in
    --all) all=true ;;
    --list)
        printf '%s\n' "${INSTANTS[@]}"
        return 0
        ;;
    "") ;;
    *) die "unknown option $1 (expected --all or --list)" ;;
    esac
    command -v faketime >/dev/null || die "faketime not found (apt-get install faketime)"
    command -v python3 >/dev/null || die "python3 not found"

    local unit=() integration=()
    while IFS=' ' read -r kind path; do
        case "$kind" in
        unit) unit+=("$path") ;;
        integration) integration+=("$path") ;;
        esac
    done < <(test_binaries)
    [ "${#unit[@]}" -gt 0 ] || die "cargo built no unit-test binary"
    [ "${#integration[@]}" -gt 0 ] || die "cargo built no integration-test binary"

    local skips=()
    for name in "${SKIP_UNDER_FAKED_CLOCK[@]}"; do
        skips+=(--skip "$name")
    done

    local failed=0 index=0 began=$SECONDS
    for entry in "${INSTANTS[@]}"; do
        IFS='|' read -r zone at why <<<"$entry"
        say ""
        say "==> $at $zone — $why"
        local step=$SECONDS
        for binary in "${unit[@]}"; do
            at_instant "$zone" "$at" "$binary" -q || failed=$((failed + 1))
        done
        say "    unit tests: $((SECONDS - step))s"
        local filters=() label=""
        if $all || [ "$index" -eq 0 ]; then
            label="the whole suite"
        elif [ "$index" -lt "$INTEGRATION_AT" ]; then
            label="DATE_TESTS"
            filters=("${DATE_TESTS[@]}")
        fi
        if [ -n "$label" ]; then
            step=$SECONDS
            for binary in "${integration[@]}"; do
                at_instant "$zone" "$at" "$binary" -q "${skips[@]}" "${filters[@]}" ||
                    failed=$((failed + 1))
            done
            say "    integration tests, $label: $((SECONDS - step))s"
        fi
        index=$((index + 1))
    done
    say ""
    if [ "$failed" -gt 0 ]; then
        say "test-at-dates: $failed run(s) failed ($((SECONDS - began))s)"
        return 1
    fi
    say "test-at-dates: every run passed at ${#INSTANTS[@]} instants in $((SECONDS - began))s"
}

# Builds the test binaries and prints `unit PATH` (the library's and binary's own tests)
# and `integration PATH` (tests/lib.rs) for each.
test_binaries() {
    cargo test --locked --no-run --lib --bins --tests --message-format=json 2>/dev/null |
        python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") != "compiler-artifact" or not message.get("executable"):
        continue
    if not message["profile"]["test"]:
        continue
    kinds = message["target"]["kind"]
    print(("integration" if "test" in kinds else "unit"), message["executable"])
'
}

# Runs one test binary with the wall clock set to `at` in `zone`.
at_instant() {
    local zone=$1 at=$2 binary=$3
    shift 3
    TZ=$zone FAKETIME_DONT_FAKE_MONOTONIC=1 faketime "$at" "$binary" "$@"
}

main "$@"
