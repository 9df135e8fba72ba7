//! Pair searches on every thread of the current pool, with the layer the searches one after
//! the other would build — the same tables whatever the number of threads.
//!
//! The searches of a layer depend on each other in two ways: pairs into one destination t
//! share t's tree (a path laid for one pair may route the next pair's source, and t's entry
//! fills up), and every path laid adds to the weights of its links, which every later search
//! reads. A batch of consecutive pairs of the priority order is searched in
//! parallel against the state the batch starts with; the paths are then laid in the priority
//! order, and a pair's path is searched again, against the state of that moment, only if the
//! state it was found in no longer holds:
//!
//! * an earlier pair of the batch laid a path into the same destination; or
//! * the weight of a link of the found path (up to t) has grown since.
//!
//! Otherwise the found path is the one the search would find now. Within a layer weights only
//! grow, and nothing else the search reads about t changes: the path's cost is the same, every
//! other path costs at least as much as before, and the search keeps the first least-cost path
//! in its fixed order — the found one. So the layer is the one the searches in sequence build,
//! byte for byte (tested against the sequence), and pays a second search for the few pairs whose
//! path an earlier pair of the batch loaded or whose destination it shares.

use super::path::{Found, Search};
use rayon::prelude::*;

/// The pairs searched against the same state per thread of the pool, and the most in all: enough
/// to keep every thread busy while the paths are laid, few enough that second searches stay rare
/// (a pair is searched again when one of the pairs before it in the batch shares its
/// destination or loads a link of its path: 5 % of the searches on Slim Fly q = 19 with
/// batches of 64). One thread searches one pair at a time: it never searches twice.
const PER_THREAD: usize = 32;
const MOST: usize = 256;

/// The pairs of one batch, `(s, t)`, and the destinations the batch has laid paths into.
pub(super) struct Batch {
    pub(super) pairs: Vec<(usize, usize)>,
    /// The most pairs of a batch.
    size: usize,
    /// Destinations a path of the batch was laid into.
    laid: Vec<bool>,
    laid_list: Vec<usize>,
}

impl Batch {
    /// An empty batch for a fabric of `n` switches, sized for the threads of the current pool.
    pub(super) fn new(n: usize) -> Self {
        #[cfg(test)]
        if let size @ 1.. = tests::FORCED_SIZE.load(std::sync::atomic::Ordering::Relaxed) {
            return Self::sized(n, size);
        }
        Self::sized(n, batch_size(rayon::current_num_threads(), n))
    }

    fn sized(n: usize, size: usize) -> Self {
        Self {
            size,
            pairs: Vec::with_capacity(size),
            laid: vec![false; n],
            laid_list: Vec::new(),
        }
    }

    /// Fills the batch from `pairs[next..]` (the priority order's entries: sort keys, then s
    /// and t), skipping the pairs `routed` says need no search; returns where the next batch
    /// starts.
    pub(super) fn fill(
        &mut self,
        pairs: &[(u8, u8, u32, u32, u32)],
        mut next: usize,
        routed: impl Fn(usize, usize) -> bool,
    ) -> usize {
        for t in self.laid_list.drain(..) {
            self.laid[t] = false;
        }
        self.pairs.clear();
        while let Some(pair) = pairs.get(next)
            && self.pairs.len() < self.size
        {
            next += 1;
            let (s, t) = (pair.3 as usize, pair.4 as usize);
            if !routed(s, t) {
                self.pairs.push((s, t));
            }
        }
        next
    }

    /// Runs `search(scratch, s, t)` for every pair of the batch, on the threads of the current
    /// pool; the results in the batch's order.
    pub(super) fn search(
        &self,
        search: impl Fn(&mut Search, usize, usize) -> Option<Found> + Sync,
    ) -> Vec<Option<Found>> {
        self.pairs
            .par_iter()
            .map_init(Search::default, |scratch, &(s, t)| search(scratch, s, t))
            .collect()
    }

    /// Whether a path found for a pair into t at the start of the batch may no longer be the
    /// one a search finds now: an earlier pair of the batch laid a path into t, or the found
    /// path's links (`weight_now`: their summed weight now) weigh more than when it was found.
    pub(super) fn is_stale(
        &self,
        t: usize,
        found: Option<&Found>,
        weight_now: impl FnOnce(&Found) -> u64,
    ) -> bool {
        self.laid[t] || found.is_some_and(|found| weight_now(found) != found.weight)
    }

