//! yard's extensions of the paper's Dart as switches: which are on in `dart`, on the live
//! master and in `dart-paper`, by name for `--dart-without` / `--dart-with`. What each does is
//! in the parent module's doc.

/// yard's extensions of the paper's Dart, one switch each (the module docs say what each does
/// and which part of the paper it departs from). `dart` runs [`Extensions::YARD`], `dart-paper`
/// and its ablations [`Extensions::NONE`]; [`Dart::with_extensions`] runs any other mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extensions {
    pub reduce_waves: bool,
    pub reduce_confidence: bool,
    pub forecast_cut: bool,
    pub sample_floor: bool,
    pub node_pace: bool,
    pub reduce_restart: bool,
    pub deadline_stragglers: bool,
    pub end_lost_races: bool,
    pub kill_on_tick: bool,
    pub first_map: bool,
    pub lone_map: bool,
    pub last_moment: bool,
    pub busy_bandwidth: bool,
    pub wave_end: bool,
    pub fifo_shuffle: bool,
    pub elapsed_phases: bool,
    pub cut_tail: bool,
    pub time_cut: bool,
    pub wave_fill: bool,
    pub reforecast_after_kill: bool,
    pub input_scaled: bool,
}

impl Extensions {
    /// Every switch's name, as the fields spell them.
    pub const NAMES: [&'static str; 21] = [
        "reduce_waves",
        "reduce_confidence",
        "forecast_cut",
        "sample_floor",
        "node_pace",
        "reduce_restart",
        "deadline_stragglers",
        "end_lost_races",
        "kill_on_tick",
        "first_map",
        "lone_map",
        "last_moment",
        "busy_bandwidth",
        "wave_end",
        "fifo_shuffle",
        "elapsed_phases",
        "cut_tail",
        "time_cut",
        "wave_fill",
        "reforecast_after_kill",
        "input_scaled",
    ];

    /// These extensions with the one named `name` off (an ablation: what that one does).
    pub fn without(self, name: &str) -> Result<Extensions, String> {
        self.set(name, false)
    }

    /// These extensions with the one named `name` on (one that is off by default, tried).
    pub fn with(self, name: &str) -> Result<Extensions, String> {
        self.set(name, true)
    }

    fn set(mut self, name: &str, on: bool) -> Result<Extensions, String> {
        let x = &mut self;
        let switch = match name {
            "reduce_waves" => &mut x.reduce_waves,
            "reduce_confidence" => &mut x.reduce_confidence,
            "forecast_cut" => &mut x.forecast_cut,
            "sample_floor" => &mut x.sample_floor,
            "node_pace" => &mut x.node_pace,
            "reduce_restart" => &mut x.reduce_restart,
            "deadline_stragglers" => &mut x.deadline_stragglers,
            "end_lost_races" => &mut x.end_lost_races,
            "kill_on_tick" => &mut x.kill_on_tick,
            "first_map" => &mut x.first_map,
            "lone_map" => &mut x.lone_map,
            "last_moment" => &mut x.last_moment,
            "busy_bandwidth" => &mut x.busy_bandwidth,
            "wave_end" => &mut x.wave_end,
            "fifo_shuffle" => &mut x.fifo_shuffle,
            "elapsed_phases" => &mut x.elapsed_phases,
            "cut_tail" => &mut x.cut_tail,
            "time_cut" => &mut x.time_cut,
            "wave_fill" => &mut x.wave_fill,
            "reforecast_after_kill" => &mut x.reforecast_after_kill,
            "input_scaled" => &mut x.input_scaled,
            _ => {
                return Err(format!(
                    "unknown extension {name:?}; expected one of {}",
                    Self::NAMES.join(", ")
                ));
            }
        };
        *switch = on;
        Ok(self)
    }

    /// The switches that are off.
    pub fn off(self) -> Vec<&'static str> {
        Self::NAMES
            .into_iter()
            .filter(|n| self.without(n) == Ok(self))
            .collect()
    }

    /// The switches that are on.
    pub fn on(self) -> Vec<&'static str> {
        Self::NAMES
            .into_iter()
            .filter(|n| self.with(n) == Ok(self))
            .collect()
    }

    /// How these differ from `base`: the switches off here that are on there, and those on
    /// here that are off there.
    pub fn against(self, base: Extensions) -> (Vec<&'static str>, Vec<&'static str>) {
        let (off, on) = (self.off(), self.on());
        (
            off.into_iter().filter(|n| base.on().contains(n)).collect(),
            on.into_iter().filter(|n| base.off().contains(n)).collect(),
        )
    }

    /// Every extension: yard's `dart`.
    pub const YARD: Extensions = Extensions {
        reduce_waves: true,
        reduce_confidence: true,
        forecast_cut: true,
        sample_floor: true,
        node_pace: true,
        reduce_restart: true,
        deadline_stragglers: true,
        end_lost_races: true,
        kill_on_tick: true,
        first_map: true,
        lone_map: true,
        last_moment: true,
        busy_bandwidth: true,
        wave_end: true,
        fifo_shuffle: true,
        elapsed_phases: true,
        cut_tail: true,
        time_cut: true,
        wave_fill: false,
        reforecast_after_kill: true,
        input_scaled: true,
    };

    /// `dart` on the live master: every extension, as `YARD`. `cut_tail`'s premises, that a
    /// reduce cut by time answers from what it folded in and that the reduces run in the
    /// waves the policy plans, hold live since built-in reduces stop fetching and folding
    /// when cut (`AppSpec::reduce_until`) and the master tells the policy its cluster's task
    /// slots as the allotment. Before both, `yard demo --size 2560MiB --nodes 1 --vcores 2`
    /// on a quiet machine read 49 % of what `full` had read by `D` with it and 98 % without
    /// it, so it was off live. After both (one run each per setting, load 7–13, docs/results.md *The
    /// demo at scale*): at 5 GiB on one slot 66 % of `full`'s read with it, 67 % without;
    /// in the default demo 75–95 % with it (2 runs), 33–70 % without (3 runs); every
    /// deadline met.
    pub const LIVE: Extensions = Extensions {
        cut_tail: true,
        ..Extensions::YARD
    };

    /// None: the paper's algorithm (`dart-paper`).
    pub const NONE: Extensions = Extensions {
        reduce_waves: false,
        reduce_confidence: false,
        forecast_cut: false,
        sample_floor: false,
        node_pace: false,
        reduce_restart: false,
        deadline_stragglers: false,
        end_lost_races: false,
        kill_on_tick: false,
        first_map: false,
        lone_map: false,
        last_moment: false,
        busy_bandwidth: false,
        wave_end: false,
        fifo_shuffle: false,
        elapsed_phases: false,
        cut_tail: false,
        time_cut: false,
        wave_fill: false,
        reforecast_after_kill: false,
        input_scaled: false,
    };
}
