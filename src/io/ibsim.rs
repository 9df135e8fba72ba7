//! ibsim net files: the fabric description the InfiniBand simulator `ibsim -s FILE` loads.
//!
//! The format is ibnetdiscover's without the comments ibsim does not need: per node a
//! `vendid=`/`devid=`/`switchguid=`|`caguid=`|`rtguid=` block, a `Switch N "id" # "desc"` header
//! and one `[port] "peer id"[peer port]` line per cable, listed from both ends. Node ids are the
//! fabric's node names when ibsim accepts them (at most 64 bytes, no `#`, `@`, `"` or white
//! space), otherwise the ibnetdiscover-style id `S-<guid>`; the node descriptions are kept as
//! they are, so `ibnetdiscover` under ibsim reports the same NodeDescriptions and GUIDs.
//!
//! Link rates: the most common rate of the fabric becomes the file's default (`width=`,
//! `speed=`, `extspeed=` enable masks); a cable at another rate gets per-port `w=`/`s=`/`e=`
//! options on both ends, so the simulated link trains at exactly that rate. FDR10 is a vendor
//! extension without an enable mask: its ports carry the rate as ibnetdiscover prints it
//! (`# "" lid 0 4xFDR10`), which ibsim reads to enable FDR10, and `e=0` so no standard extended
//! speed wins over it. ibsim 0.10 refuses extended speeds above HDR, so NDR and XDR links are
//! written at HDR (a comment in the file says so).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::topology::{Fabric, LinkSpeed, LinkWidth, Node, NodeKind};

/// The rate generated fabrics and rate-less cables get in the simulator.
const DEFAULT_RATE: (LinkWidth, LinkSpeed) = (LinkWidth::X4, LinkSpeed::Edr);

/// Renders `fabric` as an ibsim net file.
pub fn write_net(fabric: &Fabric) -> String {
    let ids: Vec<String> = fabric.nodes().iter().map(net_id).collect();
    let default_rate = simulated(most_common_rate(fabric));
    let mut out = String::with_capacity(64 * (fabric.nodes().len() + 2 * fabric.links().len()));
    let _ = writeln!(out, "# ibsim net file for {}", fabric.name);
    let _ = writeln!(out, "# {}", fabric.summary());
    if fabric
        .links()
        .iter()
        .any(|l| l.speed.is_some_and(|s| s > FASTEST_SIMULATED))
    {
        let _ = writeln!(
            out,
            "# links faster than {FASTEST_SIMULATED} run at {FASTEST_SIMULATED}, the fastest speed ibsim 0.10 knows"
        );
    }
    let (width_mask, speed_mask, ext_mask) = enable_masks(default_rate);
    let _ = writeln!(
        out,
        "width={width_mask}\nspeed={speed_mask}\nextspeed={ext_mask}"
    );
    for (i, node) in fabric.nodes().iter().enumerate() {
        let (guid_key, kind_word) = match node.kind {
            NodeKind::Switch => ("switchguid", "Switch"),
            NodeKind::Ca => ("caguid", "Ca"),
            NodeKind::Router => ("rtguid", "Rt"),
        };
        let _ = write!(
            out,
            "\nvendid={:#x}\ndevid={:#x}\n",
            node.vendor_id, node.device_id
        );
        if let Some(system) = node.system_guid {
            let _ = writeln!(out, "sysimgguid={:#018x}", system.0);
        }
        let _ = writeln!(out, "{guid_key}={:#018x}", node.guid.0);
        let description = node.description.replace('"', "'");
        let _ = write!(
            out,
            "{kind_word}\t{} \"{}\"\t\t# \"{description}\"",
            node.num_ports(),
            ids[i]
        );
        out.push_str(if node.is_switch() {
            " enhanced port 0\n"
        } else {
            "\n"
        });
        for (port, peer) in fabric.neighbours(crate::topology::NodeId(i as u32)) {
            let _ = write!(
                out,
                "[{port}]\t\"{}\"[{}]",
                ids[peer.node.index()],
                peer.port
            );
            let link = fabric.link(node.ports[usize::from(port)].link.expect("cabled port"));
            let rate = simulated((
                link.width.unwrap_or(default_rate.0),
                link.speed.unwrap_or(default_rate.1),
            ));
            if rate.1 == LinkSpeed::Fdr10 {
                let _ = write!(out, "\te=0\t\t# \"\" lid 0 {}FDR10", rate.0);
            } else if rate != default_rate {
                let (w, s, e) = enable_masks(rate);
                let _ = write!(out, "\tw={w} s={s} e={e}");
            }
            out.push('\n');
        }
    }
    out
}

