//! Every adapter asked every question, in one table: a new CLI is one row more.

use std::path::PathBuf;

use std::ffi::OsString;

use super::*;

fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

struct Row {
    family: Family,
    home_vars: &'static [&'static str],
    /// The home with only `HOME=/h`, and with its variable set to `/moved`.
    home: Option<&'static str>,
    moved: Option<&'static str>,
    credential_vars: &'static [&'static str],
    /// The login key with only `HOME=/h`.
    login_key: Option<&'static str>,
    records: &'static [&'static str],
    model_var: Option<&'static str>,
    model_settings: Option<&'static str>,
}

const TABLE: &[Row] = &[
    Row {
        family: Family::Claude,
        home_vars: &["CLAUDE_CONFIG_DIR"],
        home: Some("/h/.claude"),
        moved: Some("/moved"),
        credential_vars: &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ],
        login_key: Some("claude:/h/.claude"),
        records: &["/h/.claude/projects"],
        model_var: Some("ANTHROPIC_MODEL"),
        model_settings: Some("/h/.claude/settings.json"),
    },
    Row {
        family: Family::Codex,
        home_vars: &["CODEX_HOME"],
        home: Some("/h/.codex"),
        moved: Some("/moved"),
        credential_vars: &["OPENAI_API_KEY"],
        login_key: Some("codex:/h/.codex"),
        records: &["/h/.codex/sessions", "/h/.codex/archived_sessions"],
        model_var: None,
        model_settings: Some("/h/.codex/config.toml"),
    },
    Row {
        family: Family::Gemini,
        home_vars: &["GEMINI_CLI_HOME"],
        home: Some("/h/.gemini"),
        moved: Some("/moved/.gemini"),
        credential_vars: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        login_key: Some("gemini:/h/.gemini"),
        records: &["/h/.gemini/tmp"],
        model_var: Some("GEMINI_MODEL"),
        model_settings: Some("/h/.gemini/settings.json"),
    },
    Row {
        family: Family::Agy,
        home_vars: &[],
        home: None,
        moved: None,
        credential_vars: &[],
        login_key: Some("agy:default"),
        records: &[],
        model_var: None,
        model_settings: None,
    },
    Row {
        family: Family::Opencode,
        home_vars: &["XDG_DATA_HOME"],
        home: Some("/h/.local/share/opencode"),
        moved: Some("/moved/opencode"),
        credential_vars: &["OPENCODE_AUTH_CONTENT", "OPENCODE_API_KEY"],
        // Its logins are per provider; none reports a window agent parks by.
        login_key: None,
        records: &["/h/.local/share/opencode/opencode.db"],
        model_var: None,
        model_settings: None,
    },
    Row {
        family: Family::StandIn,
        home_vars: &["STAND_IN_HOME"],
        home: Some("/h/.stand-in"),
        moved: Some("/moved"),
        credential_vars: &[],
        login_key: Some("stand-in:default"),
        records: &["/h/.stand-in/calls"],
        model_var: None,
        model_settings: None,
    },
];

