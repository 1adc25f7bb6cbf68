//! The report as Markdown: the tables' columns (shared with the seeds' tables), the notes and
//! legend under them, and [`markdown`], one seed's whole report.

use std::fmt::Write as _;

use super::{C12, PaperFigure, Report, Row, Stats, metric};
use crate::result::{Moment, Phase};
use crate::table::{Cell, Column, Printable, Table, Unit};

/// The main table's figures between `jobs` and the empty answers' error, in the one-seed table
/// and the seeds' alike: each column's header and the [`metric`] it shows, in percent.
pub(crate) const FIGURES: [(&str, &str); 16] = [
    ("median k/k_max %", "median_deviation"),
    ("mean k/k_max %", "mean_deviation"),
    ("missed %", "missed_fraction"),
    ("empty %", "empty_fraction"),
    ("met %", "met_fraction"),
    ("processed %", "mean_processed_fraction"),
    ("data vs oracle %", "data_vs_oracle"),
    ("bytes vs oracle %", "bytes_vs_oracle"),
    ("byte oracle exact %", "bytes_oracle_exact_fraction"),
    ("bytes vs exact oracle %", "bytes_vs_exact_oracle"),
    ("mean est. err %", "mean_estimation_error"),
    ("median est. err %", "median_estimation_error"),
    ("p80 est. err %", "p80_estimation_error"),
    ("p90 est. err %", "p90_estimation_error"),
    ("median floor err %", "median_floor_error"),
    ("p80 floor err %", "p80_floor_error"),
];

/// The guard's columns, the main table's last.
pub(crate) const GUARD_FIGURES: [(&str, &str); 3] = [
    ("guard fired %", "guard_fired_fraction"),
    ("guard cost (points)", "guard_cost"),
    ("guard rescued %", "guard_rescued_fraction"),
];

/// Percent columns of `figures` ([`FIGURES`], [`GUARD_FIGURES`]).
pub(crate) fn percent_columns<'a>(
    figures: &'a [(&str, &str)],
) -> impl Iterator<Item = Column> + 'a {
    figures
        .iter()
        .map(|&(header, _)| Column::new(header, Unit::Percent(1)))
}

/// The estimation table's cells after config, policy and bin (Dart Table 3, Fig. 12b–d): each
/// header, moment and phase. A phase over by the first reduce has no column there.
pub(crate) const ESTIMATION: [(&str, Moment, Phase); 10] = [
    ("start: map", Moment::Start, Phase::Map),
    ("start: shuffle", Moment::Start, Phase::Shuffle),
    ("start: reduce", Moment::Start, Phase::Reduce),
    ("start: total", Moment::Start, Phase::Total),
    ("close: map", Moment::MapClose, Phase::Map),
    ("close: shuffle", Moment::MapClose, Phase::Shuffle),
    ("close: reduce", Moment::MapClose, Phase::Reduce),
    ("close: total", Moment::MapClose, Phase::Total),
    ("1st reduce: reduce", Moment::FirstReduce, Phase::Reduce),
    ("1st reduce: total", Moment::FirstReduce, Phase::Total),
];

/// The estimation table, empty: config, policy, bin, then `mean / median / p80` % per
/// [`ESTIMATION`] cell.
pub(crate) fn estimation_table() -> Table {
    let keys = ["config", "policy", "bin"].map(Column::text);
    Table::new(
        keys.into_iter()
            .chain(
                ESTIMATION
                    .iter()
                    .map(|&(h, ..)| Column::new(h, Unit::Percent(1)).left()),
            )
            .collect(),
    )
}

/// Whether a row is in the estimation table: the size bins and `all` of each configuration
/// (not the pooled C1+C2, which only the deviation figures use).
pub(crate) fn in_estimation_table(config: &str, bin: &str) -> bool {
    config != C12 && matches!(bin, "small" | "medium" | "large" | "all")
}

/// The table of the paper's figures beside yard's, empty.
pub(crate) fn paper_table() -> Table {
    Table::new(vec![
        Column::text("beside the paper (jobs with k_max ≥ 1; its Dart beside both Darts)"),
        Column::text("metric"),
        Column::new("paper %", Unit::Percent(1)),
        Column::new("yard %", Unit::Percent(1)),
        Column::new("difference (points)", Unit::Points(1)),
        Column::new("yard +guard %", Unit::Percent(1)),
        Column::text("source"),
    ])
}