/// The id ibsim knows a node by: its name when ibsim accepts it, else `S-`/`H-`/`R-` + GUID.
pub fn net_id(node: &Node) -> String {
    let acceptable = !node.name.is_empty()
        && node.name.len() <= 64
        && !node
            .name
            .chars()
            .any(|c| matches!(c, '#' | '@' | '"') || c.is_whitespace());
    if acceptable {
        node.name.clone()
    } else {
        format!("{}-{:016x}", node.kind.id_prefix(), node.guid.0)
    }
}

fn most_common_rate(fabric: &Fabric) -> (LinkWidth, LinkSpeed) {
    let mut counts: HashMap<(LinkWidth, LinkSpeed), usize> = HashMap::new();
    for link in fabric.links() {
        match (link.width, link.speed) {
            (Some(_), Some(LinkSpeed::Fdr10)) => {} // not expressible as a default
            (Some(w), Some(s)) => *counts.entry((w, s)).or_default() += 1,
            _ => {}
        }
    }
    counts
        .into_iter()
        .max_by_key(|&(rate, n)| (n, rate))
        .map_or(DEFAULT_RATE, |(rate, _)| rate)
}

/// PortInfo enable masks (LinkWidthEnabled, LinkSpeedEnabled, LinkSpeedExtEnabled) under which a
/// link trains at exactly `rate`: the width's own bit, every base speed up to the speed, every
/// extended speed up to it.
/// The fastest link speed ibsim 0.10 accepts (its extended speed masks stop at HDR).
const FASTEST_SIMULATED: LinkSpeed = LinkSpeed::Hdr;

/// The rate a link trains at in the simulator: NDR and XDR links at HDR.
fn simulated((width, speed): (LinkWidth, LinkSpeed)) -> (LinkWidth, LinkSpeed) {
    (width, speed.min(FASTEST_SIMULATED))
}

fn enable_masks((width, speed): (LinkWidth, LinkSpeed)) -> (u32, u32, u32) {
    let (base, ext) = speed.portinfo_bits();
    let base_mask = if base == 0 { 7 } else { (base << 1) - 1 };
    let ext_mask = if ext == 0 { 0 } else { (ext << 1) - 1 };
    (width.portinfo_bit(), base_mask, ext_mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Construction, slimfly::SlimFly};

    #[test]
    fn every_cable_is_listed_from_both_ends_under_its_node() {
        let fabric = SlimFly::new(5, None).unwrap().build();
        let net = write_net(&fabric);
        let port_lines = net.lines().filter(|l| l.starts_with('[')).count();
        assert_eq!(port_lines, 2 * fabric.links().len());
        assert!(net.contains("width=2\nspeed=7\nextspeed=3\n"));
        assert!(net.contains(
            "sysimgguid=0x02fab00000000000\nswitchguid=0x02fab00000000000\nSwitch\t11 \"sw0-0-0\"\t\t# \"MF0;sw0-0-0:slimfly-q5/U1\" enhanced port 0\n[1]\t\"sw1-0-0\"[1]\n"
        ));
        assert!(net.contains(
            "Ca\t1 \"h0-0-0-0\"\t\t# \"h0-0-0-0 HCA-1 slimfly-q5\"\n[1]\t\"sw0-0-0\"[8]\n"
        ));
    }

    #[test]
    fn masks_select_exactly_the_rate() {
        assert_eq!(enable_masks((LinkWidth::X4, LinkSpeed::Edr)), (2, 7, 3));
        assert_eq!(enable_masks((LinkWidth::X1, LinkSpeed::Qdr)), (1, 7, 0));
        assert_eq!(enable_masks((LinkWidth::X4, LinkSpeed::Sdr)), (2, 1, 0));
        assert_eq!(enable_masks((LinkWidth::X4, LinkSpeed::Hdr)), (2, 7, 7));
    }
}