#[test]
fn every_adapter_answers_every_question_from_the_environment_it_is_given() {
    assert_eq!(
        TABLE.iter().map(|row| row.family).collect::<Vec<_>>(),
        ALL.to_vec(),
        "one row per adapter"
    );
    let home = vars(&[("HOME", "/h")]);
    let env = Env::only(&home);
    for row in TABLE {
        let family = row.family;
        let name = family.name();
        assert_eq!(Family::of(&format!("/usr/bin/{name}")), family);
        assert_eq!(Family::named(name), Some(family), "{name} by its own name");
        let shown = family.display_name();
        assert!(!shown.trim().is_empty(), "{name} has a name people see");
        assert_eq!(
            ALL.iter().filter(|f| f.display_name() == shown).count(),
            1,
            "{shown}: one CLI per name people see"
        );
        assert_eq!(Family::of_backend(name, "/opt/wrapper.sh"), family);
        assert_eq!(family.home_vars(), row.home_vars, "{name} home vars");
        assert_eq!(
            family.home(&env),
            row.home.map(PathBuf::from),
            "{name} home"
        );
        for var in row.home_vars {
            let moved = vars(&[("HOME", "/h"), (var, "/moved")]);
            assert_eq!(
                family.home(&Env::only(&moved)),
                row.moved.map(PathBuf::from),
                "{name} moved by {var}"
            );
            // An empty variable is unset, not the working directory.
            let empty = vars(&[("HOME", "/h"), (var, "")]);
            assert_eq!(family.home(&Env::only(&empty)), row.home.map(PathBuf::from));
        }
        assert_eq!(
            family.credential_vars(),
            row.credential_vars,
            "{name} creds"
        );
        assert_eq!(
            family.login_key(&env, None).as_deref(),
            row.login_key,
            "{name} login"
        );
        let records: Vec<PathBuf> = row.records.iter().map(PathBuf::from).collect();
        assert_eq!(family.records(&env), records, "{name} records");
        assert_eq!(family.model_var(), row.model_var, "{name} model var");
        assert_eq!(
            family.model_settings(&env),
            row.model_settings.map(PathBuf::from),
            "{name} model settings"
        );
        assert_eq!(
            family.configured_model(&env),
            None,
            "{name}: no settings here"
        );
        if let Some(var) = row.model_var {
            let set = vars(&[("HOME", "/h"), (var, " m-1 ")]);
            assert_eq!(
                family.configured_model(&Env::only(&set)).as_deref(),
                Some("m-1")
            );
            let blank = vars(&[("HOME", "/h"), (var, "  ")]);
            assert_eq!(family.configured_model(&Env::only(&blank)), None);
        }
        // An account of the pool is named by the account, or is no login at all.
        let account = Account {
            name: "work",
            is_login: true,
        };
        let by_account = family.login_key(&env, Some(account));
        if family == Family::Claude {
            assert_eq!(by_account.as_deref(), Some("claude:account:work"));
        } else {
            assert_eq!(by_account, None, "{name}: an account is a key");
        }
    }
    let other = Family::of("/usr/bin/aider");
    assert_eq!(other, Family::Other);
    assert_eq!(other.home(&env), None);
    assert_eq!(other.login_key(&env, None), None);
}

#[test]
fn claude_config_dir_is_one_path_even_with_a_comma_in_it() {
    // Claude Code joins `$CLAUDE_CONFIG_DIR` with its file names as it is (`Zn()`).
    let set = vars(&[("HOME", "/h"), ("CLAUDE_CONFIG_DIR", "/a,/b")]);
    let env = Env::only(&set);
    assert_eq!(Family::Claude.home(&env), Some(PathBuf::from("/a,/b")));
    assert_eq!(
        Family::Claude.records(&env),
        vec![PathBuf::from("/a,/b/projects")]
    );
    assert_eq!(
        claude::transcript_history(&env),
        vec![PathBuf::from("/a,/b/projects")]
    );
    assert_eq!(
        Family::Claude.login_key(&env, None).as_deref(),
        Some("claude:/a,/b")
    );
}

#[test]
fn gemini_cli_home_moves_the_settings_the_model_is_read_from() {
    let dir = tempfile::tempdir().unwrap();
    let moved = dir.path().join("moved");
    std::fs::create_dir_all(moved.join(".gemini")).unwrap();
    std::fs::write(
        moved.join(".gemini/settings.json"),
        r#"{"model": {"name": "gemini-moved"}}"#,
    )
    .unwrap();
    let home = dir.path().join("h");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"model": "gemini-home"}"#,
    )
    .unwrap();
    let home_only = vars(&[("HOME", home.to_str().unwrap())]);
    assert_eq!(
        Family::Gemini
            .configured_model(&Env::only(&home_only))
            .as_deref(),
        Some("gemini-home")
    );
    let set = vars(&[
        ("HOME", home.to_str().unwrap()),
        ("GEMINI_CLI_HOME", moved.to_str().unwrap()),
    ]);
    assert_eq!(
        Family::Gemini.configured_model(&Env::only(&set)).as_deref(),
        Some("gemini-moved")
    );
}

#[test]
fn a_claude_token_is_the_login_of_the_directory_it_runs_in_as_its_statusline_sees_it() {
    let token = "sk-ant-oat01-secret-value";
    // Claude Code on a token, and its statusLine command, which it does not show the token.
    let on_token = vars(&[("HOME", "/h"), ("CLAUDE_CODE_OAUTH_TOKEN", token)]);
    let statusline = vars(&[("HOME", "/h")]);
    let key = Family::Claude
        .login_key(&Env::only(&on_token), None)
        .unwrap();
    assert_eq!(key, "claude:/h/.claude");
    assert_eq!(
        Family::Claude.login_key(&Env::only(&statusline), None),
        Some(key.clone())
    );
    assert!(!key.contains("sk-ant") && !key.contains("secret"), "{key}");
    // Another directory is another login, whatever the token.
    let moved = vars(&[
        ("CLAUDE_CONFIG_DIR", "/x"),
        ("CLAUDE_CODE_OAUTH_TOKEN", token),
    ]);
    assert_eq!(
        Family::Claude
            .login_key(&Env::only(&moved), None)
            .as_deref(),
        Some("claude:/x")
    );
    // A subscription token in the other variable is a login too; a key is none.
    let in_auth = vars(&[("HOME", "/h"), ("ANTHROPIC_AUTH_TOKEN", token)]);
    assert_eq!(
        Family::Claude.login_key(&Env::only(&in_auth), None),
        Some(key)
    );
    let keyed = vars(&[
        ("CLAUDE_CODE_OAUTH_TOKEN", token),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-x"),
    ]);
    assert_eq!(Family::Claude.login_key(&Env::only(&keyed), None), None);
}

