//! Benchmark: all-to-all schedules on the largest 36-port machines (MLFM d = 18, 6156 servers;
//! LSFT n = 17, 5526 servers) — generation, all-to-all verification and the congestion check on
//! the routing the core computes — and the shift baseline on every LSFT n = 3..17.
//!
//! `cargo bench --bench a2a` prints Markdown tables. An argument filters the rows (`mlfm`,
//! `lsft`, `shift`).

#[path = "measure.rs"]
mod measure;

use std::time::Instant;

use ibfabric::collectives::{self, MlfmSpine, check, core_tables, mlfm_layer_tables};
use ibfabric::routing::{LidTable, assign_lids};
use ibfabric::topology::Construction;
use ibfabric::topology::lsft::Lsft;
use ibfabric::topology::mlfm::Mlfm;

fn ms(started: Instant) -> String {
    format!("{:.1} ms", started.elapsed().as_secs_f64() * 1e3)
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    println!("| schedule | servers | generate | verify all-to-all | route | check | ratio |");
    println!("|---|---|---|---|---|---|---|");
    if wanted("mlfm") {
        // The whole machine; the paper's source-chosen spines need 18 LID layers (LMC 5: more
        // LIDs than IB has), so the full machine runs the one-layer destination variant, and
        // the largest by-source allocation that fits LMC 2 (m = 4) runs on the layer layout.
        for (n, l, m, spine) in [
            (18, 19, 18, MlfmSpine::ByDestination),
            (18, 19, 4, MlfmSpine::BySource),
        ] {
            let mlfm = Mlfm::new(18).unwrap();
            let started = Instant::now();
            let schedule = collectives::mlfm(18, n, l, m, spine).unwrap();
            let generate = ms(started);
            let started = Instant::now();
            schedule.verify_all_to_all().unwrap();
            let verify = ms(started);
            let started = Instant::now();
            let mut fabric = mlfm.build();
            assign_lids(&mut fabric, schedule.layers.trailing_zeros() as u8).unwrap();
            let lids = LidTable::from_fabric(&fabric).unwrap();
            let tables = mlfm_layer_tables(&mlfm, &fabric, &lids, l, spine);
            let route = ms(started);
            let started = Instant::now();
            let report = check(&fabric, &lids, &tables, &schedule).unwrap();
            let checked = ms(started);
            assert_eq!(report.throughput_ratio, 1.0);
            println!(
                "| {} ({spine:?}, {} layers) | {} | {generate} | {verify} | {route} | {checked} | {} |",
                schedule.name,
                schedule.layers,
                schedule.ranks.len(),
                report.throughput_ratio
            );
        }
    }
    if wanted("lsft") {
        let started = Instant::now();
        let schedule = collectives::lsft_full(17).unwrap();
        let generate = ms(started);
        let started = Instant::now();
        schedule.verify_all_to_all().unwrap();
        let verify = ms(started);
        let started = Instant::now();
        let mut fabric = Lsft::new(17).unwrap().build();
        let (lids, tables) = core_tables(&mut fabric, 1).unwrap();
        let route = ms(started);
        let started = Instant::now();
        let report = check(&fabric, &lids, &tables, &schedule).unwrap();
        let checked = ms(started);
        assert_eq!(report.throughput_ratio, 1.0);
        println!(
            "| {} | {} | {generate} | {verify} | {route} | {checked} | {} |",
            schedule.name,
            schedule.ranks.len(),
            report.throughput_ratio
        );
        let started = Instant::now();
        let schedule = collectives::lsft_partial(17, 16, 16).unwrap();
        let generate = ms(started);
        let started = Instant::now();
        let report = check(&fabric, &lids, &tables, &schedule).unwrap();
        let checked = ms(started);
        assert_eq!(report.throughput_ratio, 1.0);
        println!(
            "| {} | {} | {generate} | | | {checked} | {} |",
            schedule.name,
            schedule.ranks.len(),
            report.throughput_ratio
        );
    }
    if wanted("shift") {
        println!();
        println!(
            "Shift on the full LSFT, ranks in node order (points P, P(c), P(c,r); then server k):"
        );
        println!();
        println!("| n | servers | ratio | worst phase ratio | most flows on a link | check |");
        println!("|---|---|---|---|---|---|");
        for n in [3u32, 4, 5, 7, 8, 9, 11, 13, 16, 17] {
            let mut fabric = Lsft::new(n).unwrap().build();
            let ranks = fabric
                .hosts()
                .map(|h| fabric.node(h).name.clone())
                .collect();
            let schedule = collectives::shift(ranks);
            let (lids, tables) = core_tables(&mut fabric, 1).unwrap();
            let started = Instant::now();
            let report = check(&fabric, &lids, &tables, &schedule).unwrap();
            println!(
                "| {n} | {} | {:.4} | {:.4} | {} | {} |",
                schedule.ranks.len(),
                report.throughput_ratio,
                report.worst_phase.as_ref().map_or(1.0, |p| p.ratio),
                report.max_link_flows,
                ms(started)
            );
        }
    }
    println!();
    println!(
        "Peak resident memory: {} MiB",
        measure::peak_rss_kib() / 1024
    );
}
