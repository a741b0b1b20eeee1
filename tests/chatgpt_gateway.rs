//! A Codex provider its settings send the ChatGPT login to (`requires_openai_auth`, no
//! `env_key`: a gateway in front of ChatGPT's backend) runs on that login. agent judges the
//! rung by the login and never sends that provider a call of its own: it has no credential
//! to send (the login is Codex's, DESIGN §12), and the backend refuses a call without one.

use crate::world::world;

#[test]
fn a_codex_provider_sent_the_chatgpt_login_is_judged_by_the_login_with_no_call_of_agents() {
    let w = world();
    w.sb.write_file(
        ".codex/config.toml",
        &format!(
            "model = \"gpt-test-codex\"\nmodel_provider = \"gateway\"\n\n[model_providers.gateway]\nname = \"gateway\"\nbase_url = \"{}/backend-api/codex\"\nrequires_openai_auth = true\nwire_api = \"responses\"\n",
            w.api.url()
        ),
    );
    w.sb.write_file(
        ".codex/auth.json",
        r#"{"auth_mode": "chatgpt", "tokens": {"id_token": "x", "access_token": "y", "refresh_token": "z", "account_id": "a"}}"#,
    );
    w.sb.write_config("[[rungs]]\nbackend = \"codex\"\n");
    w.sb.fake_cli("codex")
        .script("[ \"$1\" = app-server ] && exit 0\necho 'codex answered'")
        .install();

    let doctor = w.sb.run(&["--doctor"]);
    let launch = w.sb.run(&["-p", "hi"]);

    let row = doctor
        .stdout
        .lines()
        .find(|l| l.contains("rung 1 codex"))
        .unwrap_or_else(|| panic!("{doctor:?}"));
    assert!(
        row.contains("login (") && !row.contains("probe"),
        "judged by its login, not probed: {row}"
    );
    assert_eq!(launch.code, Some(0), "{launch:?}");
    assert_eq!(launch.stdout, "codex answered\n", "{launch:?}");
    assert_eq!(
        w.api.posts(),
        0,
        "agent sent the login's provider a call of its own: {:?}",
        w.api.post_requests()
    );
}
