//! Host lists in, hostfiles out: the job's allocated hosts as a scheduler lists them, and the
//! rank order written so that MPI launchers start rank r on the r-th host.
//!
//! * Input: one host per line (blank lines and `#` comments skipped); a host may repeat (one
//!   rank per line). A line names a host of the fabric as any name does
//!   ([`NodeResolver`](super::names::NodeResolver): node name, GUID, node-name-map,
//!   NodeDescription or its hostname, as in `node17 HCA-1`).
//! * [`HostfileFormat::OpenMpi`]: `host slots=k` lines for `mpirun --hostfile`; Open MPI fills
//!   a host's slots before the next host, so consecutive ranks on one host merge into one
//!   line, and a host whose ranks are not consecutive cannot be expressed (refused).
//! * [`HostfileFormat::Slurm`]: one host per line, in rank order, repeated per rank — the
//!   `SLURM_HOSTFILE` of `srun --distribution=arbitrary`.
//! * [`HostfileFormat::Plain`]: `rank host` per line, for scripts.

use std::collections::HashMap;

/// The hostfile dialects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostfileFormat {
    /// Open MPI `--hostfile`: `host slots=k`.
    OpenMpi,
    /// Slurm `SLURM_HOSTFILE` for `--distribution=arbitrary`: one host per rank.
    Slurm,
    /// `rank host` per line.
    Plain,
}

/// The hosts of a host list: (1-based line number, host as written).
pub fn parse_hosts(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.split('#').next().unwrap_or("").trim()))
        .filter(|(_, host)| !host.is_empty())
        .collect()
}

/// Why a rank order cannot be written in a format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{host} has ranks {first} and {later} with other hosts' ranks between; an Open MPI \
     hostfile cannot say that (use --format slurm or plain)"
)]
pub struct HostfileError {
    /// The host.
    pub host: String,
    /// One of its ranks.
    pub first: usize,
    /// A later, non-consecutive rank.
    pub later: usize,
}

/// The hostfile starting rank r on `hosts[r]`.
///
/// # Errors
/// Open MPI: a host whose ranks are not consecutive.
pub fn write(format: HostfileFormat, hosts: &[&str]) -> Result<String, HostfileError> {
    let mut out = String::new();
    match format {
        HostfileFormat::Slurm => {
            for host in hosts {
                out.push_str(host);
                out.push('\n');
            }
        }
        HostfileFormat::Plain => {
            for (rank, host) in hosts.iter().enumerate() {
                out.push_str(&format!("{rank} {host}\n"));
            }
        }
        HostfileFormat::OpenMpi => {
            let mut first_rank: HashMap<&str, usize> = HashMap::new();
            let mut rank = 0;
            for run in hosts.chunk_by(|a, b| a == b) {
                if let Some(&first) = first_rank.get(run[0]) {
                    return Err(HostfileError {
                        host: run[0].to_string(),
                        first,
                        later: rank,
                    });
                }
                first_rank.insert(run[0], rank);
                out.push_str(&format!("{} slots={}\n", run[0], run.len()));
                rank += run.len();
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_lists_skip_blanks_and_comments_and_keep_line_numbers() {
        let hosts = parse_hosts("# job 17\nnode1\n\n  node2  # spare\nnode1\n");
        assert_eq!(hosts, vec![(2, "node1"), (4, "node2"), (5, "node1")]);
    }

    /// Reads a hostfile the way Open MPI does for `--hostfile` (`host [slots=N]`, comments,
    /// blank lines) and maps ranks by slot, as `mpirun` does by default: rank order out.
    fn open_mpi_ranks(text: &str) -> Vec<String> {
        let mut ranks = Vec::new();
        for line in text.lines() {
            let line = line.split('#').next().unwrap().trim();
            let mut words = line.split_whitespace();
            let Some(host) = words.next() else { continue };
            let slots = words
                .find_map(|w| w.strip_prefix("slots="))
                .map_or(1, |s| s.parse::<usize>().unwrap());
            ranks.extend(std::iter::repeat_n(host.to_string(), slots));
        }
        ranks
    }

    /// Reads `SLURM_HOSTFILE` as `--distribution=arbitrary` does: one host per line, task i on
    /// line i.
    fn slurm_ranks(text: &str) -> Vec<String> {
        text.lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    #[test]
    fn every_format_starts_rank_r_on_the_r_th_host() {
        for hosts in [
            vec!["a", "b", "c"],
            vec!["n1", "n1", "n2", "n3", "n3", "n3"],
            vec!["only"],
            vec![],
        ] {
            let want: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
            let openmpi = write(HostfileFormat::OpenMpi, &hosts).unwrap();
            assert_eq!(open_mpi_ranks(&openmpi), want, "{openmpi}");
            assert!(openmpi.lines().all(|l| l.split_whitespace().count() == 2
                && l.split_whitespace().nth(1).unwrap().starts_with("slots=")));
            let slurm = write(HostfileFormat::Slurm, &hosts).unwrap();
            assert_eq!(slurm_ranks(&slurm), want);
            let plain = write(HostfileFormat::Plain, &hosts).unwrap();
            for (r, line) in plain.lines().enumerate() {
                assert_eq!(line, format!("{r} {}", hosts[r]));
            }
        }
        let err = write(HostfileFormat::OpenMpi, &["a", "b", "a"]).unwrap_err();
        assert_eq!((err.first, err.later), (0, 2));
        assert_eq!(
            slurm_ranks(&write(HostfileFormat::Slurm, &["a", "b", "a"]).unwrap()),
            vec!["a", "b", "a"]
        );
    }
}
