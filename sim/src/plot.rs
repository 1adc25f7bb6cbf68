//! The paper's plots as SVG: the CDF of the deviation coefficient k/k_max per policy (Dart
//! Fig. 10), the CDF of the estimation error per policy (Fig. 12a), the mean error of each
//! phase at map close (Fig. 12b–d), and how the answers ended (met / empty / missed, Fig. 8a's
//! missed deadlines with the empty answers apart), with the data read beside.

use std::io;
use std::path::Path;

use plotters::prelude::*;
use yard_appmaster::policy::PolicyKind;

use crate::engine::{JobResult, Moment, Outcome, Phase};

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Writes `<name>-deviation.svg`, `<name>-estimation-error.svg`, `<name>-phase-error.svg` and
/// `<name>-outcomes.svg` into `dir`. Every plot but the outcomes' counts the jobs with k_max ≥ 1
/// (the paper's population); the estimation errors leave out answers from no input (they
/// measure nothing).
pub fn write_plots(
    dir: &Path,
    name: &str,
    policies: &[PolicyKind],
    results: &[JobResult],
) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let policies = &variants(policies, results);
    let series = |f: fn(&JobResult) -> Option<f64>| -> Vec<(String, Vec<f64>)> {
        policies
            .iter()
            .map(|p| {
                let mut v: Vec<f64> = results
                    .iter()
                    .filter(|r| p.holds(r) && r.k_max > 0)
                    .filter_map(f)
                    .collect();
                v.sort_by(f64::total_cmp);
                (p.to_string(), v)
            })
            .collect()
    };
    cdf(
        &dir.join(format!("{name}-deviation.svg")),
        &format!("{name}: CDF of k / k_max"),
        "k / k_max",
        &series(JobResult::deviation),
    )?;
    cdf(
        &dir.join(format!("{name}-estimation-error.svg")),
        &format!("{name}: CDF of estimation error at map close (answers from some input)"),
        "|T − T̂| / T",
        &series(|r| (!r.from_nothing()).then(|| r.estimation_error()).flatten()),
    )?;
    let configs = configs(results);
    phase_errors(
        &dir.join(format!("{name}-phase-error.svg")),
        name,
        &configs,
        policies,
        results,
    )?;
    outcomes(
        &dir.join(format!("{name}-outcomes.svg")),
        name,
        &configs,
        policies,
        results,
    )
}

/// A policy as a run applied it: with or without the deadline guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Variant {
    policy: PolicyKind,
    guarded: bool,
}

impl Variant {
    fn holds(&self, r: &JobResult) -> bool {
        r.policy == self.policy && (r.guard > 0.0) == self.guarded
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::engine::label(self.policy, self.guarded))
    }
}

/// The policies of `results` as run: each of `policies` without the guard, then with it,
/// where some result has it.
fn variants(policies: &[PolicyKind], results: &[JobResult]) -> Vec<Variant> {
    policies
        .iter()
        .flat_map(|&policy| [false, true].map(|guarded| Variant { policy, guarded }))
        .filter(|v| results.iter().any(|r| v.holds(r)))
        .collect()
}

