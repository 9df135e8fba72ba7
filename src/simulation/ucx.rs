//! How UCX (the transport under Open MPI 5 and MPICH) spreads one message over the layers of a
//! port, so that the simulator sends each message the way an MPI user's job does.
//!
//! With `UCX_IB_LID_PATH_BITS` configured (the LID offsets 0..L of the layers), an endpoint
//! opens one lane per path index, 0, 1, … in order, the same for every peer. A message up to
//! the rendezvous threshold goes eagerly on the active-message lane, path 0: layer 0, the base
//! LID. A larger one goes by rendezvous: its data is fragmented and split over the first
//! `UCX_MAX_RNDV_RAILS` lanes (default 2, `src/ucp/core/ucp_context.c`) in proportion to their
//! bandwidth, which for lanes of one port is equal: an even split over layers 0..K-1
//! (`src/ucp/wireup/select.c`, `src/ucp/proto/proto_multi.c`). No per-pair choice of layer is
//! involved: every pair uses the same prefix of layers.

use thiserror::Error;

/// UCX's layer use: `UCX_MAX_RNDV_RAILS` and `UCX_RNDV_THRESH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ucx {
    /// `UCX_MAX_RNDV_RAILS`: the layers a rendezvous message is split over. `None`: UCX's
    /// default of [`Ucx::DEFAULT_RAILS`], or fewer when the port has fewer LIDs (UCX opens
    /// one lane per path, so it never has more rails than paths).
    pub rails: Option<u16>,
    /// `UCX_RNDV_THRESH`: the largest message sent eagerly, in bytes.
    pub rndv_thresh: u64,
}

/// Why a UCX layer use does not fit the fabric.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UcxError {
    /// No rails at all.
    #[error("ucx:0: a rendezvous message needs at least one layer (ucx:K, K ≥ 1)")]
    NoRails,
    /// More rails than the ports have LIDs.
    #[error(
        "ucx:{rails}: the ports have {lids} LID(s) (layers 0..{lids}); \
         K may be at most {lids}"
    )]
    TooManyRails {
        /// The rails asked for.
        rails: u16,
        /// The fewest LIDs of the job's ports.
        lids: u16,
    },
}

/// The layers one message takes and the bytes it sends on each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageSplit {
    /// `parts[k]`: the bytes sent on layer k (layers 0..parts.len(), all at once).
    pub parts: Vec<u64>,
}

impl MessageSplit {
    /// Number of layers (0..layers) the message takes.
    pub fn layers(&self) -> usize {
        self.parts.len()
    }

    /// The largest part: what one rank of a split benchmark sends (every part of a phase must
    /// be one size there).
    pub fn largest_part(&self) -> u64 {
        self.parts.iter().copied().max().unwrap_or(0)
    }
}

impl Ucx {
    /// UCX's default `UCX_MAX_RNDV_RAILS` (`src/ucp/core/ucp_context.c`: `"MAX_RNDV_RAILS",
    /// "2"`).
    pub const DEFAULT_RAILS: u16 = 2;

    /// The rendezvous threshold when none is given: 8 KiB.
    ///
    /// UCX's default is `UCX_RNDV_THRESH=auto` (`src/ucp/core/ucp_context.c`, `"RNDV_THRESH",
    /// UCS_VALUE_AUTO_STR`). For inter-node transports `auto` is not a constant: the protocol
    /// selection (`src/ucp/proto/proto_select.c`, with `ucp_proto_rndv_thresh` in
    /// `src/ucp/rndv/proto_rndv.c`) or, in the older path, `ucp_ep_config_calc_rndv_thresh`
    /// (`src/ucp/core/ucp_ep.c`) switches to rendezvous at the size where its estimated time
    /// (two control-message latencies and memory registration, then the lanes' summed
    /// bandwidth) drops below eager zero-copy's; the older path never goes below the lane's
    /// bounce-buffer size (`cap.am.max_bcopy`, the IB transports' `UCX_IB_SEG_SIZE` of 8192,
    /// `src/uct/ib/base/ib_iface.c`). Blocking sends asking for fast completion use
    /// `UCX_RNDV_SEND_NBR_THRESH` (256 KiB) instead. The simulator's benchmark sends with
    /// `MPI_Isend`, so the estimate applies; its value depends on the adapter's reported
    /// latency and bandwidth, which a simulation has no adapter to ask. We take the IB segment
    /// size, the estimate's floor: everything that fits one bounce buffer is eager, every bulk
    /// transfer (the benchmarks' 256 KiB and 1 MiB messages, well above any estimate) is
    /// rendezvous. `--rndv-thresh` sets it as `UCX_RNDV_THRESH` would.
    pub const DEFAULT_RNDV_THRESH: u64 = 8192;

    /// UCX's defaults: up to two rails, the threshold above.
    pub const DEFAULT: Self = Self {
        rails: None,
        rndv_thresh: Self::DEFAULT_RNDV_THRESH,
    };

    /// The rails a rendezvous message is split over on ports with `lids` LIDs (the fewest of
    /// the job's ports).
    ///
    /// # Errors
    /// Zero rails, or more rails than LIDs when the rails are given.
    pub fn rails(&self, lids: u16) -> Result<u16, UcxError> {
        match self.rails {
            Some(0) => Err(UcxError::NoRails),
            Some(rails) if rails > lids => Err(UcxError::TooManyRails { rails, lids }),
            Some(rails) => Ok(rails),
            None => Ok(Self::DEFAULT_RAILS.min(lids).max(1)),
        }
    }

    /// The layers a message of `bytes` takes and its part on each, on ports with `lids` LIDs:
    /// all of it on layer 0 up to the threshold, else K parts that differ by at most one byte
    /// on layers 0..K-1.
    ///
    /// # Errors
    /// As [`Ucx::rails`] (checked whatever the size, so a run fails the same way for every
    /// message size).
    pub fn split(&self, bytes: u64, lids: u16) -> Result<MessageSplit, UcxError> {
        let rails = u64::from(self.rails(lids)?);
        if bytes <= self.rndv_thresh || rails == 1 {
            return Ok(MessageSplit { parts: vec![bytes] });
        }
        let (part, extra) = (bytes / rails, bytes % rails);
        Ok(MessageSplit {
            parts: (0..rails).map(|k| part + u64::from(k < extra)).collect(),
        })
    }
}

impl Default for Ucx {
    fn default() -> Self {
        Self::DEFAULT
    }
}
