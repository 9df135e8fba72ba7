//! `mcast-join`: joins ports to (or removes them from) an InfiniBand multicast group by
//! sending SA MCMemberRecord requests, as IPoIB and MPI libraries do on a real host.
//!
//! ibsim has no client that joins groups, so the test bed uses this tool to create the groups
//! whose spanning trees the routing builds. One process joins any number of ports: a request
//! for another port than the tool's own is a proxy join, which OpenSM accepts when the two
//! ports share a partition.

mod record;
mod umad;

use std::io::BufRead;
use std::net::Ipv6Addr;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

use record::{GroupParameters, Method, NO_RECORDS, Request, Response, status_text};
use umad::SaPort;

#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    action: Action,
    /// The CA to send from (default: the first with an active port).
    #[arg(long, global = true)]
    ca: Option<String>,
    /// The port of that CA (0: the first active one).
    #[arg(long, global = true, default_value_t = 0)]
    port: u8,
    /// How long to wait for each answer.
    #[arg(long, global = true, default_value_t = 1000)]
    timeout_ms: i32,
    /// Resends before giving up.
    #[arg(long, global = true, default_value_t = 3)]
    retries: i32,
}

#[derive(Subcommand)]
enum Action {
    /// Join the ports to the group as full members (creating it with --create).
    Join(JoinArgs),
    /// Remove the ports' full membership.
    Leave(Members),
    /// Print, for each port, whether the SA lists it as a member.
    Query(Members),
}

#[derive(clap::Args)]
struct Members {
    /// The group's MGID, e.g. ff12:401b:ffff::ffff:ffff (IPoIB IPv4 broadcast, default partition).
    #[arg(long)]
    mgid: Ipv6Addr,
    /// Port GUIDs (0x-prefixed hex); default: this tool's own port.
    guids: Vec<String>,
    /// A file of port GUIDs, one per line ('#' starts a comment).
    #[arg(long)]
    guids_from: Option<PathBuf>,
}

#[derive(clap::Args)]
struct JoinArgs {
    #[command(flatten)]
    members: Members,
    /// Create the group if it does not exist (sends the components creating needs).
    #[arg(long)]
    create: bool,
    #[arg(long, default_value = "0x0000000b", value_parser = hex_u32)]
    qkey: u32,
    #[arg(long, default_value = "0xffff", value_parser = hex_u16)]
    pkey: u16,
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..16))]
    sl: u8,
    #[arg(long, default_value_t = 0)]
    tclass: u8,
    #[arg(long, default_value_t = 0)]
    flow_label: u32,
    /// IBA MTU code (1 = 256 bytes ... 5 = 4096), exactly.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..6))]
    mtu: Option<u8>,
    /// IBA rate code (2 = 2.5, 3 = 10, 7 = 40 Gb/s ...), exactly.
    #[arg(long)]
    rate: Option<u8>,
}

fn hex_u32(text: &str) -> Result<u32, String> {
    u32::from_str_radix(text.trim_start_matches("0x"), 16).map_err(|e| format!("{text}: {e}"))
}

fn hex_u16(text: &str) -> Result<u16, String> {
    u16::from_str_radix(text.trim_start_matches("0x"), 16).map_err(|e| format!("{text}: {e}"))
}

fn parse_guid(text: &str) -> Result<u64> {
    let digits = text
        .strip_prefix("0x")
        .with_context(|| format!("port GUID {text:?}: expected 0x followed by hex digits"))?;
    u64::from_str_radix(digits, 16)
        .with_context(|| format!("port GUID {text:?}: expected hex digits"))
}

/// The GUIDs on the command line, then those of the file, in order.
fn member_guids(members: &Members, own: u64) -> Result<Vec<u64>> {
    let mut guids = members
        .guids
        .iter()
        .map(|g| parse_guid(g))
        .collect::<Result<Vec<_>>>()?;
    if let Some(path) = &members.guids_from {
        let file = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
        for (number, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line.with_context(|| format!("{}", path.display()))?;
            let text = line.split('#').next().unwrap_or("").trim();
            if text.is_empty() {
                continue;
            }
            guids.push(
                parse_guid(text).with_context(|| format!("{}:{}", path.display(), number + 1))?,
            );
        }
    }
    if guids.is_empty() {
        guids.push(own);
    }
    Ok(guids)
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let mut sa = SaPort::open(cli.ca.as_deref(), cli.port)?;
    let (method, members, create) = match &cli.action {
        Action::Join(join) => {
            let create = join.create.then_some(GroupParameters {
                qkey: join.qkey,
                pkey: join.pkey,
                sl: join.sl,
                tclass: join.tclass,
                flow_label: join.flow_label,
                mtu: join.mtu,
                rate: join.rate,
            });
            (Method::Join, &join.members, create)
        }
        Action::Leave(members) => (Method::Leave, members, None),
        Action::Query(members) => (Method::Query, members, None),
    };
    let guids = member_guids(members, sa.local().guid)?;
    let base_tid = u64::from(std::process::id()) << 16;
    for (n, guid) in guids.iter().enumerate() {
        let tid = base_tid + n as u64;
        let request = Request {
            method,
            tid,
            mgid: members.mgid,
            port_guid: *guid,
            create,
        };
        let answer = sa.request(&request.encode(), tid, cli.timeout_ms, cli.retries)?;
        let response =
            Response::decode(&answer).map_err(|e| anyhow::anyhow!("the SA answered {e}"))?;
        if method == Method::Query {
            match response.status {
                0 => println!(
                    "member 0x{guid:016x} {} mlid 0x{:04x}",
                    members.mgid, response.mlid
                ),
                NO_RECORDS => println!("not-member 0x{guid:016x} {}", members.mgid),
                status => bail!(
                    "port 0x{guid:016x}: the SA refused the query for {}: status 0x{status:04x} {}",
                    members.mgid,
                    status_text(status)
                ),
            }
            continue;
        }
        if response.status != 0 {
            bail!(
                "port 0x{guid:016x}: the SA refused to {} {}: status 0x{:04x} {}",
                if method == Method::Join {
                    "join it to"
                } else {
                    "remove it from"
                },
                members.mgid,
                response.status,
                status_text(response.status)
            );
        }
        let verb = if method == Method::Join {
            "joined"
        } else {
            "left"
        };
        println!(
            "{verb} 0x{guid:016x} {} mlid 0x{:04x} sl {}",
            response.mgid, response.mlid, response.sl
        );
    }
    Ok(())
}
