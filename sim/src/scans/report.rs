//! The shared-scan experiment's tables (beside the paper's values, as the CLI prints them),
//! the θ grid's, and the plots.

use std::fmt::Write as _;

use yard_cluster::scans::Metric;

use super::figures::{GRID_THETAS, Row, ScansReport};
use super::{POLICIES, setup_line, workload_name};
use crate::table::{Cell, Column, Printable, Table, Unit};

/// The text of a run over the correlation levels (or a trace); a θ grid's is [`grid_markdown`].
impl Printable for ScansReport {
    fn text(&self) -> String {
        markdown(self)
    }
}

/// The tables, beside the paper's figures.
pub fn markdown(r: &ScansReport) -> String {
    let mut t = String::new();
    let s = &r.setup;
    let _ = writeln!(t, "Model: {}.\n", r.model);
    match &r.trace {
        Some(trace) => {
            let _ = writeln!(
                t,
                "Trace {trace}; S = {} map slots, f = {}, BATCH W = {} s.\n",
                s.slots, s.scan_fraction, s.window_s
            );
        }
        None => {
            let seeds = match r.seeds {
                1 => format!("seed {}", r.seed),
                n => format!("seeds {}–{} (mean ± sd)", r.seed, r.seed + n - 1),
            };
            let _ = writeln!(
                t,
                "{}, BATCH W = {} s; {seeds}. Correlation 0 = perfectly negative, 4 = random, 8 = perfectly positive (seed 004 §4). Paper: Fig. 5a (θ1 = θ2 = 1, average response time); its Figs. 6b/6c print no numbers for stretch.\n",
                setup_line(s),
                s.window_s
            );
        }
    }
    for &metric in &s.metrics {
        let _ = writeln!(t, "### {}\n", metric.name());
        let bytes = r.trace.is_some();
        // The seed 004 tables have always aligned every column left.
        let fixed = |h: &str, d: usize| Column::new(h, Unit::Fixed(d)).left();
        let paper = || Column::text("paper").missing("—");
        let mut columns = vec![
            Column::text("workload"),
            fixed("flex", 2),
            fixed("circumflex", 2),
            fixed("ratio", 2),
            paper(),
            fixed("batch", 2),
            fixed("ratio", 2),
            paper(),
            fixed("work ratio C / B", 2),
            fixed("max sharing C / B", 1),
            fixed("mean response s F / C / B", 1),
        ];
        if bytes {
            columns.push(
                Column::new("bytes read F / C / B", Unit::Gib)
                    .left()
                    .missing("—"),
            );
            columns.push(
                Column::new("bytes cut C / B", Unit::PercentSign(0))
                    .left()
                    .missing("—"),
            );
        }
        let mut table = Table::new(columns);
        let mut workloads: Vec<&str> = Vec::new();
        for row in r.rows.iter().filter(|x| x.metric == metric.name()) {
            if !workloads.contains(&row.workload.as_str()) {
                workloads.push(&row.workload);
            }
        }
        for w in workloads {
            let get = |p: &str| {
                r.rows
                    .iter()
                    .find(|x| x.metric == metric.name() && x.workload == w && x.policy == p)
            };
            let (Some(f), Some(c), Some(b)) = (get("flex"), get("circumflex"), get("batch")) else {
                continue;
            };
            let v = |x: &Row| match r.seeds {
                1 => Cell::Num(x.value),
                _ => Cell::Spread(x.value, x.value_sd),
            };
            let ratio = |x: &Row| match r.seeds {
                1 => Cell::Num(x.ratio_to_flex),
                _ => Cell::Spread(x.ratio_to_flex, x.ratio_sd),
            };
            let paper = |x: &Row| x.paper.clone().map_or(Cell::Missing, Cell::Text);
            let three =
                |g: fn(&Row) -> f64| Cell::Joined(vec![g(f).into(), g(c).into(), g(b).into()]);
            let mut cells = vec![
                w.into(),
                v(f),
                v(c),
                ratio(c),
                paper(c),
                v(b),
                ratio(b),
                paper(b),
                Cell::Joined(vec![c.work_ratio.into(), b.work_ratio.into()]),
                Cell::Joined(vec![c.avg_max_sharing.into(), b.avg_max_sharing.into()]),
                three(|x| x.mean_response_s),
            ];
            if bytes {
                match (f.bytes_read, c.bytes_read, b.bytes_read) {
                    (Some(fb), Some(cb), Some(bb)) => {
                        let cut = |x: f64| match fb > 0.0 {
                            true => Cell::Num(1.0 - x / fb),
                            false => Cell::Missing,
                        };
                        cells.push(Cell::Joined(vec![fb.into(), cb.into(), bb.into()]));
                        cells.push(Cell::Joined(vec![cut(cb), cut(bb)]));
                    }
                    _ => cells.extend([Cell::Missing, Cell::Missing]),
                }
            }
            table.row(cells);
        }
        let _ = writeln!(t, "{}", table.markdown());
    }
    if r.trace.is_none() && s.metrics.contains(&Metric::AvgResponse) {
        let ratios: Vec<f64> = r
            .rows
            .iter()
            .filter(|x| x.policy == "circumflex" && x.metric == Metric::AvgResponse.name())
            .map(|x| x.ratio_to_flex)
            .collect();
        if !ratios.is_empty() {
            let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ratios.iter().copied().fold(0.0, f64::max);
            let _ = writeln!(
                t,
                "CIRCUMFLEX / FLEX, average response time: {lo:.2}–{hi:.2} over the levels (paper, Fig. 5a: 0.47–0.81; issue 20's goal: ≤ 0.8 on the seed's mix)."
            );
        }
    }
    t
}

