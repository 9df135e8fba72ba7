//! Routing: LID assignment, forwarding tables, and the routing algorithms (minimal with link
//! balancing, layered multipath, random uniform edge selection) that fill them.

pub mod graph;
pub mod layered;
pub mod layers;
pub mod lft;
pub mod lids;
pub(crate) mod rng;
pub mod tables;

pub use lft::{ForwardingTables, NO_PORT};
pub use lids::{LidError, LidOwner, LidTable, assign_lids};
pub use tables::forwarding_tables;
