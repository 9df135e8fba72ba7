//! The real Open MPI launcher reads `rankmap`'s hostfile: `mpirun --do-not-launch --display-map`
//! maps the ranks without reaching the hosts, and rank r must land on the r-th host of the
//! hostfile (a host repeated in consecutive ranks takes them all).

use std::process::Command;

/// Rank → host as `mpirun --display-map` reports it.
fn open_mpi_map(hostfile: &std::path::Path, ranks: usize) -> Vec<String> {
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--hostfile"])
        .arg(hostfile)
        .args(["--do-not-launch", "--display-map", "-np"])
        .arg(ranks.to_string())
        .arg("true")
        .env("OMPI_MCA_plm_rsh_agent", "false")
        .output()
        .expect("mpirun not found: bash .ci/setup installs openmpi-bin");
    // --do-not-launch ends with an error status after printing the map; the map is the result.
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let mut map = vec![String::new(); ranks];
    let mut node = None;
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix("Data for node:") {
            node = rest.split_whitespace().next().map(str::to_string);
        } else if let Some((_, rank)) = line.split_once("Process rank:") {
            let rank: usize = rank.split_whitespace().next().unwrap().parse().unwrap();
            map[rank] = node.clone().expect("a rank under a node");
        }
    }
    assert!(
        map.iter().all(|h| !h.is_empty()),
        "mpirun printed no full map:\n{text}"
    );
    map
}

#[test]
fn mpirun_places_rank_r_on_the_r_th_host_of_the_hostfile() {
    let dir = tempfile::tempdir().unwrap();
    let hosts_path = dir.path().join("hosts");
    let hosts: Vec<String> = (0..24)
        .map(|i| format!("sc{}-h{}", (i * 7) % 40, i % 2))
        .collect();
    std::fs::write(&hosts_path, hosts.join("\n")).unwrap();
    let hostfile = dir.path().join("hostfile");
    let out = Command::new(env!("CARGO_BIN_EXE_ibfabric"))
        .args([
            "rankmap",
            "--fabric",
            "shortcut:nodes=40,degree=5,hosts=2,seed=2",
            "--hosts",
        ])
        .arg(&hosts_path)
        .args(["--collective", "allreduce", "--mapping", "random", "-o"])
        .arg(&hostfile)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&hostfile).unwrap();
    let written: Vec<&str> = text
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(written.len(), 24);
    assert_eq!(open_mpi_map(&hostfile, 24), written);
}

#[test]
fn mpirun_fills_merged_slots_in_rank_order() {
    let dir = tempfile::tempdir().unwrap();
    let hostfile = dir.path().join("hostfile");
    let ranks = ["b", "b", "a", "c", "c", "c"];
    let text =
        ibfabric::io::hostfile::write(ibfabric::io::hostfile::HostfileFormat::OpenMpi, &ranks)
            .unwrap();
    std::fs::write(&hostfile, text).unwrap();
    assert_eq!(open_mpi_map(&hostfile, ranks.len()), ranks);
}
