//! `libosmlayered.so`: the OpenSM event plugin that registers the `layered` routing engine.
//!
//! Only this crate touches OpenSM's C structures; routing and deadlock avoidance are computed by
//! the `ibfabric` core on an owned snapshot of the subnet.
