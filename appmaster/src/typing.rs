//! Job typing (seed 002, §4.1, eq. 1–2): a job is CPU-bound or IO-bound by the disk
//! throughput its probe task needs, against the node's disk rate (DiskIORate). The first map and
//! the first reduce of a job kind never seen are its probes; the verdict is stored with the kind
//! and read by every later run, and the rm's overload classifier uses it as a job feature.
//!
//! The paper types maps only [AMB]; yard types a reduce the same way over its shuffle input and
//! output, so the map and the reduce part of a job each have their own type (digest §1.4: "the
//! map part and the reduce part of a job have separate values").

use yard_cluster::ids::Bound;

/// What a probe task measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    /// MID: bytes the task read.
    pub input_bytes: f64,
    /// MOD = ρ·MID (eq. 1): bytes it wrote.
    pub output_bytes: f64,
    /// MTCT: its run time, seconds.
    pub seconds: f64,
}

impl Probe {
    /// q = (1 + ρ)·MID / MTCT (eq. 2) = (MID + MOD) / MTCT: the disk throughput the task
    /// needed, bytes per second. `None` for a probe that measured no time or a negative or
    /// non-finite quantity (nothing to type by).
    pub fn disk_demand(&self) -> Option<f64> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if !(ok(self.input_bytes) && ok(self.output_bytes) && ok(self.seconds))
            || self.seconds == 0.0
        {
            return None;
        }
        Some((self.input_bytes + self.output_bytes) / self.seconds)
    }

    /// CPU-bound when q < DiskIORate, else IO-bound (eq. 2; q equal to the rate counts as IO,
    /// since the paper's test is "less than"). `None` when the probe or the rate measured
    /// nothing usable.
    pub fn bound(&self, disk_rate_bytes_per_s: f64) -> Option<Bound> {
        if !(disk_rate_bytes_per_s.is_finite() && disk_rate_bytes_per_s > 0.0) {
            return None;
        }
        let q = self.disk_demand()?;
        Some(if q < disk_rate_bytes_per_s {
            Bound::Cpu
        } else {
            Bound::Io
        })
    }
}

/// The environment variable a nodemanager sets in every container: its node's disk rate
/// (the paper's DiskIORate), bytes per second, a positive number.
pub const DISK_RATE_ENV: &str = "YARD_DISK_RATE_BYTES_PER_S";

/// The disk rate a probe is typed against when its node did not say (the variable is unset or
/// not a positive number): 100 MB/s, a single disk's sequential rate in round figures. A part
/// typed by it says so ([`RateSource::Default`]), in the master's log and in the stored row.
pub const DEFAULT_DISK_RATE_BYTES_PER_S: f64 = 100e6;

/// [`DISK_RATE_ENV`]'s value as a rate: `Err` says why it cannot be used (unset, not a number,
/// not positive and finite).
pub fn parse_disk_rate(raw: Option<&str>) -> Result<f64, String> {
    let Some(raw) = raw else {
        return Err(format!("{DISK_RATE_ENV} is not set"));
    };
    match raw.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!(
            "{DISK_RATE_ENV} is {raw:?}, not a positive number of bytes per second"
        )),
    }
}

/// The part of a job a task belongs to: maps and reduces are typed separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    Map,
    Reduce,
}

impl Part {
    pub fn name(self) -> &'static str {
        match self {
            Part::Map => "map",
            Part::Reduce => "reduce",
        }
    }
}

/// Where the disk rate a part was typed against came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateSource {
    /// The probe's node ([`DISK_RATE_ENV`]).
    Node,
    /// [`DEFAULT_DISK_RATE_BYTES_PER_S`]: the node did not say.
    Default,
}

impl RateSource {
    pub fn name(self) -> &'static str {
        match self {
            RateSource::Node => "node",
            RateSource::Default => "default",
        }
    }

    pub fn parse(s: &str) -> Option<RateSource> {
        match s {
            "node" => Some(RateSource::Node),
            "default" => Some(RateSource::Default),
            _ => None,
        }
    }
}

