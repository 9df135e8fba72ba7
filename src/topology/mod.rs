//! The fabric model and the topology constructions.
//!
//! Every construction is a [`Construction`]: validated parameters that know the size of what
//! they build and build a [`Fabric`] with documented names, port plan and racks. Invalid
//! parameters are refused with a [`TopologyError`] that names the nearest valid ones.

mod builder;
pub mod circulant;
pub mod compare;
mod fabric;
pub mod fattree;
pub mod kary_ntree;
mod link_rate;
pub mod lsft;
pub mod mlfm;
mod pairing;
mod params;
pub mod polarfly;
pub mod random_regular;
pub mod shortcut;
pub mod slimfly;
mod spec;
mod switch_graph;

pub use builder::FabricBuilder;
pub use fabric::{
    AGGREGATION_NODE_DESCRIPTION, BadGuid, Fabric, FabricError, FabricSummary, Guid, Link, LinkId,
    Node, NodeId, NodeKind, NodeSpec, Port, PortRef, is_aggregation_node,
};
pub use link_rate::{LinkSpeed, LinkWidth, link_rate};
pub use params::{Size, TopologyError};
pub use spec::{SpecError, TopologySpec};
pub use switch_graph::{SwitchGraph, UNREACHABLE};

/// A topology construction with validated parameters.
pub trait Construction {
    /// The fabric's name, e.g. `slimfly-q5`; it appears in every node description.
    fn name(&self) -> String;
    /// What the construction needs and provides.
    fn size(&self) -> Size;
    /// Builds the fabric.
    fn build(&self) -> Fabric;
}