    /// Notes that a path into t was laid.
    pub(super) fn laid_into(&mut self, t: usize) {
        if !self.laid[t] {
            self.laid[t] = true;
            self.laid_list.push(t);
        }
    }
}

/// Pairs per batch on `threads` threads for `n` destination switches: [`PER_THREAD`] per thread,
/// at most [`MOST`] and at most n / 8 — a pair is searched twice when an earlier pair of its
/// batch shares its destination, about one pair in 2n / size — or one, searched and laid before
/// the next (nothing searched twice), when that leaves fewer than 16 or there is one thread
/// (Slim Fly q = 7: 98 switches, whose searches take 6 ms a layer, took longer on 2 threads).
/// The size changes how often a pair is searched twice, never which path it gets.
fn batch_size(threads: usize, n: usize) -> usize {
    let size = (PER_THREAD * threads).min(MOST).min(n / 8);
    if threads <= 1 || size < 16 { 1 } else { size }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::config::PathLengths;
    use crate::routing::fixtures::{SMALL_FABRICS, graph, same_layers, searched_layers};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A batch size for every layer built while it is not 0, whatever the threads and the
    /// fabric: the size never changes the layers (other tests running meanwhile only take
    /// longer or shorter).
    pub(super) static FORCED_SIZE: AtomicUsize = AtomicUsize::new(0);

    fn pair(s: u32, t: u32) -> (u8, u8, u32, u32, u32) {
        (0, 0, 0, s, t)
    }

    #[test]
    fn routed_pairs_are_passed_over() {
        let pairs = [pair(0, 1), pair(2, 1), pair(4, 5)];
        let mut batch = Batch::sized(8, 4);
        let next = batch.fill(&pairs, 0, |s, _| s == 0);
        assert_eq!(batch.pairs, vec![(2, 1), (4, 5)]);
        assert_eq!(next, 3);
    }

    #[test]
    fn a_batch_holds_at_most_its_size() {
        let pairs: Vec<_> = (0..200u32).map(|t| pair(200, t)).collect();
        let mut batch = Batch::sized(201, 64);
        let next = batch.fill(&pairs, 0, |_, _| false);
        assert_eq!(batch.pairs.len(), 64);
        assert_eq!(next, 64);
        let next = batch.fill(&pairs, next, |_, _| false);
        assert_eq!(batch.pairs.first(), Some(&(200, 64)));
        assert_eq!(next, 128);
    }

    #[test]
    fn one_thread_or_few_destinations_search_one_pair_at_a_time() {
        assert_eq!(batch_size(1, 10_000), 1);
        assert_eq!(batch_size(2, 10_000), 2 * PER_THREAD);
        assert_eq!(batch_size(1024, 10_000), MOST);
        assert_eq!(batch_size(2, 240), 30);
        assert_eq!(batch_size(2, 98), 1);
        assert_eq!(batch_size(2, 60), 1);
    }

    #[test]
    fn a_destination_laid_into_makes_its_later_pairs_stale_until_the_next_batch() {
        let pairs = [pair(0, 1), pair(2, 1)];
        let mut batch = Batch::sized(8, 4);
        batch.fill(&pairs, 0, |_, _| false);
        assert!(!batch.is_stale(1, None, |_| 0));
        batch.laid_into(1);
        assert!(batch.is_stale(1, None, |_| 0));
        assert!(!batch.is_stale(2, None, |_| 0));
        batch.fill(&pairs, 0, |_, _| false);
        assert!(!batch.is_stale(1, None, |_| 0));
    }

    /// The searches in parallel, in batches of 64 pairs — far more than the driver takes on
    /// these fabrics, so that many pairs are searched twice — against the searches one after
    /// the other.
    #[test]
    fn layers_are_the_same_on_one_two_and_four_threads() {
        let lengths = PathLengths::default();
        for spec in SMALL_FABRICS.iter().chain(&["slimfly:q=7"]) {
            let graph = graph(spec);
            let on = |threads: usize, size: usize| {
                FORCED_SIZE.store(size, Ordering::Relaxed);
                let layers = crate::threads::pool(threads)
                    .expect("threads")
                    .install(|| searched_layers(&graph, 4, Some(&lengths), 3));
                FORCED_SIZE.store(0, Ordering::Relaxed);
                layers
            };
            let one = on(1, 1);
            for threads in [2, 4] {
                assert!(
                    same_layers(&graph, &one, &on(threads, 64)),
                    "{spec} on {threads} threads"
                );
            }
        }
    }
}