/// The configurations of `results`, in the order they first appear.
fn configs(results: &[JobResult]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in results {
        if !out.contains(&r.config) {
            out.push(r.config);
        }
    }
    out
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

const OUTCOME_COLORS: [RGBColor; 3] = [
    RGBColor(44, 160, 44),
    RGBColor(170, 170, 170),
    RGBColor(214, 39, 40),
];

/// One horizontal bar per configuration and policy over its jobs with k_max ≥ 1, split into
/// met, empty and missed, with the mean processed fraction and data vs oracle written beside.
fn outcomes(
    path: &Path,
    name: &str,
    configs: &[&str],
    policies: &[Variant],
    results: &[JobResult],
) -> io::Result<()> {
    let bars: Vec<(String, [f64; 3], String)> = configs
        .iter()
        .flat_map(|&c| policies.iter().map(move |&p| (c, p)))
        .filter_map(|(c, p)| {
            let jobs: Vec<&JobResult> = results
                .iter()
                .filter(|r| r.config == c && p.holds(r) && r.k_max > 0)
                .collect();
            let n = jobs.len() as f64;
            let share = |o: Outcome| jobs.iter().filter(|r| r.outcome() == o).count() as f64 / n;
            let processed = mean(jobs.iter().map(|r| r.processed_fraction))?;
            let oracle = mean(jobs.iter().filter_map(|r| r.data_vs_oracle()));
            let note = format!(
                "processed {:.0} %, vs oracle {}",
                processed * 100.0,
                oracle.map_or("–".to_owned(), |v| format!("{:.0} %", v * 100.0))
            );
            Some((format!("{c} {p}"), Outcome::ALL.map(share), note))
        })
        .collect();
    let height = 120 + 40 * bars.len() as u32;
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| io::Error::other(e.to_string());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let n = bars.len().max(1) as f64;
    // Labels sit left of 0 (the x axis is the share of jobs, 0–1) and notes right of 1.
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{name}: how answers ended (jobs with k_max ≥ 1)"),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .build_cartesian_2d(-0.3f64..2.0, 0f64..n)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_y_axis()
        .x_labels(6)
        .x_label_formatter(&|x| {
            if (0.0..=1.0).contains(x) {
                format!("{:.0} %", x * 100.0)
            } else {
                String::new()
            }
        })
        .x_desc("share of jobs")
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (label, shares, note)) in bars.iter().enumerate() {
        let y = n - i as f64;
        let mut x = 0.0;
        for (j, share) in shares.iter().enumerate() {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x, y - 0.8), (x + share, y - 0.2)],
                    OUTCOME_COLORS[j].filled(),
                )))
                .map_err(|e| err(&e))?;
            x += share;
        }
        let style = ("sans-serif", 14).into_font();
        chart
            .draw_series([
                Text::new(label.clone(), (-0.29, y - 0.4), style.clone()),
                Text::new(note.clone(), (1.02, y - 0.4), style),
            ])
            .map_err(|e| err(&e))?;
    }
    for (j, outcome) in Outcome::ALL.iter().enumerate() {
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
            .map_err(|e| err(&e))?
            .label(outcome.name())
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 15, y + 5)], OUTCOME_COLORS[j].filled())
            });
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// A phase's median and 80th-percentile error, if any job measured it.
type MedianP80 = Option<(f64, f64)>;

