//! The channel dependencies found so far, as bit matrices per turn.

use crate::deadlock::sl2vl::{SLS, VL15};

/// Dense numbering of the VLs the tables use, and the per-turn bit matrices of (VL in, VL out)
/// dependencies.
pub(super) struct Dependencies {
    /// Dense index of each VL (`u8::MAX` if unused).
    pub(super) index: [u8; SLS],
    /// VL of each dense index.
    pub(super) vl_of: Vec<u8>,
    /// VLs in use.
    pub(super) nv: usize,
    /// Words per turn.
    pub(super) words: usize,
    pub(super) bits: Vec<u64>,
    /// Channels (link × nv) some route uses.
    pub(super) used: Vec<bool>,
}

impl Dependencies {
    pub(super) fn new(mapped: u16, turns: usize, links: usize) -> Self {
        let mut index = [u8::MAX; SLS];
        let mut vl_of = Vec::new();
        for vl in 0..SLS as u8 {
            if mapped & (1 << vl) != 0 && vl != VL15 {
                index[usize::from(vl)] = vl_of.len() as u8;
                vl_of.push(vl);
            }
        }
        let nv = vl_of.len().max(1);
        let words = (nv * nv).div_ceil(64);
        Self {
            index,
            vl_of,
            nv,
            words,
            bits: vec![0; turns * words],
            used: vec![false; links * nv],
        }
    }

    pub(super) fn add(&mut self, turn: usize, a: u32, x: usize, b: u32, y: usize) {
        let bit = x * self.nv + y;
        self.bits[turn * self.words + bit / 64] |= 1 << (bit % 64);
        self.used[a as usize * self.nv + x] = true;
        self.used[b as usize * self.nv + y] = true;
    }

    pub(super) fn has(&self, turn: usize, x: usize, y: usize) -> bool {
        let bit = x * self.nv + y;
        self.bits[turn * self.words + bit / 64] & (1 << (bit % 64)) != 0
    }

    /// The out-VL indexes `turn` depends on from in-VL index `x`, as a bit set.
    pub(super) fn row(&self, turn: usize, x: usize) -> u32 {
        if self.words == 1 {
            let mask = if self.nv >= 32 {
                u32::MAX
            } else {
                (1u32 << self.nv) - 1
            };
            ((self.bits[turn] >> (x * self.nv)) as u32) & mask
        } else {
            (0..self.nv)
                .filter(|&y| self.has(turn, x, y))
                .fold(0, |m, y| m | (1 << y))
        }
    }

    pub(super) fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Adds the dependencies and channels of `other` (same VLs and network).
    pub(super) fn merge(&mut self, other: &Dependencies) {
        for (w, o) in self.bits.iter_mut().zip(&other.bits) {
            *w |= o;
        }
        for (u, o) in self.used.iter_mut().zip(&other.used) {
            *u |= o;
        }
    }
}
