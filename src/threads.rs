//! The threads the routing passes run on.
//!
//! The passes that parallelise (the pair searches of the layered routing) use the rayon pool
//! they are called in, and build the same tables whatever its size. A caller that routes sizes
//! the pool with [`pool`] and runs the routing inside it (`pool.install(|| ...)`): the calling
//! thread then works as one of the pool's threads instead of waiting for them, and nothing
//! starts rayon's global pool (whose start-up panics when no thread can be spawned — inside
//! OpenSM that is a fallback, not a crash, but an avoidable one).

use rayon::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

/// The threads to use when the caller asks for 0 ("as many as there are cores"): the cores this
/// process may run on (its CPU affinity, as `std::thread::available_parallelism` reads it), or
/// 1 if that is unknown.
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A pool of `threads` threads (0: [`available`]), named `ibfabric-N` so that they show as ours
/// in `top -H` and core dumps.
pub fn pool(threads: usize) -> Result<ThreadPool, ThreadPoolBuildError> {
    let threads = if threads == 0 { available() } else { threads };
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("ibfabric-{i}"))
        .build()
}