/// Per configuration and policy, the estimation error of each phase at map close over the
/// answers from some input with k_max ≥ 1 (Fig. 12b–d, which draw the mean): the median as a
/// bar, the 80th percentile as a tick. The mean is in the table; drawn, one job with a phase of
/// microseconds (the shuffle left after the maps often is) hides every other bar. Bars past
/// 200 % are cut there, their value written at the end.
fn phase_errors(
    path: &Path,
    name: &str,
    configs: &[&str],
    policies: &[Variant],
    results: &[JobResult],
) -> io::Result<()> {
    let groups: Vec<(String, [MedianP80; 4])> = configs
        .iter()
        .flat_map(|&c| policies.iter().map(move |&p| (c, p)))
        .map(|(c, p)| {
            let jobs: Vec<&JobResult> = results
                .iter()
                .filter(|r| r.config == c && p.holds(r) && r.k_max > 0 && !r.from_nothing())
                .collect();
            let errors = Phase::ALL.map(|phase| {
                let mut v: Vec<f64> = jobs
                    .iter()
                    .filter_map(|r| r.phase_error(Moment::MapClose, phase))
                    .collect();
                v.sort_by(f64::total_cmp);
                let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
                (!v.is_empty()).then(|| (at(0.5), at(0.8)))
            });
            (format!("{c} {p}"), errors)
        })
        .collect();
    const CAP: f64 = 2.0;
    let top = groups
        .iter()
        .flat_map(|(_, e)| e.iter().flatten())
        .fold(0.1f64, |m, &(_, p80)| m.max(p80))
        .min(CAP);
    let height = 120 + 60 * groups.len() as u32;
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| io::Error::other(e.to_string());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let n = groups.len().max(1) as f64;
    let left = -0.3 * top;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{name}: estimation error per phase at map close (median, p80 tick)"),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .build_cartesian_2d(left..top * 1.25, 0f64..n)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_y_axis()
        .x_labels(8)
        .x_label_formatter(&|x| {
            if *x >= 0.0 && *x <= top {
                format!("{:.0} %", x * 100.0)
            } else {
                String::new()
            }
        })
        .x_desc("|T − T̂| / T, per phase (map end, shuffle left, reduce phase, total)")
        .draw()
        .map_err(|e| err(&e))?;
    let style = ("sans-serif", 13).into_font();
    for (i, (label, errors)) in groups.iter().enumerate() {
        let y = n - i as f64;
        chart
            .draw_series(std::iter::once(Text::new(
                label.clone(),
                (left * 0.97, y - 0.5),
                style.clone(),
            )))
            .map_err(|e| err(&e))?;
        for (j, e) in errors.iter().enumerate() {
            let Some((median, p80)) = *e else { continue };
            let (y0, y1) = (y - 0.1 - 0.2 * (j as f64 + 1.0), y - 0.1 - 0.2 * j as f64);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y0 + 0.02), (median.min(top), y1 - 0.02)],
                    COLORS[j].filled(),
                )))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(p80.min(top), y0), (p80.min(top), y1)],
                    BLACK.stroke_width(2),
                )))
                .map_err(|e| err(&e))?;
            if p80 > top {
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{:.0} / {:.0} %", median * 100.0, p80 * 100.0),
                        (top * 1.01, y0),
                        ("sans-serif", 11).into_font(),
                    )))
                    .map_err(|e| err(&e))?;
            }
        }
    }
    for (j, phase) in Phase::ALL.iter().enumerate() {
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
            .map_err(|e| err(&e))?
            .label(phase.name())
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 15, y + 5)], COLORS[j].filled())
            });
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

fn cdf(path: &Path, title: &str, x_label: &str, series: &[(String, Vec<f64>)]) -> io::Result<()> {
    let max = series
        .iter()
        .filter_map(|(_, v)| v.last().copied())
        .fold(1.0f64, f64::max)
        .min(10.0);
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| io::Error::other(e.to_string());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..max * 1.02, 0f64..1.0)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("fraction of jobs")
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (policy, values)) in series.iter().enumerate() {
        if values.is_empty() {
            continue;
        }
        let color = COLORS[i % COLORS.len()];
        let n = values.len() as f64;
        // A step function: at each sorted value the CDF rises by 1/n.
        let points = values.iter().enumerate().flat_map(|(j, &x)| {
            let x = x.min(max);
            [(x, j as f64 / n), (x, (j + 1) as f64 / n)]
        });
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(policy.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// A line per series of (x, y) points, x on a log scale (the inter-arrival sweeps double).
pub fn lines(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> io::Result<()> {
    let points = series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, 0.0f64, 0.0f64);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        if y.is_finite() {
            y1 = y1.max(y);
        }
    }
    if !(x0.is_finite() && x0 > 0.0) {
        (x0, x1) = (1.0, 2.0);
    }
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| io::Error::other(e.to_string());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((x0 * 0.9..x1 * 1.1).log_scale(), 0f64..(y1 * 1.1).max(1e-9))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, values)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                values.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(values.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// A line per series of (x, y) points on linear axes, without markers: a quantity over time.
pub fn timeline(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> io::Result<()> {
    let (mut x1, mut y1) = (1.0f64, 0.0f64);
    for &(x, y) in series.iter().flat_map(|(_, p)| p.iter()) {
        if x.is_finite() {
            x1 = x1.max(x);
        }
        if y.is_finite() {
            y1 = y1.max(y);
        }
    }
    let root = SVGBackend::new(path, (900, 500)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| io::Error::other(e.to_string());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..x1, 0f64..(y1 * 1.1).max(1.0))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, values)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                values.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
