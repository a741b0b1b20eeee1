//! A new CLI is one registration (docs/development.md, "Adding a CLI"). The stand-in sixth
//! CLI of the test build (`adapter::stand_in`, `login::stand_in`) is registered as any CLI
//! is, and named nowhere else: every face that lists the CLIs — a `--status` row, `--usage`
//! and its `--source`, the dashboard's logins, the dialect table — sees it under its own
//! name, and counts nothing of it as another CLI's.

use std::os::unix::fs::PermissionsExt as _;

use crate::adapter::Family;
use crate::cli::usage::{Source, UsageCli};
use crate::launch::resolve::{Context, resolve_with};
use crate::launch::rung_state::RungState;

/// A configuration whose backend `mine` runs the stand-in (an executable of that name in
/// `dir`), and one rung of it.
fn config_running_the_stand_in(dir: &std::path::Path) -> crate::config::Config {
    let binary = dir.join("stand-in");
    std::fs::write(&binary, "#!/bin/sh\necho stand-in answered\n").unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[backends.mine]\ncommand = \"{}\"\nprobe = {{ kind = \"gemini\" }}\n\n[[rungs]]\nbackend = \"mine\"\n",
            binary.display()
        ),
    )
    .unwrap();
    crate::config::load(Some((path, true))).unwrap()
}

#[test]
fn a_cli_registered_once_is_seen_by_every_face_under_its_own_name() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_running_the_stand_in(dir.path());
    let backend = &config.backends["mine"];

    // The configuration judges the backend's CLI from its command, once.
    assert_eq!(backend.family, Family::StandIn);

    // `--status`: the rung runs on the stand-in's own login (its readers read its store),
    // and its row names that login by the name people know the CLI by.
    let context = Context {
        from_builtin_table: false,
        timeout: config.probe_timeout,
        account: None,
        accounts: &config.accounts,
        pricing: None,
        state_dir: Some(dir.path()),
    };
    let rung = resolve_with(backend, 1, "", "", &context);
    let ready = rung.state.as_ref().expect("the stand-in's rung resolves");
    let login = ready.login.as_ref().expect("on the stand-in's own login");
    assert_eq!(login.key, "stand-in:default");
    let state = RungState::NotProved {
        why: "not checked here".into(),
        passed_over: false,
    };
    let row = crate::report::rows::Rows::new(10, None, 0).rung(&rung, &state, 0);
    assert!(
        row.contains("login (Stand-in CLI); window unknown"),
        "{row}"
    );

    // The dashboard's logins: named by the CLI's name for people, from the row's login and
    // from its key alone.
    let now = jiff::Timestamp::now();
    let named = super::logins::of_json(&login.json(&[], now)).unwrap();
    assert_eq!(named.label, "Stand-in CLI login");
    assert_eq!(
        super::logins::of_key(&login.key).label,
        "Stand-in CLI login"
    );

    // `--usage --source`: the stand-in is a source by its command name, and its recorded
    // call is counted under it — as its own backend, never as another CLI's.
    let help = <UsageCli as clap::CommandFactory>::command()
        .render_long_help()
        .to_string();
    assert!(help.contains("stand-in"), "{help}");
    let parsed =
        <UsageCli as clap::Parser>::try_parse_from(["--source", "stand-in,agent"]).unwrap();
    assert_eq!(parsed.source, [Source::Cli(Family::StandIn), Source::Agent]);
    let report =
        crate::usage::document(&config, &["--source", "stand-in", "--by", "backend"], None)
            .unwrap();
    assert_eq!(report["sources"]["stand-in"]["calls"], 1, "{report:#}");
    for other in ["claude", "codex", "gemini", "opencode"] {
        assert!(report["sources"][other].is_null(), "{other}: {report:#}");
    }
    let groups = report["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{report:#}");
    assert_eq!(groups[0]["key"], "stand-in", "{report:#}");
    assert_eq!(groups[0]["calls"], 1, "{report:#}");

    // The dialect table: its words are agent's to translate into, from its adapter alone.
    let dialect = crate::adapter::dialects()
        .find(|dialect| dialect.command == "stand-in")
        .expect("the stand-in's dialect is in the table");
    let args = [std::ffi::OsString::from("-p"), "hi".into()];
    let translated = crate::adapter::dialect::translate(
        Some(dialect),
        &crate::adapter::dialect::Request {
            args: &args,
            model: None,
            model_flag: None,
            vendor: "stand-in",
            own: [&[], &[]],
            resume: None,
        },
    )
    .unwrap();
    assert_eq!(translated.argv, ["ask", "--", "hi"]);
    assert!(Family::StandIn.is_flag("--model"));
}
