//! The benchmark's side of the simulation (`simgrid/bench.c`): the phase file it reads and
//! the result line it prints.
//!
//! Phase file: `ranks N`, `phases P`, then one line per phase of N destination ranks (`-1`:
//! the rank sends nothing in that phase).
//!
//! Result: rank 0 prints one line `ibfabric-bench key=value …` with at least `pattern`,
//! `ranks`, `bytes`, `iterations` and `simulated_seconds` (the slowest rank's time of one
//! iteration, averaged over the iterations, in simulated seconds).

use std::fmt::Write as _;

use super::ParseError;
use crate::simulation::traffic::{IDLE, PhaseTable};

/// The prefix of the benchmark's result line.
pub const RESULT_PREFIX: &str = "ibfabric-bench ";

/// The phase file of `table`.
pub fn write_phases(table: &PhaseTable) -> String {
    let mut out = format!("ranks {}\nphases {}\n", table.ranks, table.phases.len());
    for phase in &table.phases {
        let mut first = true;
        for &d in phase {
            if !first {
                out.push(' ');
            }
            first = false;
            if d == IDLE {
                out.push_str("-1");
            } else {
                let _ = write!(out, "{d}");
            }
        }
        out.push('\n');
    }
    out
}

/// What one benchmark run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchResult {
    /// The pattern it ran.
    pub pattern: String,
    /// Ranks.
    pub ranks: usize,
    /// Message size in bytes.
    pub bytes: u64,
    /// Iterations averaged.
    pub iterations: u32,
    /// Simulated seconds of one iteration (slowest rank).
    pub simulated_seconds: f64,
}

/// Reads the result line from the benchmark's standard output (other lines are ignored).
///
/// # Errors
/// No result line, or one without the fields or with values that are not numbers.
pub fn parse_result(stdout: &str) -> Result<BenchResult, ParseError> {
    let expected = "a line `ibfabric-bench pattern=… ranks=… bytes=… iterations=… \
                    simulated_seconds=…`";
    let Some((index, line)) = stdout
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with(RESULT_PREFIX))
    else {
        let last = stdout.lines().last().unwrap_or("");
        return Err(ParseError::new(
            stdout.lines().count().max(1),
            expected,
            last,
        ));
    };
    let number = index + 1;
    let field = |key: &str| {
        line[RESULT_PREFIX.len()..]
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .ok_or_else(|| ParseError::new(number, expected, line))
    };
    let bad = || ParseError::new(number, expected, line);
    let simulated_seconds: f64 = field("simulated_seconds")?.parse().map_err(|_| bad())?;
    if !simulated_seconds.is_finite() || simulated_seconds < 0.0 {
        return Err(bad());
    }
    Ok(BenchResult {
        pattern: field("pattern")?.to_string(),
        ranks: field("ranks")?.parse().map_err(|_| bad())?,
        bytes: field("bytes")?.parse().map_err(|_| bad())?,
        iterations: field("iterations")?.parse().map_err(|_| bad())?,
        simulated_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_written_one_line_each_with_idle_ranks_as_minus_one() {
        let table = PhaseTable {
            ranks: 3,
            phases: vec![vec![1, 2, 0], vec![IDLE, 0, 1]],
        };
        assert_eq!(write_phases(&table), "ranks 3\nphases 2\n1 2 0\n-1 0 1\n");
    }

    #[test]
    fn the_result_line_is_found_among_other_output() {
        let out = "hello\nibfabric-bench pattern=alltoall ranks=4 bytes=1024 iterations=2 \
                   simulated_seconds=1.5e-05\nbye\n";
        let r = parse_result(out).unwrap();
        assert_eq!(r.pattern, "alltoall");
        assert_eq!((r.ranks, r.bytes, r.iterations), (4, 1024, 2));
        assert_eq!(r.simulated_seconds, 1.5e-5);
    }

    #[test]
    fn output_without_a_result_line_is_an_error() {
        let err = parse_result("nothing\n").unwrap_err();
        assert!(err.to_string().contains("ibfabric-bench"), "{err}");
    }

    #[test]
    fn a_result_line_without_a_time_is_an_error() {
        assert!(parse_result("ibfabric-bench pattern=x ranks=1 bytes=1 iterations=1\n").is_err());
        assert!(
            parse_result(
                "ibfabric-bench pattern=x ranks=1 bytes=1 iterations=1 simulated_seconds=nan\n"
            )
            .is_err()
        );
    }
}