/// One part of a job kind typed by its probe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartType {
    pub bound: Bound,
    /// What the probe measured.
    pub probe: Probe,
    /// q (eq. 2), bytes per second.
    pub demand: f64,
    /// The DiskIORate q was held against, bytes per second.
    pub disk_rate: f64,
    pub rate_source: RateSource,
    /// When the probe's verdict was reached, ms since the Unix epoch (the caller's clock:
    /// nothing here reads one).
    pub recorded_ms: i64,
}

impl PartType {
    /// The type `probe` gives against its node's `disk_rate` (`None`: the node did not say, so
    /// [`DEFAULT_DISK_RATE_BYTES_PER_S`]). `None` when the probe measured nothing to type by
    /// (no time, a negative or non-finite quantity) or the rate is not positive.
    pub fn of(probe: Probe, disk_rate: Option<f64>, recorded_ms: i64) -> Option<PartType> {
        let (disk_rate, rate_source) = match disk_rate {
            Some(rate) => (rate, RateSource::Node),
            None => (DEFAULT_DISK_RATE_BYTES_PER_S, RateSource::Default),
        };
        Some(PartType {
            bound: probe.bound(disk_rate)?,
            probe,
            demand: probe.disk_demand()?,
            disk_rate,
            rate_source,
            recorded_ms,
        })
    }

    /// E.g. `io-bound (q = 80 MB/s against a 50 MB/s disk)`.
    pub fn describe(&self) -> String {
        let source = match self.rate_source {
            RateSource::Node => "",
            RateSource::Default => ", yard's default: the node did not give its rate",
        };
        format!(
            "{}-bound (q = {} MB/s against a {} MB/s disk{source})",
            self.bound.name(),
            megabytes(self.demand),
            megabytes(self.disk_rate)
        )
    }
}

