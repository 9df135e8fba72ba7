//! Routing: LID assignment, forwarding tables, and the routing algorithms (minimal with link
//! balancing, layered multipath, random uniform edge selection) that fill them.

pub mod lft;
pub mod lids;

pub use lft::{ForwardingTables, NO_PORT};
pub use lids::{LidError, LidOwner, LidTable, assign_lids};
