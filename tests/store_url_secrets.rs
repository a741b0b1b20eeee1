//! A store URL's password stays out of what agent prints however it is written: in the
//! userinfo (`redis://:P@host`) or in the query (`?pass=P`, `?password=P`).

use crate::world::world;

const QUERY_PASSWORD: &str = "STOREURL-query-password-0123456789";

/// Claude Code first, over a store that does not answer, its password in the URL's query.
fn on_a_down_store_with_a_query_password() -> crate::world::World {
    let w = world();
    w.sb.env(
        "STOREURL_REDIS_URL",
        format!("redis://127.0.0.1:1/?pass={QUERY_PASSWORD}&db=0"),
    );
    w.sb.write_config(
        "[store]\nkind = \"redis\"\nurl = \"${STOREURL_REDIS_URL}\"\non_store_down = \"local\"\n\n[[rungs]]\nbackend = \"claude\"\nprobe_model = \"opus\"\n",
    );
    w
}

#[test]
fn a_store_down_notice_names_the_store_without_its_query_password() {
    let w = on_a_down_store_with_a_query_password();

    let run = w.sb.run(&["-p", "hi"]);

    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr
            .contains("at redis://127.0.0.1:1/?pass=[redacted]&db=0"),
        "the notice names the store: {run:?}"
    );
    assert!(!run.stderr.contains(QUERY_PASSWORD), "{run:?}");
    assert!(!run.stdout.contains(QUERY_PASSWORD), "{run:?}");
}

#[test]
fn doctor_and_status_show_no_store_password_from_the_query() {
    let w = on_a_down_store_with_a_query_password();

    let doctor = w.sb.run(&["--doctor"]);
    let doctor_json = w.sb.run(&["--doctor", "--json"]);
    let status = w.sb.run(&["--status"]);

    assert!(
        doctor.stdout.contains("127.0.0.1:1"),
        "the doctor reports the store: {doctor:?}"
    );
    for run in [&doctor, &doctor_json, &status] {
        assert!(
            !run.stdout.contains(QUERY_PASSWORD) && !run.stderr.contains(QUERY_PASSWORD),
            "{run:?}"
        );
    }
    for (path, text) in w.sb.state_files() {
        assert!(!text.contains(QUERY_PASSWORD), "{}: {text}", path.display());
    }
}
