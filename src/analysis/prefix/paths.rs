//! Every (source switch, destination host, layer) path of the tables, kept as each destination
//! LID's next links so that a path is read by following them (one link per switch and LID
//! instead of a cable list per path), the LIDs of one switch's hosts sharing their links when
//! they are routed alike.

use crate::analysis::context::Context;
use crate::routing::walk::{DestWalk, NONE};

/// The next link of a delivering switch (the host's own link is of no interest here).
const DELIVER: u32 = NONE - 1;

/// The paths of the tables: per destination host and layer, the link each switch sends the LID
/// out on.
pub(crate) struct HostPaths<'c, 'a> {
    pub ctx: &'c Context<'a>,
    /// Switches.
    pub n: usize,
    /// Layers kept per host.
    pub layers: usize,
    /// Dense switch of each host (the endpoint order of the network).
    pub switch_of: Vec<u32>,
    /// Hosts per switch.
    pub hosts_at: Vec<u32>,
    /// Distinct next-link rows, `n` entries each: a link towards the next switch, [`DELIVER`]
    /// at the delivering switch, [`NONE`] where the walk fails. Hosts of one switch routed
    /// alike share a row (every host of a switch, for the core's routings), which keeps this
    /// at switches × layers × switches instead of hosts × layers × switches.
    rows: Vec<u32>,
    /// The row of `host * layers + layer`.
    row_of: Vec<u32>,
}

impl<'c, 'a> HostPaths<'c, 'a> {
    /// Walks every host's LIDs of layers `0..layers`. A host with fewer LIDs than `layers`
    /// uses LID `base + (layer mod its LIDs)`: the MPI stacks wrap the path index the same way.
    pub fn new(ctx: &'c Context<'a>, layers: usize) -> Self {
        let n = ctx.switches();
        let hosts = &ctx.net.endpoints;
        let mut rows: Vec<u32> = Vec::new();
        let mut row_of: Vec<u32> = Vec::with_capacity(hosts.len() * layers);
        let mut walk = DestWalk::new(n);
        let mut row: Vec<u32> = Vec::with_capacity(n);
        for (h, e) in hosts.iter().enumerate() {
            for layer in 0..layers {
                let offset = layer % usize::from(e.lids.max(1));
                let dest = ctx.net.endpoint_dest(e, offset as u16);
                // Failures are the completeness report's business; a failed walk is no path.
                walk.walk(&ctx.net, ctx.tables, &dest, |_| NONE);
                // The delivery link is the host's own; as DELIVER, hosts of one switch routed
                // alike compare equal.
                row.clear();
                row.extend(walk.next_links().iter().map(|&l| {
                    if l != NONE && ctx.net.cable_of_link[l as usize] == NONE {
                        DELIVER
                    } else {
                        l
                    }
                }));
                // Share the previous host's row when it is on the same switch and routed alike.
                let shared = (h > 0 && hosts[h - 1].switch == e.switch)
                    .then(|| row_of[(h - 1) * layers + layer])
                    .filter(|&r| rows[r as usize * n..(r as usize + 1) * n] == row[..]);
                row_of.push(shared.unwrap_or_else(|| {
                    rows.extend_from_slice(&row);
                    (rows.len() / n.max(1) - 1) as u32
                }));
            }
        }
        let mut hosts_at = vec![0u32; n];
        for e in hosts {
            hosts_at[e.switch as usize] += 1;
        }
        Self {
            ctx,
            n,
            layers,
            switch_of: hosts.iter().map(|e| e.switch).collect(),
            hosts_at,
            rows,
            row_of,
        }
    }

    /// Hosts.
    pub fn hosts(&self) -> usize {
        self.switch_of.len()
    }

    /// The directed cables from switch `s` to `host` on `layer` (none when both are on one
    /// switch or the walk fails).
    pub fn cables(&self, s: usize, host: usize, layer: usize) -> impl Iterator<Item = u32> + '_ {
        let base = self.row_of[host * self.layers + layer] as usize * self.n;
        let net = &self.ctx.net;
        let mut cur = s as u32;
        let mut steps = 0;
        std::iter::from_fn(move || {
            if cur == NONE || steps > self.n {
                return None;
            }
            let link = self.rows[base + cur as usize];
            if link == NONE || link == DELIVER {
                return None;
            }
            let c = net.cable_of_link[link as usize];
            steps += 1;
            cur = net.links[link as usize].to_switch;
            Some(c)
        })
    }

    /// Whether two hosts' layer `0..k` next links are the same from every switch (so every
    /// source sees them alike).
    pub fn same_paths(&self, a: usize, b: usize, k: usize) -> bool {
        (0..k).all(|layer| {
            let (x, y) = (
                self.row_of[a * self.layers + layer] as usize,
                self.row_of[b * self.layers + layer] as usize,
            );
            x == y
                || self.rows[x * self.n..(x + 1) * self.n]
                    == self.rows[y * self.n..(y + 1) * self.n]
        })
    }
}
