//! Text formats of the InfiniBand tools, read from and written to strings.
//!
//! Pure functions only: no file IO and no printing. Readers return their warnings as
//! [`Diagnostic`]s with 1-based line numbers and stop at the first malformed line with a
//! [`ParseError`]; callers add the file name.
//!
//! * [`ibnetdiscover`]: topology dumps ⇄ [`Fabric`](crate::topology::Fabric);
//! * [`iblinkinfo`]: per-port link states, widths, speeds and "could be" hints;
//! * [`node_name_map`]: the GUID → name map shared by infiniband-diags and OpenSM;
//! * [`names`]: which node a name given by a user, a host list or a schedule means (GUID,
//!   node-name-map, NodeDescription, hostname, the construction's names);
//! * [`ibsim`], [`dot`], [`fabric_document`]: renderings of a fabric for the simulator,
//!   Graphviz and YAML/JSON documents;
//! * [`markup`]: text escaped for HTML, SVG and XML;
//! * [`simgrid`], [`simgrid_bench`]: the SimGrid platform and hostfile of a routed fabric, the
//!   MPI benchmark's phase file and its result line.
//!
//! The readers scan lines by hand (no regular expressions) in one pass, in time linear in the
//! input, and borrow from the input instead of allocating per line.

pub mod diagnostic;
pub mod dot;
pub mod fabric_document;
pub mod hostfile;
pub mod iblinkinfo;
pub mod ibnetdiscover;
pub mod ibsim;
pub mod lfts;
pub mod markup;
pub mod mfts;
#[cfg(test)]
mod mutate;
pub mod names;
pub mod node_name_map;
pub mod path_sl;
mod scan;
pub mod simgrid;
pub mod simgrid_bench;
pub mod sl2vl;

pub use diagnostic::{Diagnostic, ParseError, Severity};
pub use iblinkinfo::LinkInfo;
pub use ibnetdiscover::{DanglingCable, Dump, is_aggregation_node};
pub use node_name_map::NodeNameMap;

/// The real-world dumps beside the repository, read or skipped (see the module).
#[cfg(test)]
#[path = "../../tests/common/shared_fixtures.rs"]
pub(crate) mod shared_fixtures;

/// The text of a shared dump under `shared/fixtures/ibnetdiscover/`, or `None` after a skip
/// line on stderr when it is missing (a clone with nothing beside it).
#[cfg(test)]
pub(crate) use shared_fixtures::shared_text as fixture;
