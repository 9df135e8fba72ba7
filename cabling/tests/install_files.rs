//! `cabling completions SHELL` and `cabling man`: what a package installs, generated from the
//! command itself.

use crate::common::install_files;

use std::path::Path;

fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_cabling"))
}

#[test]
fn completion_scripts_name_every_subcommand() {
    install_files::completion_scripts_name_every_subcommand(bin());
}

#[test]
fn an_unknown_shell_is_refused() {
    install_files::an_unknown_shell_is_refused(bin());
}

#[test]
fn man_page_has_name_synopsis_and_every_subcommand() {
    install_files::man_page_has_name_synopsis_and_every_subcommand(bin(), "cabling");
}

#[test]
fn man_out_dir_has_a_page_per_subcommand() {
    install_files::man_out_dir_has_a_page_per_subcommand(bin(), "cabling");
}
