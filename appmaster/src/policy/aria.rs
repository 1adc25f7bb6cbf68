//! Placeholder: being written.
use super::{Decision, Estimate, Event, PolicyConfig, Progress, Rng, Seconds, TaskPolicy};

pub struct Aria;

impl Aria {
    pub fn new(_config: PolicyConfig) -> Self {
        Aria
    }
}

impl TaskPolicy for Aria {
    fn name(&self) -> &'static str {
        unimplemented!()
    }
    fn handle(&mut self, _now: Seconds, _event: Event, _rng: &mut Rng, _out: &mut Vec<Decision>) {
        unimplemented!()
    }
    fn estimate(&self, _now: Seconds) -> Option<Estimate> {
        unimplemented!()
    }
    fn progress(&self) -> Progress {
        unimplemented!()
    }
}
