//! Job typing at the master (seed 002 §4.1, eq. 1–2; digest §1.2): the first map and the first
//! reduce of a job kind's untyped part to finish are its probes; from what each measured of
//! itself and its node's disk rate, the part is CPU- or IO-bound ([`Typing`], sans-IO, in
//! `yard-appmaster`). The type goes to the profile store, into every allocate request (the
//! rm's overload classifier reads it) and into the job's answer and status.
//!
//! The probes run beside the job's other tasks: nothing waits for them. The paper runs one
//! map and one reduce of a new job alone until both finish (§3, §4.1; digest §5.1, "the probe
//! phase"); for a deadline job that would spend its time on two tasks, so yard types the job
//! as it runs and the job is of unknown type until then.

use yard_appmaster::policy::TaskRef;
use yard_appmaster::typing::{
    DEFAULT_DISK_RATE_BYTES_PER_S, KindType, Part, PartType, Probe, RateSource, Typing,
    parse_disk_rate,
};
use yard_profiles::ProfileStore;
use yard_wire::answer::{JobTypeView, PartTypeView, ProbeView};
use yard_wire::protocol::JobType;

use super::state::{Shared, State, log_line, now_ms};
use super::umbilical::with;
use crate::Measured;

impl State {
    /// A task of the job finished having measured `m`: if its part is untyped, it is the probe.
    pub(super) fn probe(&mut self, task: TaskRef, m: &Measured) {
        let part = match task {
            TaskRef::Map(_) => Part::Map,
            TaskRef::Reduce(_) => Part::Reduce,
        };
        if !self.typing.wants(part) {
            return;
        }
        let rate = parse_disk_rate(m.disk_rate_env.as_deref());
        let probe = Probe {
            input_bytes: m.input_bytes as f64,
            output_bytes: m.output_bytes as f64,
            seconds: m.seconds,
        };
        let Some(typed) = self
            .typing
            .finished(part, probe, rate.as_ref().ok().copied(), now_ms())
        else {
            log_line(&format!(
                "a {} that measured nothing to type by ({probe:?}) is not the probe: the next one is",
                part.name()
            ));
            return;
        };
        if let Err(why) = rate {
            log_line(&format!(
                "the {} probe's node gave no disk rate ({why}): typed against yard's default, {} MB/s",
                part.name(),
                DEFAULT_DISK_RATE_BYTES_PER_S / 1e6
            ));
        }
        log_line(&format!(
            "job type: {} is the {} probe ({} bytes in, {} out, {:.3} s): {}",
            task_name(task),
            part.name(),
            m.input_bytes,
            m.output_bytes,
            m.seconds,
            typed.describe()
        ));
    }

    /// The job's type for the rm's allocate request: `None` until a part is typed.
    pub(super) fn job_type(&self) -> Option<JobType> {
        wire_job_type(self.typing.known())
    }
}

fn task_name(task: TaskRef) -> String {
    match task {
        TaskRef::Map(m) => format!("map {}", m.0),
        TaskRef::Reduce(r) => format!("reduce {}", r.0),
    }
}

/// The kind's type as the wire carries it: `None` while both parts are unknown.
pub(super) fn wire_job_type(k: &KindType) -> Option<JobType> {
    let bound = |t: &PartType| t.bound;
    (!k.is_unknown()).then(|| JobType {
        map: k.map.as_ref().map(bound),
        reduce: k.reduce.as_ref().map(bound),
    })
}

/// The job's type in its answer: each part's verdict and what it rests on, and a one-line
/// summary.
pub(super) fn job_type_view(typing: &Typing) -> JobTypeView {
    let part = |part: Part| {
        typing.known().part(part).map(|t| PartTypeView {
            bound: t.bound,
            demand_bytes_per_s: t.demand,
            disk_rate_bytes_per_s: t.disk_rate,
            disk_rate_source: t.rate_source.name().into(),
            probe: ProbeView {
                input_bytes: t.probe.input_bytes,
                output_bytes: t.probe.output_bytes,
                seconds: t.probe.seconds,
            },
            recorded_ms: t.recorded_ms,
            // Typed by an earlier run (from the store) or by this one's probe.
            from_store: typing.from_store(part),
            default_disk_rate: t.rate_source == RateSource::Default,
        })
    };
    JobTypeView {
        map: part(Part::Map),
        reduce: part(Part::Reduce),
        summary: typing.known().describe(),
    }
}

/// Stores the parts this run typed since the last call. A part the store already holds
/// (another master of the kind typed it first) keeps the stored type, and this master takes
/// it. A store error is logged, not fatal: the job's answer matters more than its type.
pub(super) async fn save_types(shared: &Shared, store: Option<&ProfileStore>, kind: &str) {
    let unsaved = with(shared, |s| s.typing.take_unsaved());
    let Some(store) = store else {
        return;
    };
    let mut lost = false;
    for (part, typed) in unsaved {
        match store.record_type(kind, part, &typed).await {
            Ok(true) => {}
            Ok(false) => {
                log_line(&format!(
                    "the {} type of {kind:?} was stored by another run first: it stays the kind's",
                    part.name()
                ));
                lost = true;
            }
            Err(e) => log_line(&format!(
                "cannot store the {} type of {kind:?}: {e}",
                part.name()
            )),
        }
    }
    if lost {
        match store.load_type(kind).await {
            Ok(stored) => with(shared, |s| s.typing.adopt(stored)),
            Err(e) => log_line(&format!("cannot read the type of {kind:?} back: {e}")),
        }
    }
}