/// Fig. 6's summary of a grid report: per metric and (θ1, θ2), the min / median / max over the
/// correlation levels of CIRCUMFLEX's and BATCH's ratios to FLEX.
pub fn grid_markdown(r: &ScansReport) -> String {
    let mut t = String::new();
    let s = &r.setup;
    let _ = writeln!(t, "Model: {}.\n", r.model);
    let _ = writeln!(
        t,
        "Fig. 6: θ1, θ2 ∈ {{0, .25, .5, .75, 1}}, correlation levels {:?}, {} arrivals, S = {}, ρ = {}, W = {} s, M_j = {}; seeds {}–{}. Each cell: min / median / max over the levels of the ratio to FLEX (each a mean over the seeds).\n",
        s.levels,
        s.arrivals,
        s.slots,
        s.rho,
        s.window_s,
        s.max_slots,
        r.seed,
        r.seed + r.seeds.max(1) - 1
    );
    let stats = |xs: &mut Vec<f64>| -> (f64, f64, f64) {
        xs.sort_by(f64::total_cmp);
        match xs.len() {
            0 => (f64::NAN, f64::NAN, f64::NAN),
            n => (xs[0], xs[n / 2], xs[n - 1]),
        }
    };
    for &metric in &s.metrics {
        let _ = writeln!(t, "### {}\n", metric.name());
        let mut table = Table::new(vec![
            Column::new("θ1", Unit::Plain).left(),
            Column::new("θ2", Unit::Plain).left(),
            Column::new("circumflex / flex", Unit::Fixed(2)).left(),
            Column::new("batch / flex", Unit::Fixed(2)).left(),
        ]);
        let (mut worst_c, mut best_b) = (f64::NEG_INFINITY, f64::INFINITY);
        for &theta1 in &GRID_THETAS {
            for &theta2 in &GRID_THETAS {
                let prefix = format!("theta1={theta1} theta2={theta2} corr=");
                let of = |p: &str| -> Vec<f64> {
                    r.rows
                        .iter()
                        .filter(|x| {
                            x.policy == p
                                && x.metric == metric.name()
                                && x.workload.starts_with(&prefix)
                        })
                        .map(|x| x.ratio_to_flex)
                        .collect()
                };
                let (c0, c1, c2) = stats(&mut of("circumflex"));
                let (b0, b1, b2) = stats(&mut of("batch"));
                worst_c = worst_c.max(c2);
                best_b = best_b.min(b0);
                table.row(vec![
                    theta1.into(),
                    theta2.into(),
                    Cell::Joined(vec![c0.into(), c1.into(), c2.into()]),
                    Cell::Joined(vec![b0.into(), b1.into(), b2.into()]),
                ]);
            }
        }
        let _ = writeln!(t, "{}", table.markdown());
        let paper = match metric {
            Metric::AvgResponse => {
                " (paper, Fig. 6a: worst CIRCUMFLEX .98, best BATCH .97; CIRCUMFLEX always below 1)"
            }
            _ => {
                " (paper, Figs. 6b/6c: no numbers; CIRCUMFLEX always much better than FLEX, BATCH never nearly as good)"
            }
        };
        let _ = writeln!(
            t,
            "Worst CIRCUMFLEX / FLEX {worst_c:.2}, best BATCH / FLEX {best_b:.2}{paper}.\n"
        );
    }
    t
}

/// SVG: per metric, each policy's ratio to FLEX against the correlation level.
pub fn write_plots(dir: &std::path::Path, r: &ScansReport) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    if r.trace.is_some() {
        return Ok(());
    }
    for &metric in &r.setup.metrics {
        let series: Vec<(String, Vec<(f64, f64)>)> = POLICIES
            .iter()
            .map(|&p| {
                let points = r
                    .setup
                    .levels
                    .iter()
                    .filter_map(|&l| {
                        let w = workload_name(&r.setup, l);
                        r.rows
                            .iter()
                            .find(|x| x.policy == p && x.metric == metric.name() && x.workload == w)
                            .map(|x| (f64::from(l), x.ratio_to_flex))
                    })
                    .collect();
                (p.to_owned(), points)
            })
            .collect();
        crate::plot::timeline(
            &dir.join(format!("shared-scans-{}.svg", metric.name())),
            &format!(
                "{}: ratio to FLEX (θ1 = {}, θ2 = {})",
                metric.name(),
                r.setup.theta1,
                r.setup.theta2
            ),
            "correlation level (0 negative, 4 random, 8 positive)",
            "ratio to FLEX",
            &series,
        )?;
    }
    Ok(())
}
