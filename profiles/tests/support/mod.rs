//! What the store's tests share.

use yard_appmaster::policy::{PowerLaw, Profile};

/// A profile of round numbers, for what no run measured: every field tells where it came from.
pub fn defaults() -> Profile {
    Profile {
        map_local: 1.0,
        map_remote: 2.0,
        map_shortest: None,
        map_spread: None,
        partition_bytes: 3.0,
        shuffle_bandwidth: 4.0,
        reduce_time: PowerLaw {
            a: 1.0,
            b: 1.0,
            spread: 0.0,
        },
        previous_runs: Vec::new(),
    }
}
