//! UCX's layer use: which layers a message of each size takes, the even split, the errors, and
//! the LIDs the resulting platform's routes lead to.

use super::tests::{host_ports, routed, walk_by_hand};
use super::traffic;
use super::*;
use crate::topology::PortRef;

fn ucx(rails: Option<u16>, rndv_thresh: u64) -> Ucx {
    Ucx { rails, rndv_thresh }
}

#[test]
fn messages_up_to_the_threshold_take_layer_zero_whole() {
    for thresh in [0, 1, 8192, 65536] {
        for rails in [None, Some(1), Some(2), Some(4)] {
            for bytes in [0, 1, thresh / 2, thresh]
                .into_iter()
                .filter(|&b| b <= thresh)
            {
                let split = ucx(rails, thresh).split(bytes, 4).unwrap();
                assert_eq!(split.parts, vec![bytes], "{rails:?} {thresh} {bytes}");
                assert_eq!(split.layers(), 1);
            }
        }
    }
}

#[test]
fn messages_above_the_threshold_are_split_evenly_over_the_first_k_layers() {
    let thresh = 8192;
    for rails in 1..=8u16 {
        for bytes in (thresh + 1..thresh + 40).chain([1 << 20, (1 << 20) + 5, 3 << 30]) {
            let split = ucx(Some(rails), thresh).split(bytes, 8).unwrap();
            assert_eq!(split.layers(), usize::from(rails), "{rails} {bytes}");
            assert_eq!(split.parts.iter().sum::<u64>(), bytes, "{rails} {bytes}");
            let (min, max) = (
                *split.parts.iter().min().unwrap(),
                *split.parts.iter().max().unwrap(),
            );
            assert!(max - min <= 1, "{rails} {bytes}: {:?}", split.parts);
            assert_eq!(split.largest_part(), bytes.div_ceil(u64::from(rails)));
        }
    }
}

#[test]
fn the_default_rails_are_two_or_the_lids_if_fewer() {
    for (lids, expected) in [(1, 1), (2, 2), (4, 2), (8, 2), (128, 2)] {
        assert_eq!(Ucx::DEFAULT.rails(lids), Ok(expected), "{lids} LIDs");
        let split = Ucx::DEFAULT
            .split(Ucx::DEFAULT_RNDV_THRESH + 1, lids)
            .unwrap();
        assert_eq!(split.layers(), usize::from(expected), "{lids} LIDs");
    }
    assert_eq!(Ucx::DEFAULT_RAILS, 2);
}

#[test]
fn zero_rails_are_refused_whatever_the_size() {
    for bytes in [1, 1 << 20] {
        let err = ucx(Some(0), 8192).split(bytes, 4).unwrap_err();
        assert_eq!(err, UcxError::NoRails);
        assert!(err.to_string().contains("K ≥ 1"), "{err}");
    }
}

#[test]
fn more_rails_than_lids_are_refused_whatever_the_size() {
    for (rails, lids) in [(2, 1), (3, 2), (8, 4)] {
        for bytes in [1, 1 << 20] {
            let err = ucx(Some(rails), 8192).split(bytes, lids).unwrap_err();
            assert_eq!(err, UcxError::TooManyRails { rails, lids });
            let text = err.to_string();
            assert!(text.contains(&format!("ucx:{rails}")), "{text}");
            assert!(text.contains(&format!("at most {lids}")), "{text}");
        }
    }
}

/// The platform of `split` on `spec` routed with `layers` layers: one host per endpoint for a
/// whole message, K copies for a split one (as `ibfabric simulate` builds it).
fn platform_of_split(
    spec: &str,
    layers: usize,
    split: &MessageSplit,
) -> (
    crate::Fabric,
    crate::routing::ForwardingTables,
    Vec<PortRef>,
    Platform,
) {
    let (fabric, lids, tables) = routed(spec, layers);
    let ports = host_ports(&fabric);
    let n = ports.len();
    let copies: Vec<PortRef> = (0..split.layers())
        .flat_map(|_| ports.iter().copied())
        .collect();
    let policy = if split.layers() == 1 {
        LayerPolicy::Fixed(0)
    } else {
        LayerPolicy::Parallel { endpoints: n }
    };
    let platform = Platform::build(
        &fabric,
        &lids,
        &tables,
        &copies,
        &LinkModel::DEFAULT,
        &policy,
    )
    .unwrap();
    (fabric, tables, ports, platform)
}

/// Every route of the platform leads to the destination's base LID plus the layer of its copy.
fn assert_parts_reach_base_lid_plus_k(spec: &str, layers: usize, split: &MessageSplit) {
    let (fabric, tables, ports, platform) = platform_of_split(spec, layers, split);
    let n = ports.len();
    assert_eq!(platform.hosts.len(), n * split.layers(), "{spec}");
    for a in 0..platform.hosts.len() {
        for b in (0..platform.hosts.len()).filter(|&b| ports[b % n] != ports[a % n]) {
            let layer = platform.layer(a, b);
            assert_eq!(usize::from(layer), b / n, "{spec}: {a} -> {b}");
            let to = ports[b % n];
            let lid = fabric.node(to.node).ports[usize::from(to.port)].lid + layer;
            let expected = walk_by_hand(&fabric, &tables, ports[a % n], to, lid);
            let got: Vec<PortRef> = platform
                .route(a, b)
                .iter()
                .map(|&l| platform.links[l as usize].from)
                .collect();
            assert_eq!(got, expected, "{spec}: {a} -> {b} on layer {layer}");
        }
    }
}

#[test]
fn an_eager_message_goes_to_the_base_lid() {
    let split = Ucx::DEFAULT.split(Ucx::DEFAULT_RNDV_THRESH, 4).unwrap();
    assert_parts_reach_base_lid_plus_k("slimfly:q=3", 4, &split);
}

#[test]
fn a_rendezvous_message_goes_to_base_lids_zero_and_one_by_default() {
    let split = Ucx::DEFAULT.split(1 << 20, 4).unwrap();
    assert_eq!(split.layers(), 2);
    assert_parts_reach_base_lid_plus_k("slimfly:q=3", 4, &split);
}

#[test]
fn a_rendezvous_message_over_four_rails_goes_to_all_four_lids() {
    let split = ucx(Some(4), 8192).split(1 << 20, 4).unwrap();
    assert_parts_reach_base_lid_plus_k("lsft:n=3", 4, &split);
}

#[test]
fn half_shift_sends_every_rank_half_the_ranks_on() {
    for ranks in 1..60usize {
        let table = traffic::half_shift(ranks);
        assert_eq!(table.phases.len(), 1);
        let phase = &table.phases[0];
        let mut seen = vec![false; ranks];
        for (r, &d) in phase.iter().enumerate() {
            assert_eq!(d as usize, (r + ranks / 2) % ranks, "{ranks}: {r}");
            assert!(
                !std::mem::replace(&mut seen[d as usize], true),
                "{ranks}: a permutation"
            );
        }
        let expected_sent = usize::from(ranks > 1);
        assert_eq!(table.max_messages_sent(), expected_sent, "{ranks}");
    }
}
