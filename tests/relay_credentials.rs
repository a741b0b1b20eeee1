//! The relay's credentials beside the owner's: a token or key file others can read is said
//! at start, and logging in with the relay's token never ends the owner's dashboard session.

use std::os::unix::fs::PermissionsExt as _;

use crate::dashboard::{Dashboard, get};
use crate::relay::{MODEL, TOKEN, messages_body, relay_world};
use crate::support::relay::RelayProc;

#[test]
fn a_token_file_and_a_key_file_others_can_read_are_said_at_start_and_the_relay_still_serves() {
    let (sb, api) = relay_world();
    sb.env_remove("AGENT_RELAY_TOKEN");
    let init = sb.run(&["--relay", "init"]);
    assert_eq!(init.code, Some(0), "{init:?}");
    let token_file = sb.home().join(".config/agent/relay-token");
    let token = std::fs::read_to_string(&token_file).unwrap();
    let keys = sb.write_file(".config/agent/relay.env", "AGENT_RELAY_OPENAI_KEY=sk-x\n");
    for file in [&token_file, &keys] {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).unwrap();
    }

    let relay = RelayProc::start(&sb, &[]);
    let stderr = relay.stderr();
    for file in [&token_file, &keys] {
        let said = format!("{} is 644", file.display());
        let fix = format!("chmod 600 {}", file.display());
        assert!(
            stderr.contains(&said) && stderr.contains(&fix),
            "{said}: {stderr}"
        );
    }
    assert!(!stderr.contains(token.trim()), "{stderr}");
    let answer = relay.post(
        "/anthropic/v1/messages",
        Some(token.trim()),
        &messages_body(MODEL),
        &[],
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(api.posts(), 1);

    // Owner-only files: nothing said.
    for file in [&token_file, &keys] {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let quiet = RelayProc::start(&sb, &[]);
    assert!(!quiet.stderr().contains("chmod 600"), "{}", quiet.stderr());
}

#[test]
fn logging_in_with_the_relay_token_never_ends_the_owners_dashboard_session() {
    let (sb, _api) = relay_world();
    let dashboard = Dashboard::start(&sb);
    let owner = dashboard.log_in();
    assert_eq!(get(&dashboard.addr, "/status.json", &owner).status, 200);

    // Anyone holding the relay token logs in as often as they like…
    let mut theirs = Vec::new();
    for _ in 0..100 {
        let login = get(&dashboard.addr, &format!("/?token={TOKEN}"), "");
        assert_eq!(login.status, 303, "{login:?}");
        let cookie = login.header("set-cookie").unwrap();
        theirs.push(format!("cookie: {}\n", cookie.split(';').next().unwrap()));
    }
    // …and the owner's session goes on; their oldest sessions end, their newest do not.
    assert_eq!(get(&dashboard.addr, "/status.json", &owner).status, 200);
    assert_eq!(get(&dashboard.addr, "/status.json", &theirs[0]).status, 401);
    assert_eq!(
        get(&dashboard.addr, "/status.json", &theirs[99]).status,
        200
    );
}