#[test]
fn the_child_environment_wins_over_agents_own_and_a_removed_variable_is_gone() {
    let set = vars(&[("CLAUDE_CONFIG_DIR", "/set")]);
    let removed = vec!["CODEX_HOME".to_string()];
    let env = Env {
        set: &set,
        removed: &removed,
        inherit: false,
    };
    assert_eq!(env.get("CLAUDE_CONFIG_DIR").as_deref(), Some("/set"));
    assert_eq!(env.get("CODEX_HOME"), None);
}

#[test]
fn every_adapter_says_how_its_cli_is_checked_and_what_to_do_when_its_login_is_refused() {
    for family in ALL {
        let check = family.self_check().expect("a self-check table");
        assert!(check.args.contains(&"PROMPT"), "{family:?}");
        assert!(check.args.contains(&"-p"), "{family:?}: headless");
        assert!(!check.auth_fix.is_empty(), "{family:?}");
        assert!(
            !check.limit.is_empty() && !check.auth.is_empty(),
            "{family:?}"
        );
        assert_eq!(
            check.untrusted.is_empty() && check.untrusted_exit.is_none(),
            check.untrusted_fix.is_empty(),
            "{family:?}: an untrusted folder's words come with its fix"
        );
        for word in check
            .limit
            .iter()
            .chain(check.auth)
            .chain(check.untrusted)
            .chain(check.rate_limited)
            .chain(check.failure)
        {
            assert_eq!(
                *word,
                word.to_lowercase(),
                "{family:?}: words are matched lowercased"
            );
        }
    }
    assert!(Family::Other.self_check().is_none());
}

#[test]
fn a_cli_is_kept_from_other_vendors_keys_but_not_from_its_own_or_its_providers() {
    let none = Env::only(&[]);
    let claude = Family::Claude.foreign_credential_vars(&none);
    for var in [
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "OPENCODE_API_KEY",
    ] {
        assert!(claude.contains(&var), "{var}: {claude:?}");
    }
    for var in Family::Claude.credential_vars() {
        assert!(!claude.contains(var), "{var}: {claude:?}");
    }
    assert!(Family::Opencode.foreign_credential_vars(&none).is_empty());
    assert!(Family::Other.foreign_credential_vars(&none).is_empty());
    assert!(
        Family::Agy
            .foreign_credential_vars(&none)
            .contains(&"GEMINI_API_KEY")
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        "model_provider = \"gateway\"\n\n[model_providers.gateway]\nbase_url = \"http://127.0.0.1:9\"\nenv_key = \"ANTHROPIC_API_KEY\"\n",
    )
    .unwrap();
    let set = vars(&[("CODEX_HOME", &dir.path().display().to_string())]);
    let codex = Family::Codex.foreign_credential_vars(&Env::only(&set));
    assert!(!codex.contains(&"ANTHROPIC_API_KEY"), "{codex:?}");
    assert!(codex.contains(&"GEMINI_API_KEY"), "{codex:?}");
}

// ---- what each CLI's own trust record says of a folder ---------------------------------

/// A home with a project under it, `repo/sub` inside a git repository `repo`, and `loose`
/// in none.
struct Folders {
    _root: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    sub: PathBuf,
    loose: PathBuf,
}

