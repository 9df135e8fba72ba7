//! Benchmark: building the largest constructions (parameter validation, field tables and the
//! fabric), rendering them as ibsim net files and ibnetdiscover dumps, and reading such a dump
//! back (as `ibfabric` does with the output of the real tool).
//!
//! `cargo bench --bench construct` prints one Markdown table row per fabric: median wall time
//! over at least 5 runs and 1 s, and the process's peak resident memory after all runs.

#[path = "measure.rs"]
mod measure;

use measure::{measure, median, ms, peak_rss_kib};

use ibfabric::io::{ibnetdiscover, ibsim};
use ibfabric::topology::TopologySpec;

fn main() {
    let cases = [
        "slimfly:q=5",
        "slimfly:q=19",
        "slimfly:q=27",
        "mlfm:d=18",
        "lsft:n=17",
        "polarfly:q=31",
    ];
    println!("| fabric | switches | hosts | build | ibsim net | write dump | read dump |");
    println!("|---|---|---|---|---|---|---|");
    for text in cases {
        let spec: TopologySpec = text.parse().expect("valid spec");
        let (build, fabric) = measure(|| spec.build().expect("valid"));
        let (net, _) = measure(|| ibsim::write_net(&fabric));
        let (write, dump) = measure(|| ibnetdiscover::write(&fabric));
        let (read, parsed) = measure(|| ibnetdiscover::parse(&dump, None).expect("own dump"));
        assert_eq!(parsed.fabric.summary(), fabric.summary());
        let s = fabric.summary();
        println!(
            "| {text} | {} | {} | {} | {} | {} | {} |",
            s.switches,
            s.hosts,
            ms(median(&build)),
            ms(median(&net)),
            ms(median(&write)),
            ms(median(&read))
        );
    }
    println!("\npeak RSS: {} MiB", peak_rss_kib() / 1024);
}
