//! What the benchmarks share: repeated timing, medians, and what they measure besides time.
//! Each benchmark binary includes this file and uses part of it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Runs `f` at least 5 times and for at least 1 s; returns the sorted times and the last value.
pub fn measure<T>(mut f: impl FnMut() -> T) -> (Vec<Duration>, T) {
    let mut times = Vec::new();
    let started = Instant::now();
    loop {
        let t = Instant::now();
        let value = std::hint::black_box(f());
        times.push(t.elapsed());
        if times.len() >= 5 && started.elapsed() > Duration::from_secs(1) {
            times.sort();
            return (times, value);
        }
    }
}

/// The median of sorted times.
pub fn median(times: &[Duration]) -> Duration {
    times[times.len() / 2]
}

/// A duration in milliseconds, one decimal.
pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Peak resident memory of this process so far, in KiB (0 where /proc is unavailable).
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Whether the case of fabric `spec` with `layers` layers runs: with a filter (the first
/// command-line argument), only the cases whose "spec Llayers" contains it.
pub fn selects(filter: Option<&str>, spec: &str, layers: usize) -> bool {
    filter.is_none_or(|f| format!("{spec} L{layers}").contains(f))
}