fn folders() -> Folders {
    let root = tempfile::tempdir().unwrap();
    // Canonical, as the working directory agent reads is.
    let base = root.path().canonicalize().unwrap();
    let home = base.join("home");
    let repo = base.join("work/repo");
    let sub = repo.join("sub");
    let loose = base.join("work/loose");
    for dir in [&home, &sub, &loose, &repo.join(".git")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    Folders {
        _root: root,
        home,
        repo,
        sub,
        loose,
    }
}

impl Folders {
    fn write(&self, rel: &str, text: &str) {
        let path = self.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn trust(&self, family: Family, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> Trust {
        let mut set = vars(extra);
        set.push(("HOME".into(), self.home.to_string_lossy().into_owned()));
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        (family.self_check().unwrap().trust)(&Env::only(&set), dir, &args)
    }
}

fn key(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}

#[test]
fn claude_code_trusts_a_folder_its_dialog_accepted_or_a_parent_up_to_the_repository() {
    let f = folders();
    let trust = |dir: &Path| f.trust(Family::Claude, dir, &[], &[]);
    assert_eq!(trust(&f.sub), Trust::Untrusted, "no record at all");
    let accept = |folder: &Path, yes: bool| {
        let doc = serde_json::json!({"projects": {key(folder): {"hasTrustDialogAccepted": yes}}});
        f.write(".claude.json", &doc.to_string());
    };
    accept(&f.sub, false);
    assert_eq!(trust(&f.sub), Trust::Untrusted, "declined");
    accept(&f.repo, true);
    assert_eq!(
        trust(&f.sub),
        Trust::Trusted,
        "the repository's root counts for its folders"
    );
    // Above the repository's root its rule does not reach.
    accept(f.repo.parent().unwrap(), true);
    assert_eq!(trust(&f.sub), Trust::Untrusted);
    // Outside a repository every parent counts.
    assert_eq!(trust(&f.loose), Trust::Trusted);
    // Its variable moves the file; another one makes no record count.
    assert_eq!(
        f.trust(
            Family::Claude,
            &f.loose,
            &[],
            &[("CLAUDE_CONFIG_DIR", "/nowhere")]
        ),
        Trust::Untrusted
    );
    assert_eq!(
        f.trust(
            Family::Claude,
            &f.loose,
            &[],
            &[("CLAUDE_CODE_IGNORE_PERSISTED_TRUST", "1")]
        ),
        Trust::Untrusted
    );
}

#[test]
fn gemini_cli_refuses_a_folder_no_rule_trusts_and_trusts_by_the_longest_rule() {
    let f = folders();
    let trust = |dir: &Path, extra: &[(&str, &str)]| f.trust(Family::Gemini, dir, &[], extra);
    let refused = Trust::Refused(format!(
        "gemini does not trust this folder ({})",
        f.sub.display()
    ));
    assert_eq!(trust(&f.sub, &[]), refused, "folder trust is on by default");
    let rules = |pairs: &[(&Path, &str)]| {
        let doc: serde_json::Map<String, serde_json::Value> = pairs
            .iter()
            .map(|(dir, level)| (key(dir), serde_json::Value::from(*level)))
            .collect();
        f.write(
            ".gemini/trustedFolders.json",
            &serde_json::Value::Object(doc).to_string(),
        );
    };
    rules(&[(&f.repo, "TRUST_FOLDER")]);
    assert_eq!(
        trust(&f.sub, &[]),
        Trust::Trusted,
        "a trusted folder's subfolders"
    );
    rules(&[(&f.repo, "TRUST_FOLDER"), (&f.sub, "DO_NOT_TRUST")]);
    assert_eq!(trust(&f.sub, &[]), refused, "the longest rule decides");
    rules(&[(&f.sub.join("file"), "TRUST_PARENT")]);
    assert_eq!(
        trust(&f.sub, &[]),
        Trust::Trusted,
        "TRUST_PARENT trusts the rule's parent"
    );
    rules(&[(&f.sub, "TRUST_EVERYTHING")]);
    assert_eq!(
        trust(&f.sub, &[]),
        refused,
        "a file it would refuse trusts nothing"
    );
    // Trusted everywhere by its variable, its flag or folder trust off: a launch runs, but
    // no record names the folder, so agent's check stays out of it.
    rules(&[]);
    assert_eq!(
        trust(&f.sub, &[("GEMINI_CLI_TRUST_WORKSPACE", "true")]),
        Trust::Untrusted
    );
    assert_eq!(
        f.trust(Family::Gemini, &f.sub, &["--skip-trust"], &[]),
        Trust::Untrusted
    );
    f.write(
        ".gemini/settings.json",
        r#"{"security": {"folderTrust": {"enabled": false}}}"#,
    );
    assert_eq!(trust(&f.sub, &[]), Trust::Untrusted);
    // Restricted, nothing is trusted, whatever a rule says.
    rules(&[(&f.repo, "TRUST_FOLDER")]);
    assert_eq!(
        trust(&f.sub, &[("GEMINI_CLI_TRUST_WORKSPACE", "false")]),
        refused
    );
}

#[test]
fn codex_exec_refuses_a_folder_outside_a_git_repository_and_trusts_by_its_projects() {
    let f = folders();
    let trust = |dir: &Path, args: &[&str]| f.trust(Family::Codex, dir, args, &[]);
    assert!(
        matches!(trust(&f.loose, &[]), Trust::Refused(why) if why.contains(&*f.loose.to_string_lossy())),
        "outside a repository"
    );
    assert_eq!(
        trust(&f.loose, &["--skip-git-repo-check"]),
        Trust::Untrusted
    );
    assert_eq!(trust(&f.sub, &[]), Trust::Untrusted, "no record");
    let level = |dir: &Path, level: &str| {
        format!(
            "[projects.\"{}\"]\ntrust_level = \"{level}\"\n",
            dir.display()
        )
    };
    f.write(".codex/config.toml", &level(&f.repo, "trusted"));
    assert_eq!(trust(&f.sub, &[]), Trust::Trusted, "its repository's root");
    f.write(
        ".codex/config.toml",
        &format!(
            "{}{}",
            level(&f.repo, "trusted"),
            level(&f.sub, "untrusted")
        ),
    );
    assert_eq!(
        trust(&f.sub, &[]),
        Trust::Untrusted,
        "the folder's own entry first"
    );
}

#[test]
fn a_cli_without_a_trust_record_trusts_no_folder_and_turns_a_projects_settings_off() {
    let f = folders();
    for family in [Family::Opencode, Family::Agy] {
        assert_eq!(
            f.trust(family, &f.sub, &[], &[]),
            Trust::Untrusted,
            "{family:?}"
        );
    }
    let opencode = Family::Opencode.self_check().unwrap();
    assert_eq!(
        opencode.scratch_env,
        [("OPENCODE_DISABLE_PROJECT_CONFIG", "true")]
    );
    let claude = Family::Claude.self_check().unwrap();
    assert_eq!(claude.scratch_args, ["--setting-sources", "user"]);
    // Its MCP servers are off in every check, not only in the scratch directory.
    assert_eq!(claude.no_tools_args, ["--tools", "", "--strict-mcp-config"]);
}

#[test]
fn opencode_is_known_by_its_command() {
    assert_eq!(Family::of("opencode"), Family::Opencode);
    assert_eq!(Family::of("/home/u/.bun/bin/opencode"), Family::Opencode);
    assert_eq!(Family::of("opencode-wrapper"), Family::Other);
    assert_eq!(Family::of("claude"), Family::Claude);
}

#[test]
fn every_registered_cli_is_known_by_its_own_name_and_a_program_without_one_by_none() {
    for family in ALL {
        let cli = family.cli().expect("every family in ALL is registered");
        assert_eq!(Family::of(cli.name), family, "{}", cli.name);
        assert_eq!(Family::of(&format!("/usr/local/bin/{}", cli.name)), family);
        assert_eq!(
            family.self_check().map(|c| c.args),
            Some(cli.self_check.args)
        );
    }
    assert!(Family::Other.cli().is_none());
    assert_eq!(Family::of("my-wrapper"), Family::Other);
    assert_eq!(Family::Other.credential_vars(), ["OPENAI_API_KEY"]);
    assert!(
        Family::Other
            .foreign_credential_vars(&Env::only(&[]))
            .is_empty()
    );
}

#[test]
fn a_codex_provider_sent_the_homes_login_runs_on_that_login_and_one_with_its_own_key_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join(".codex");
    std::fs::create_dir_all(&home).unwrap();
    let set = vars(&[("HOME", dir.path().to_str().unwrap())]);
    let env = Env::only(&set);
    let key = format!("codex:{}", home.display());
    let provider = |extra: &str| {
        format!(
            "model_provider = \"gw\"\n\n[model_providers.gw]\nname = \"gw\"\nbase_url = \"https://gw.example/backend-api/codex\"\n{extra}"
        )
    };
    for (settings, login) in [
        (String::new(), true),
        (provider("requires_openai_auth = true\n"), true),
        (provider(""), false),
        (
            provider("requires_openai_auth = true\nenv_key = \"GW_KEY\"\n"),
            false,
        ),
    ] {
        std::fs::write(home.join("config.toml"), &settings).unwrap();
        assert_eq!(
            Family::Codex.login_key(&env, None),
            login.then(|| key.clone()),
            "{settings}"
        );
    }
}