/// A paper row's first three cells: the figure's scope, its metric (a relative figure's with
/// the policy it compares against) and the paper's value.
pub(crate) fn paper_cells(
    f: &PaperFigure,
    yard_policy: &str,
    yard_versus: Option<&str>,
) -> [Cell; 3] {
    let metric = match yard_versus {
        None => f.metric.to_owned(),
        Some(v) => {
            let how = if f.reduction { "reduction" } else { "increase" };
            format!("{} {how} vs {v}", f.metric)
        }
    };
    [
        format!("{} {yard_policy} {}", f.config, f.bin).into(),
        metric.into(),
        f.value.into(),
    ]
}

/// `mean / median / p80` in percent, or `–` with no job.
fn triple(s: &Stats) -> Cell {
    match s.jobs {
        0 => Cell::Missing,
        _ => Cell::Joined(vec![s.mean.into(), s.median.into(), s.p80.into()]),
    }
}

/// The header's note of trace jobs with no tasks, left out of every row.
pub fn no_tasks_note(count: usize) -> String {
    match count {
        0 => String::new(),
        n => format!(
            " (and {n} trace job{} with no tasks, not scheduled or scored)",
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// The header's note of the deadline guard.
pub(crate) fn guard_note(guard: f64) -> String {
    match guard {
        g if g > 0.0 => format!(
            "deadline guard {g} s before D on the `+guard` rows (each beside the same jobs without it)"
        ),
        _ => "no deadline guard".to_owned(),
    }
}

/// What the main table's bins, outcomes and columns mean (printed under it).
pub const LEGEND: &str = "Bins: `small`, `medium`, `large` and `all` count the jobs with k_max ≥ 1, the paper's \
         population (it computes k/k_max for every job), and the paper's figures sit beside them; \
         `one-map` and `two-plus` split that population into jobs of one map (all or nothing) and \
         of two or more; `partial` is the jobs whose deadline admits some but not all of their maps (0 < k_max < \
         maps), the only jobs where k/k_max tells policies apart; `none-fits` the jobs where no \
         schedule reads a map in time (k_max = 0), reported apart; `every` all jobs. Each job ends \
         in exactly one of: met (answered by D from k ≥ 1 maps), empty (answered by D from no \
         input: k = 0 or every byte cut; not a met deadline) and missed (answered after D). \
         processed: the mean share of input bytes whose records reached the answer after every \
         cut (maps not run, reduce input sampled); data vs oracle: the mean of processed bytes \
         over the bytes the k_max schedule reads (jobs with k_max ≥ 1; that schedule has the \
         most maps, not the most bytes, so this can pass 100 %); bytes vs oracle: the mean of \
         processed bytes over the most input any schedule of whole maps reads by D, capped at \
         100 % a job (jobs where that is above 0), exact for the share of jobs shown beside it \
         and a proven upper bound for the rest (their figure is then low, never high); bytes vs \
         exact oracle: the same over the jobs whose oracle is exact (not a random sample: mostly \
         jobs of at most 8 maps). \
         Estimation error: |T − T̂| / T of the estimate at map close, over answers from some \
         input (mean, median, p80, p90); an empty answer's (`mean / median / p80`) apart, as it \
         measures nothing. Floor err: over the same jobs, the error of the simulator's floor \
         estimate, which knows everything at map close but the reduces' noise draws (the median \
         completion over 64 redraws of them): what no estimate at map close can avoid here. `+guard` rows: the same jobs with the \
         deadline guard (yard's, beyond the paper: maps stop and running reduces answer from \
         what they folded in `guard` seconds before D, unfinished reduces are dropped at D); \
         guard fired: the share of jobs not finished by then; guard cost: the mean processed \
         fraction lost against the same job without the guard (whose answer may have come \
         late); guard rescued: the jobs missed without the guard and met with it.";

impl Printable for Report {
    fn text(&self) -> String {
        markdown(self)
    }
}

/// The Markdown tables — outcomes and data, estimation error by phase and moment — then the
/// paper's figures beside the simulated ones.
pub fn markdown(report: &Report) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "seed {}, {} jobs{}, {}\n",
        report.seed,
        report.jobs,
        no_tasks_note(report.no_task_jobs),
        guard_note(report.guard)
    );
    let keys = ["config", "policy", "bin"].map(Column::text);
    let mut table = Table::new(
        keys.into_iter()
            .chain([Column::new("jobs", Unit::Count)])
            .chain(percent_columns(&FIGURES))
            .chain([Column::new(
                "empty answers' est. err (mean / median / p80) %",
                Unit::Percent(1),
            )])
            .chain(percent_columns(&GUARD_FIGURES))
            .collect(),
    );
    let figures = |r: &Row, of: &[(&str, &str)]| -> Vec<Cell> {
        of.iter().map(|&(_, m)| metric(r, m).into()).collect()
    };
    for r in &report.rows {
        let mut cells: Vec<Cell> = vec![
            r.config.as_str().into(),
            r.policy.as_str().into(),
            r.bin.as_str().into(),
            r.jobs.into(),
        ];
        cells.extend(figures(r, &FIGURES));
        cells.push(triple(&r.empty_estimation_error));
        cells.extend(figures(r, &GUARD_FIGURES));
        table.row(cells);
    }
    t += &table.markdown();
    let _ = writeln!(t, "\n{LEGEND}");
    t += &uncapped_line(report.rows.iter().map(|r| {
        let at = |v: Option<f64>| v.map(|v| Unit::Percent(1).format(v));
        (
            r.config.as_str(),
            r.policy.as_str(),
            r.bin.as_str(),
            at(r.p80_estimation_error),
            at(r.p80_estimation_error_uncapped),
            at(r.p80_estimation_error_under_d),
            at(r.under_d_share),
            at(r.p80_close_estimation_error),
        )
    }));
    let shown: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| in_estimation_table(&r.config, &r.bin))
        .collect();
    if !shown.is_empty() {
        let _ = writeln!(
            t,
            "\nEstimation error by phase, `mean / median / p80` %, over answers from some input (jobs \
             with k_max ≥ 1): the estimate at job start (after the first grants), at map close, and \
             when the first reduce finished (map and shuffle are over by then). map: when the map \
             phase ends; shuffle: what is left of it after the maps; reduce: the reduce phase; total: \
             the completion. A true phase under 1 ms (a map-only job's shuffle and reduce take none) \
             has no relative error and is left out.\n"
        );
        let mut table = estimation_table();
        for r in shown {
            let mut cells: Vec<Cell> = vec![
                r.config.as_str().into(),
                r.policy.as_str().into(),
                r.bin.as_str().into(),
            ];
            cells.extend(
                ESTIMATION
                    .iter()
                    .map(|&(_, m, p)| triple(r.estimation.get(m).get(p))),
            );
            table.row(cells);
        }
        t += &table.markdown();
    }
    if !report.paper.is_empty() {
        let mut table = paper_table();
        for c in &report.paper {
            let mut cells = paper_cells(&c.figure, c.yard_policy, c.yard_versus).to_vec();
            cells.extend([
                c.simulated.into(),
                c.difference.into(),
                c.guarded.into(),
                c.figure.source.into(),
            ]);
            table.row(cells);
        }
        let _ = write!(t, "\n{}", table.markdown());
    }
    t
}