/// Bytes as megabytes (10⁶) to three significant digits, trailing zeros dropped.
fn megabytes(bytes: f64) -> String {
    let mb = bytes / 1e6;
    if !(mb.is_finite() && mb > 0.0) {
        return format!("{mb}");
    }
    let decimals = (2 - mb.log10().floor() as i32).clamp(0, 9) as usize;
    let text = format!("{mb:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A job kind's type: each part's, once its probe typed it (`None`: unknown yet).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KindType {
    pub map: Option<PartType>,
    pub reduce: Option<PartType>,
}

impl KindType {
    pub fn part(&self, part: Part) -> Option<&PartType> {
        match part {
            Part::Map => self.map.as_ref(),
            Part::Reduce => self.reduce.as_ref(),
        }
    }

    fn slot(&mut self, part: Part) -> &mut Option<PartType> {
        match part {
            Part::Map => &mut self.map,
            Part::Reduce => &mut self.reduce,
        }
    }

    /// Neither part typed.
    pub fn is_unknown(&self) -> bool {
        self.map.is_none() && self.reduce.is_none()
    }

    /// E.g. `map: io-bound (q = 80 MB/s against a 50 MB/s disk); reduce: unknown`.
    pub fn describe(&self) -> String {
        let one = |part: Part| match self.part(part) {
            Some(t) => format!("{}: {}", part.name(), t.describe()),
            None => format!("{}: unknown", part.name()),
        };
        format!("{}; {}", one(Part::Map), one(Part::Reduce))
    }
}

/// The master's probe choice, sans-IO: it starts from what the store knows of the kind, and
/// each part still untyped is typed by its probe, the first task of that part to finish in
/// this run (the task sampler's included: its tasks are the run's first). A probe whose
/// measurement types nothing (no time measured) does not count: the next task to finish is
/// the probe.
///
/// Unlike the paper, nothing waits for the probes. Seed 002 (§3 and §4.1, digest §1.1 and
/// §5.1) runs one map and one reduce of a new job alone until both finish; yard runs the job's
/// other tasks from the start beside them, because holding a deadline job back for its
/// probes would cost Dart its deadlines. Until a part is typed, it is unknown.
#[derive(Debug, Clone, Default)]
pub struct Typing {
    known: KindType,
    /// The parts typed at the start (from the store), not by this run.
    at_start: (bool, bool),
    /// Parts this run typed and the caller has not yet taken to store.
    unsaved: Vec<Part>,
}

impl Typing {
    /// Starts from what the store holds of the kind.
    pub fn new(stored: KindType) -> Typing {
        Typing {
            known: stored,
            at_start: (stored.map.is_some(), stored.reduce.is_some()),
            unsaved: Vec::new(),
        }
    }

    pub fn known(&self) -> &KindType {
        &self.known
    }

    /// Whether `part` was typed before this run (from the store).
    pub fn from_store(&self, part: Part) -> bool {
        match part {
            Part::Map => self.at_start.0,
            Part::Reduce => self.at_start.1,
        }
    }

    /// Whether a finished task of `part` would be a probe: the part is not typed yet.
    pub fn wants(&self, part: Part) -> bool {
        self.known.part(part).is_none()
    }

    /// A task of `part` finished having measured `probe`, on a node whose disk rate is
    /// `disk_rate` (`None`: unknown, typed against the default). If `part` is still untyped,
    /// this is its probe: the type it gives is kept (and queued for the store) and returned.
    /// A typed part is left as it is: `None`.
    pub fn finished(
        &mut self,
        part: Part,
        probe: Probe,
        disk_rate: Option<f64>,
        now_ms: i64,
    ) -> Option<PartType> {
        if !self.wants(part) {
            return None;
        }
        let typed = PartType::of(probe, disk_rate, now_ms)?;
        *self.known.slot(part) = Some(typed);
        self.unsaved.push(part);
        Some(typed)
    }

    /// The parts this run typed since the last call, for the store.
    pub fn take_unsaved(&mut self) -> Vec<(Part, PartType)> {
        std::mem::take(&mut self.unsaved)
            .into_iter()
            .filter_map(|part| Some((part, *self.known.part(part)?)))
            .collect()
    }

    /// The store's type of the kind after recording: a part it holds wins over this run's
    /// (another master of the kind may have typed it first, and a kind keeps its first type).
    pub fn adopt(&mut self, stored: KindType) {
        for part in [Part::Map, Part::Reduce] {
            if let Some(t) = stored.part(part) {
                *self.known.slot(part) = Some(*t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: f64 = 1e6;

    #[test]
    fn the_digests_worked_examples() {
        // Digest §2.1: (MID, MOD, MTCT) against a 50 MB/s disk.
        let cases = [
            (64.0, 32.0, 8.0, 12.0, Bound::Cpu),
            (64.0, 64.0, 2.0, 64.0, Bound::Io),
            (64.0, 61.0, 2.5, 50.0, Bound::Io),
        ];
        for (mid, mod_, mtct, q, bound) in cases {
            let p = Probe {
                input_bytes: mid * MB,
                output_bytes: mod_ * MB,
                seconds: mtct,
            };
            assert!((p.disk_demand().unwrap() - q * MB).abs() < 1e-6, "{p:?}");
            assert_eq!(p.bound(50.0 * MB), Some(bound), "{p:?}");
        }
    }

    #[test]
    fn a_probe_that_measured_nothing_types_nothing() {
        let p = |i, o, s| Probe {
            input_bytes: i,
            output_bytes: o,
            seconds: s,
        };
        assert_eq!(p(1.0, 1.0, 0.0).bound(1.0), None);
        assert_eq!(p(f64::NAN, 1.0, 1.0).bound(1.0), None);
        assert_eq!(p(-1.0, 1.0, 1.0).bound(1.0), None);
        assert_eq!(p(1.0, 1.0, 1.0).bound(0.0), None);
        assert_eq!(p(0.0, 0.0, 1.0).bound(1.0), Some(Bound::Cpu));
        assert_eq!(Bound::parse(Bound::Io.name()), Some(Bound::Io));
        assert_eq!(Bound::parse("disk"), None);
    }

    fn probe(input_mb: f64, output_mb: f64, seconds: f64) -> Probe {
        Probe {
            input_bytes: input_mb * MB,
            output_bytes: output_mb * MB,
            seconds,
        }
    }

    #[test]
    fn the_first_finished_map_and_reduce_of_an_untyped_kind_are_its_probes() {
        let mut t = Typing::new(KindType::default());
        assert!(t.known().is_unknown());
        assert_eq!(t.known().describe(), "map: unknown; reduce: unknown");
        // The first map: 64 + 64 MB in 2 s on a 50 MB/s disk is IO-bound.
        let map = t
            .finished(Part::Map, probe(64.0, 64.0, 2.0), Some(50.0 * MB), 1_000)
            .expect("the first map is the probe");
        assert_eq!((map.bound, map.rate_source), (Bound::Io, RateSource::Node));
        assert_eq!(map.demand, 64.0 * MB);
        // Later maps, however they measure, change nothing.
        assert_eq!(
            t.finished(Part::Map, probe(1.0, 0.0, 100.0), Some(50.0 * MB), 2_000),
            None
        );
        assert_eq!(t.known().map, Some(map));
        assert!(t.wants(Part::Reduce));
        // A reduce that measured no time types nothing: the next one is the probe.
        assert_eq!(
            t.finished(Part::Reduce, probe(8.0, 1.0, 0.0), None, 3_000),
            None
        );
        let reduce = t
            .finished(Part::Reduce, probe(8.0, 0.0, 8.0), None, 4_000)
            .expect("the first reduce that measured something");
        assert_eq!(
            (reduce.bound, reduce.rate_source, reduce.disk_rate),
            (
                Bound::Cpu,
                RateSource::Default,
                DEFAULT_DISK_RATE_BYTES_PER_S
            )
        );
        assert_eq!(
            t.known().describe(),
            "map: io-bound (q = 64 MB/s against a 50 MB/s disk); reduce: cpu-bound (q = 1 MB/s \
             against a 100 MB/s disk, yard's default: the node did not give its rate)"
        );
        assert_eq!(t.take_unsaved(), [(Part::Map, map), (Part::Reduce, reduce)]);
        assert!(t.take_unsaved().is_empty(), "taken once");
        assert!(!t.from_store(Part::Map));
    }

    #[test]
    fn a_kind_typed_in_the_store_has_no_probes_and_the_store_wins_over_a_concurrent_probe() {
        let stored = PartType::of(probe(64.0, 32.0, 8.0), Some(50.0 * MB), 1).unwrap();
        let mut t = Typing::new(KindType {
            map: Some(stored),
            reduce: None,
        });
        assert!(t.from_store(Part::Map) && !t.from_store(Part::Reduce));
        assert_eq!(
            t.finished(Part::Map, probe(64.0, 64.0, 1.0), Some(MB), 2),
            None
        );
        assert_eq!(t.known().map, Some(stored));
        let mine = t
            .finished(Part::Reduce, probe(64.0, 64.0, 1.0), Some(MB), 3)
            .unwrap();
        assert_eq!(mine.bound, Bound::Io);
        // Another master stored the reduce's type first: its type is the kind's.
        let theirs = PartType::of(probe(1.0, 1.0, 1.0), Some(50.0 * MB), 2).unwrap();
        t.adopt(KindType {
            map: Some(stored),
            reduce: Some(theirs),
        });
        assert_eq!(t.known().reduce, Some(theirs));
    }

    #[test]
    fn the_disk_rate_comes_from_the_environment_or_says_why_not() {
        assert_eq!(parse_disk_rate(Some("5e7")), Ok(5e7));
        assert_eq!(parse_disk_rate(Some(" 100000000 ")), Ok(1e8));
        for bad in [
            None,
            Some(""),
            Some("fast"),
            Some("0"),
            Some("-1"),
            Some("inf"),
            Some("NaN"),
        ] {
            let why = parse_disk_rate(bad).unwrap_err();
            assert!(why.starts_with(DISK_RATE_ENV), "{why}");
        }
        assert_eq!(megabytes(80e6), "80");
        assert_eq!(megabytes(12.345e6), "12.3");
        assert_eq!(megabytes(4_000.0), "0.004");
        assert_eq!(megabytes(1.5e9), "1500");
    }
}
