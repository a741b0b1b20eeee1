//! The man page and shell completions, generated from the clap definition so they cannot
//! disagree with `--help` (a test regenerates them and compares with the committed files).

use std::fs;
use std::path::Path;

use anyhow::Context as _;
use clap_complete::Shell;

pub fn write_man(dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut page = Vec::new();
    // The page's VERSION is the version alone: `--version`'s commit and build day would make
    // every build's page differ from the committed one.
    let command = crate::cli::command().long_version(None::<&'static str>);
    clap_mangen::Man::new(command).render(&mut page)?;
    let path = dir.join("agent.1");
    fs::write(&path, page).with_context(|| format!("writing {}", path.display()))
}

pub fn write_completions(dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let mut command = crate::cli::command();
        clap_complete::generate_to(shell, &mut command, "agent", dir)
            .with_context(|| format!("writing {shell} completions into {}", dir.display()))?;
    }
    Ok(())
}
