//! All-to-all schedules checked exhaustively on the routing the core computes: MLFM d ≤ 8 (the
//! layer layout and the one-layer destination variant), LSFT n ∈ {2, 3, 4, 5, 7} full and
//! partial, the shift baseline, and the refusal of inadmissible parameters.

use ibfabric::collectives::{
    self, MlfmSpine, check, core_tables, lsft_partial_unchecked, mlfm_layer_tables, mlfm_unchecked,
};
use ibfabric::routing::{
    Algorithm, LidTable, PathLengths, Routed, RoutingConfig, assign_lids, route_fabric,
};
use ibfabric::topology::Construction;
use ibfabric::topology::lsft::Lsft;
use ibfabric::topology::mlfm::Mlfm;

#[test]
fn the_partial_lsft_schedule_matches_the_text_formula_test_vector() {
    let expected: [[u32; 12]; 12] = [
        [4, 11, 6, 5, 8, 3, 10, 9, 0, 7, 2, 1],
        [5, 10, 7, 4, 9, 2, 11, 8, 1, 6, 3, 0],
        [8, 1, 10, 3, 0, 5, 2, 7, 4, 9, 6, 11],
        [9, 0, 11, 2, 1, 4, 3, 6, 5, 8, 7, 10],
        [2, 5, 0, 7, 6, 9, 4, 11, 10, 1, 8, 3],
        [3, 4, 1, 6, 7, 8, 5, 10, 11, 0, 9, 2],
        [6, 9, 8, 11, 10, 1, 0, 3, 2, 5, 4, 7],
        [7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6],
        [10, 3, 4, 1, 2, 7, 8, 5, 6, 11, 0, 9],
        [11, 2, 5, 0, 3, 6, 9, 4, 7, 10, 1, 8],
        [0, 7, 2, 9, 4, 11, 6, 1, 8, 3, 10, 5],
        [1, 6, 3, 8, 5, 10, 7, 0, 9, 2, 11, 4],
    ];
    let schedule = collectives::lsft_partial(3, 2, 2).unwrap();
    assert_eq!(schedule.phases.len(), 12);
    for (phase, row) in schedule.phases.iter().zip(&expected) {
        assert_eq!(&phase.destination[..], &row[..], "{}", phase.label);
    }
    assert_eq!(schedule.ranks[0], "P(0,0)-s0");
    assert_eq!(schedule.ranks[3], "P(1,0)-s1");
    assert_eq!(schedule.ranks[4], "P(0,1)-s0");
}

#[test]
fn every_admissible_mlfm_up_to_d8_is_congestion_free_on_the_layer_layout() {
    let mut checked = 0;
    for d in 1..=8u32 {
        let mlfm = Mlfm::new(d).unwrap();
        for l in 1..=d + 1 {
            // One fabric per (d, ℓ): LIDs for the most layers any admissible m needs.
            let layers = (l.saturating_sub(1).max(1) as usize).next_power_of_two();
            let mut fabric = mlfm.build();
            assign_lids(&mut fabric, layers.trailing_zeros() as u8).unwrap();
            let lids = LidTable::from_fabric(&fabric).unwrap();
            let by_source = mlfm_layer_tables(&mlfm, &fabric, &lids, l, MlfmSpine::BySource);
            let by_destination =
                mlfm_layer_tables(&mlfm, &fabric, &lids, l, MlfmSpine::ByDestination);
            for n in 1..=d {
                for m in 1..=d {
                    let admissible = m < l;
                    let result = collectives::mlfm(d, n, l, m, MlfmSpine::BySource);
                    assert_eq!(result.is_ok(), admissible, "d={d} n={n} l={l} m={m}");
                    if !admissible {
                        let err = result.unwrap_err().to_string();
                        assert!(err.contains("admissible"), "{err}");
                        // The paper's spine {j, (j + k + 1) mod ℓ} of server k = ℓ − 1 < m is
                        // {j, j}: no such spine exists.
                        assert!((0..l).any(|j| (j + l) % l == j));
                        continue;
                    }
                    let schedule = result.unwrap();
                    schedule.verify_all_to_all().unwrap();
                    assert!(schedule.layers <= layers);
                    let report = check(&fabric, &lids, &by_source, &schedule).unwrap();
                    assert_eq!(
                        report.throughput_ratio, 1.0,
                        "d={d} n={n} l={l} m={m}: {:?} {:?}",
                        report.worst_phase, report.worst_link
                    );
                    assert!(report.congestion_free);
                    let one_layer = mlfm_unchecked(d, n, l, m, MlfmSpine::ByDestination);
                    assert_eq!(one_layer.layers, 1);
                    let report = check(&fabric, &lids, &by_destination, &one_layer).unwrap();
                    assert_eq!(report.throughput_ratio, 1.0, "d={d} n={n} l={l} m={m}");
                    checked += 1;
                }
            }
        }
    }
    // Σ_d d · Σ_{ℓ=2}^{d+1} (ℓ − 1) admissible sets.
    let expected: u32 = (1..=8).map(|d| d * d * (d + 1) / 2).sum();
    assert_eq!(checked, expected);
}

