//! Diagnostics on stderr at the verbosity asked for: the `-v` flag both commands take, and the
//! logger it sets up.

use clap::Args;

/// The `-v` flag (global: it may follow any subcommand).
#[derive(Args, Debug, Clone, Copy)]
pub struct Verbosity {
    /// More log output on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
}

impl Verbosity {
    /// The level the flag asks for: warnings by default, `-v` info, `-vv` debug.
    pub fn level(self) -> log::LevelFilter {
        match self.verbose {
            0 => log::LevelFilter::Warn,
            1 => log::LevelFilter::Info,
            _ => log::LevelFilter::Debug,
        }
    }

    /// Sends log records to stderr at [`Self::level`]; `RUST_LOG` overrides.
    pub fn init_logging(self) {
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
}
