//! The files an installed command comes with, generated from its own clap definition so they
//! can never drift from the options it takes: shell completion scripts (`completions SHELL`)
//! and man pages (`man`). The Debian package runs both at build time.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

use super::output;

/// `completions SHELL`: the completion script on stdout.
#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: Shell,
}

impl CompletionsArgs {
    /// Prints the script for `command` (the front end's whole clap definition).
    ///
    /// # Errors
    /// Stdout cannot be written.
    pub fn run(&self, command: clap::Command) -> anyhow::Result<ExitCode> {
        output::emit(None, &completion_script(command, self.shell))?;
        Ok(ExitCode::SUCCESS)
    }
}

/// `man`: the man page on stdout, or every page into a directory.
#[derive(Args)]
pub struct ManArgs {
    /// Write NAME.1 and one NAME-SUBCOMMAND.1 per subcommand into DIR instead of printing NAME.1.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

impl ManArgs {
    /// Prints or writes the pages of `command` (the front end's whole clap definition).
    ///
    /// # Errors
    /// A page cannot be rendered or written.
    pub fn run(&self, command: clap::Command) -> anyhow::Result<ExitCode> {
        let pages = man_pages(command)?;
        match &self.out_dir {
            None => output::emit(None, &String::from_utf8_lossy(&pages[0].1))?,
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
                let files: Vec<_> = pages
                    .into_iter()
                    .map(|(name, page)| (dir.join(name), page))
                    .collect();
                output::write_all_atomically(&files)?;
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// The completion script of `command` for `shell`.
pub fn completion_script(mut command: clap::Command, shell: Shell) -> String {
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, name, &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

/// The man pages of `command`: `NAME.1` first, then `NAME-SUBCOMMAND.1` for each subcommand
/// (what `git` does: `man ibfabric-route`), as (file name, roff) pairs.
///
/// # Errors
/// Rendering fails (only on a write error into memory, which does not happen).
pub fn man_pages(mut command: clap::Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    // Global options (`-v`) reach the subcommands only once the command is built.
    command.build();
    let name = command.get_name().to_string();
    let mut pages = vec![(format!("{name}.1"), render(command.clone())?)];
    for sub in command.get_subcommands() {
        let page_name = format!("{name}-{}", sub.get_name());
        let mut sub = sub
            .clone()
            .name(page_name.clone())
            .bin_name(format!("{name} {}", sub.get_name()));
        if let Some(version) = command.get_version() {
            sub = sub.version(version.to_string());
        }
        pages.push((format!("{page_name}.1"), render(sub)?));
    }
    Ok(pages)
}

fn render(command: clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command).render(&mut page)?;
    Ok(page)
}