#[test]
fn by_source_spines_are_congested_without_layers() {
    // The paper's source-chosen spines on plain destination routing (one layer): congested.
    let mlfm = Mlfm::new(4).unwrap();
    let mut fabric = mlfm.build();
    let (lids, tables) = core_tables(&mut fabric, 1).unwrap();
    let mut schedule = collectives::mlfm(4, 4, 5, 4, MlfmSpine::BySource).unwrap();
    for phase in &mut schedule.phases {
        phase.lid_offset.clear();
    }
    schedule.layers = 1;
    let report = check(&fabric, &lids, &tables, &schedule).unwrap();
    assert!(report.throughput_ratio < 1.0, "{}", report.throughput_ratio);
    assert!(report.worst_link.is_some());
}

#[test]
fn inadmissible_mlfm_parameters_are_refused() {
    for (d, n, l, m) in [
        (4, 0, 3, 1),
        (4, 5, 3, 1),
        (4, 2, 1, 1),
        (4, 2, 6, 1),
        (4, 2, 3, 3),
    ] {
        let err = collectives::mlfm(d, n, l, m, MlfmSpine::BySource).unwrap_err();
        assert!(err.to_string().contains("admissible for d = 4"), "{err}");
    }
    assert!(collectives::mlfm(0, 1, 2, 1, MlfmSpine::BySource).is_err());
    // The paper's 24-server pattern A (n = 3, ℓ = 4, m = 2) breaks its printed ℓ − 1 ≤ m.
    assert!(collectives::mlfm(3, 3, 4, 2, MlfmSpine::BySource).is_ok());
}

/// LSFT fabric with the core's minimal routing (1 layer) and the layered routing (4 layers,
/// layer 0 minimal) that the plugin programs.
fn lsft_routings(
    n: u32,
) -> Vec<(
    String,
    ibfabric::Fabric,
    LidTable,
    ibfabric::routing::ForwardingTables,
)> {
    let lsft = Lsft::new(n).unwrap();
    let mut out = Vec::new();
    let mut fabric = lsft.build();
    let (lids, tables) = core_tables(&mut fabric, 1).unwrap();
    out.push(("minimal".to_string(), fabric, lids, tables));
    let mut fabric = lsft.build();
    assign_lids(&mut fabric, 2).unwrap();
    let Routed { lids, tables, .. } = route_fabric(
        &fabric,
        &RoutingConfig {
            layers: 4,
            algorithm: Algorithm::Layered(PathLengths::default()),
            seed: 1,
            ..Default::default()
        },
    )
    .unwrap();
    out.push(("layered".to_string(), fabric, lids, tables));
    out
}

#[test]
fn every_admissible_lsft_schedule_is_congestion_free_and_the_rest_refused() {
    for n in [2u32, 3, 4, 5, 7] {
        let routings = lsft_routings(n);
        let full = collectives::lsft_full(n).unwrap();
        full.verify_all_to_all().unwrap();
        assert_eq!(full.ranks.len() as u32, (n + 1) * (n * n + n + 1));
        for (name, fabric, lids, tables) in &routings {
            let report = check(fabric, lids, tables, &full).unwrap();
            assert_eq!(report.throughput_ratio, 1.0, "n={n} full on {name}");
        }
        for k in 1..=n {
            for m in 1..=n + 1 {
                // The paper's m ≤ k, and (found by this check) m = k + 1 when k ≥ n − 1.
                let admissible = m <= k || (m == k + 1 && k + 1 >= n);
                let result = collectives::lsft_partial(n, k, m);
                assert_eq!(result.is_ok(), admissible, "n={n} k={k} m={m}");
                let schedule = match result {
                    Ok(s) => s,
                    Err(e) => {
                        assert!(e.to_string().contains("or m = k + 1 with k ≥ n − 1"), "{e}");
                        lsft_partial_unchecked(n, k, m)
                    }
                };
                schedule.verify_all_to_all().unwrap();
                let (_, fabric, lids, tables) = &routings[0];
                let report = check(fabric, lids, tables, &schedule).unwrap();
                if admissible {
                    assert_eq!(report.throughput_ratio, 1.0, "n={n} k={k} m={m}");
                    let (_, fabric, lids, tables) = &routings[1];
                    let report = check(fabric, lids, tables, &schedule).unwrap();
                    assert_eq!(report.throughput_ratio, 1.0, "n={n} k={k} m={m} layered");
                } else {
                    // Otherwise two flows of a phase share a spine link.
                    assert!(
                        report.throughput_ratio < 1.0,
                        "n={n} k={k} m={m} is congestion-free although refused"
                    );
                }
            }
        }
        assert!(collectives::lsft_partial(n, 0, 1).is_err());
        assert!(collectives::lsft_partial(n, n + 1, 1).is_err());
        assert!(collectives::lsft_partial(n, n, n + 1).is_ok());
        assert!(collectives::lsft_partial(n, n, n + 2).is_err());
    }
    assert!(
        collectives::lsft_full(6)
            .unwrap_err()
            .to_string()
            .contains("prime power")
    );
}

