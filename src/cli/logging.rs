//! Diagnostics on stderr at the verbosity asked for: the `-v` and `-q` flags both commands take,
//! and the logger they set up.

use clap::Args;

/// The `-v` flag (global: it may follow any subcommand).
#[derive(Args, Debug, Clone, Copy)]
pub struct Verbosity {
    /// More log output on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Errors only: no warnings, no progress.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
}

impl Verbosity {
    /// The level the flags ask for: warnings by default, `-v` info, `-vv` debug, `-q` errors.
    pub fn level(self) -> log::LevelFilter {
        if self.quiet {
            return log::LevelFilter::Error;
        }
        match self.verbose {
            0 => log::LevelFilter::Warn,
            1 => log::LevelFilter::Info,
            _ => log::LevelFilter::Debug,
        }
    }

    /// Sends log records to stderr at [`Self::level`]; `RUST_LOG` overrides. `-q` also turns
    /// progress off ([`super::progress`]).
    pub fn init_logging(self) {
        super::progress::allow(!self.quiet);
        env_logger::Builder::new()
            .filter_level(self.level())
            .parse_default_env()
            .init();
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        verbosity: Verbosity,
    }

    fn level(args: &[&str]) -> log::LevelFilter {
        let argv = std::iter::once("test").chain(args.iter().copied());
        Command::try_parse_from(argv).unwrap().verbosity.level()
    }

    #[test]
    fn each_v_raises_the_level_up_to_debug() {
        assert_eq!(level(&[]), log::LevelFilter::Warn);
        assert_eq!(level(&["-v"]), log::LevelFilter::Info);
        assert_eq!(level(&["-vv"]), log::LevelFilter::Debug);
        assert_eq!(level(&["-v", "--verbose", "-v"]), log::LevelFilter::Debug);
    }

    #[test]
    fn quiet_keeps_errors_only_and_excludes_verbose() {
        assert_eq!(level(&["-q"]), log::LevelFilter::Error);
        assert_eq!(level(&["--quiet"]), log::LevelFilter::Error);
        let argv = ["test", "-q", "-v"];
        assert!(Command::try_parse_from(argv).is_err());
    }
}
