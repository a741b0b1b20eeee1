//! The one clock every test runs on: the test process's own. `scripts/test-at-dates.sh`
//! runs the test binaries under libfaketime at chosen instants and zones; the children a
//! test starts (`agent`, fake CLIs, the SDK scripts) must see the same instant and zone, so
//! every place that clears a child's environment hands these variables on.
//!
//! Redis is the exception: it cannot run under libfaketime (jemalloc's start-up recurses
//! into the faked `clock_gettime`), so it runs on the machine's clock, as a store on another
//! host would ([`without_faked_clock`]).

use std::process::Command;

/// The variables that set a process's clock and zone: `TZ`, and libfaketime's `LD_PRELOAD`
/// and `FAKETIME*` when the test itself runs under it.
pub fn env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(key, _)| is_clock_variable(key))
        .collect()
}

fn is_clock_variable(key: &str) -> bool {
    key == "TZ" || key == "LD_PRELOAD" || key.starts_with("FAKETIME")
}

/// Whether this test runs on a faked clock (under `scripts/test-at-dates.sh`).
pub fn is_faked() -> bool {
    std::env::var_os("FAKETIME").is_some()
}

/// Starts `cmd` on the machine's real clock, whatever the test runs on.
pub fn without_faked_clock(cmd: &mut Command) -> &mut Command {
    cmd.env_remove("LD_PRELOAD");
    for (key, _) in std::env::vars().filter(|(key, _)| key.starts_with("FAKETIME")) {
        cmd.env_remove(key);
    }
    cmd
}

/// The RFC 3339 instant of `hour:minute` on the local calendar day `day` (in the zone the
/// test runs in): a ledger line stamped with it is counted on `day` in every zone.
pub fn local_time_on(day: jiff::civil::Date, hour: i8, minute: i8) -> String {
    day.at(hour, minute, 0, 0)
        .to_zoned_datetime(jiff::tz::TimeZone::system())
        .expect("a local time that exists")
        .timestamp()
        .to_string()
}