#[test]
fn the_shift_baseline_on_lsft_falls_as_n_grows() {
    let mut last = 1.0;
    for n in [2u32, 3, 5, 7] {
        let mut fabric = Lsft::new(n).unwrap().build();
        let ranks = fabric
            .hosts()
            .map(|h| fabric.node(h).name.clone())
            .collect();
        let schedule = collectives::shift(ranks);
        schedule.verify_all_to_all().unwrap();
        let (lids, tables) = core_tables(&mut fabric, 1).unwrap();
        let report = check(&fabric, &lids, &tables, &schedule).unwrap();
        assert!(
            report.throughput_ratio < last,
            "n={n}: {}",
            report.throughput_ratio
        );
        assert!(!report.congestion_free);
        last = report.throughput_ratio;
    }
}

/// The partial scheme with the move b_y = a_y + s·h (what the paper's Table 3 was evidently
/// generated with) instead of the text's b_y = a_y + s·(b_x − a_x).
fn table3_variant(n: u32, k: u32, m: u32) -> collectives::Schedule {
    use collectives::Vector;
    let mut schedule = collectives::lsft_partial(n, k, m).unwrap();
    let col = collectives::lsft_vector_column(n, k);
    let groups = (n * k) as usize;
    let rank = |x: u32, y: u32, id: u32| (y * k + x) * m + id;
    for (p, phase) in schedule.phases.iter_mut().enumerate() {
        let (g, i) = (p / m as usize, p as u32 % m);
        for y in 0..n {
            for x in 0..k {
                for j in 0..m {
                    let v = col[(g + groups - (j as usize * (n as usize - 1)) % groups) % groups];
                    let (bx, by) = match v {
                        Vector::Zero => (x, y),
                        Vector::Move(None, h) => (x, (y + h) % n),
                        Vector::Move(Some(s), h) => ((x + h) % k, (y + s * h) % n),
                    };
                    phase.destination[rank(x, y, j) as usize] = rank(bx, by, (i + j) % m);
                }
            }
        }
    }
    schedule
}

#[test]
fn the_table_3_variant_is_congested_for_n5() {
    for n in [3u32, 5] {
        let mut fabric = Lsft::new(n).unwrap().build();
        let (lids, tables) = core_tables(&mut fabric, 1).unwrap();
        for (k, m) in [(2, 2), (3, 3), (3, 2), (4, 2), (4, 3), (4, 4)] {
            if k > n {
                continue;
            }
            let schedule = table3_variant(n, k, m);
            schedule.verify_all_to_all().unwrap();
            let ratio = check(&fabric, &lids, &tables, &schedule)
                .unwrap()
                .throughput_ratio;
            let congested = n == 5 && [(3, 3), (4, 2), (4, 3), (4, 4)].contains(&(k, m));
            assert_eq!(ratio < 1.0, congested, "n={n} k={k} m={m}: {ratio}");
        }
    }
}

#[test]
fn phase_link_loads_list_every_loaded_link() {
    let mut fabric = Lsft::new(2).unwrap().build();
    let (lids, tables) = core_tables(&mut fabric, 1).unwrap();
    let full = collectives::lsft_full(2).unwrap();
    for p in 0..full.phases.len() {
        let loads = collectives::phase_link_loads(&fabric, &lids, &tables, &full, p).unwrap();
        assert!(
            loads.iter().all(|l| l.flows == 1),
            "{}",
            full.phases[p].label
        );
    }
    // Phase (a,b,c) = (0,1,0): 21 flows of 4 links each (server, leaf–spine, spine–leaf, server).
    let loads = collectives::phase_link_loads(&fabric, &lids, &tables, &full, 1).unwrap();
    assert_eq!(full.phases[1].label, "(a,b,c) = (0,1,0)");
    assert_eq!(loads.len(), 21 * 4);
    assert!(loads[0].link.contains(" -> "), "{}", loads[0].link);
    let ranks = fabric
        .hosts()
        .map(|h| fabric.node(h).name.clone())
        .collect();
    let shift = collectives::shift(ranks);
    let report = check(&fabric, &lids, &tables, &shift).unwrap();
    let worst = report.worst_phase.unwrap();
    let p = shift
        .phases
        .iter()
        .position(|ph| ph.label == worst.label)
        .unwrap();
    let loads = collectives::phase_link_loads(&fabric, &lids, &tables, &shift, p).unwrap();
    assert_eq!(loads[0].flows, worst.max_link_flows);
    assert_eq!(report.worst_link.unwrap().flows, worst.max_link_flows);
}