/// One paragraph: per configuration, each Dart's p80 estimation error at map close (bin `all`)
/// over the estimate it answered with (capped at D by `dart`'s `forecast_cut` under its guard)
/// and over eq. (1)'s uncapped sum of the parts; empty with no such row. `rows`: each row's
/// config, policy and bin with its two cells, already formatted.
pub(crate) fn uncapped_line<'a>(rows: impl Iterator<Item = UncappedCells<'a>>) -> String {
    let cells: Vec<String> = rows
        .filter(|&(config, policy, bin, ..)| {
            config != C12 && bin == "all" && policy.starts_with("dart")
        })
        .filter_map(
            |(config, policy, _, capped, uncapped, under_d, share, close)| {
                let dash = |c: Option<String>| c.unwrap_or_else(|| "–".to_owned());
                Some(format!(
                    "{config} {policy} {} → {} ({} over the {} % under D; the close's own {})",
                    dash(capped),
                    uncapped?,
                    dash(under_d),
                    dash(share),
                    dash(close)
                ))
            },
        )
        .collect();
    if cells.is_empty() {
        return String::new();
    }
    format!(
        "\np80 est. err % at map close, as answered → uncapped (as answered: the estimate in \
         force at the answer, the close's or, under `dart`'s `reforecast_after_kill`, the last \
         re-sent after a kill or failure changed k; uncapped: Dart eq. 1's map + shuffle + \
         reduce before `forecast_cut`'s cap at D under `dart`'s guard; the capped error says \
         how early the guard answered, the uncapped one how far the profile was off, though \
         against a T the guard's cut ended; the third, over the answers whose estimate ended \
         before D, is neither's; the last, the estimate the close carried, before any re-sent \
         one), bin all, answers from some input: {}\n",
        cells.join("; ")
    )
}

/// A row's config, policy and bin, with its p80 errors as answered, uncapped and under D, the
/// share under D, and the close's own p80 error, each already formatted.
pub(crate) type UncappedCells<'a> = (
    &'a str,
    &'a str,
    &'a str,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);
