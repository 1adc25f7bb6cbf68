//! What the appmaster's benches share.

use std::time::{Duration, Instant};

/// The least time of `rounds` runs of `f`.
pub fn best(rounds: usize, mut f: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .expect("rounds")
}
