//! A configured alert channel that cannot send is a fault the doctor names (issue 32, item 8):
//! a Telegram channel without its `bot_token` was reported as "alerts configured".

use std::os::unix::fs::PermissionsExt as _;

use crate::world::world;

#[test]
fn the_doctor_says_a_telegram_channel_without_its_bot_token_cannot_send() {
    let w = world();
    std::fs::set_permissions(w.sb.state_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    w.sb.write_config("[alerts.telegram]\nchat_id = \"123456\"\n");

    let doctor = w.sb.run(&["--doctor"]);

    assert_eq!(doctor.code, Some(1), "{doctor:?}");
    assert!(
        !doctor.stdout.contains("alerts configured"),
        "{}",
        doctor.stdout
    );
    let line = doctor
        .stdout
        .lines()
        .find(|line| line.starts_with("FAIL alerts"))
        .unwrap_or_else(|| panic!("no alerts row: {}", doctor.stdout));
    assert!(
        line.ends_with(
            "[alerts.telegram] is missing its bot_token (and has no bot_token_cmd): no alert can reach Telegram"
        ),
        "{line}"
    );
    assert!(
        doctor
            .stdout
            .contains("fix: add bot_token = \"${AGENT_TELEGRAM_TOKEN}\" to [alerts.telegram]"),
        "{}",
        doctor.stdout
    );
    assert!(
        doctor.stdout.contains("1 problem found"),
        "{}",
        doctor.stdout
    );

    // With its token the channel is whole again.
    w.sb.env("AGENT_TELEGRAM_TOKEN", "123:telegram-SECRET");
    w.sb.write_config(
        "[alerts.telegram]\nbot_token = \"${AGENT_TELEGRAM_TOKEN}\"\nchat_id = \"123456\"\n",
    );
    let mended = w.sb.run(&["--doctor"]);
    assert_eq!(mended.code, Some(0), "{mended:?}");
    assert!(
        mended.stdout.contains("; alerts configured"),
        "{}",
        mended.stdout
    );
}
