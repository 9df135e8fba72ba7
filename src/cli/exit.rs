//! The exit status of both commands: 0 success, 1 the command ran and found a problem, 2 bad
//! input or usage (clap's own status for usage errors).

use std::process::ExitCode;

/// The exit status of a command's result: its own code, success when the reader of stdout
/// went away, else the error on stderr (prefixed with `program`) and 2.
pub fn exit_code(program: &str, result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{program}: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Whether the error is a closed stdout (`ibfabric ... | head`), which is not a failure.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_stdout_is_success_wherever_it_is_in_the_chain() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let err = anyhow::Error::new(pipe).context("writing the report");
        assert_eq!(exit_code("test", Err(err)), ExitCode::SUCCESS);
    }

    #[test]
    fn other_errors_exit_2() {
        let err = anyhow::anyhow!("bad input");
        assert_eq!(exit_code("test", Err(err)), ExitCode::from(2));
    }

    #[test]
    fn a_command_keeps_its_own_status() {
        assert_eq!(exit_code("test", Ok(ExitCode::from(1))), ExitCode::from(1));
    }
}
