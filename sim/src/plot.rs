//! The paper's plots as SVG: the CDF of the deviation coefficient k/k_max per policy (Dart
//! Fig. 10) and the CDF of the estimation error per policy (Fig. 12a).

use std::io;
use std::path::Path;

use plotters::prelude::*;
use yard_appmaster::policy::PolicyKind;

use crate::engine::JobResult;

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

/// Writes `<name>-deviation.svg` and `<name>-estimation-error.svg` into `dir`.
pub fn write_cdfs(
    dir: &Path,
    name: &str,
    policies: &[PolicyKind],
    results: &[JobResult],
) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let series = |f: fn(&JobResult) -> Option<f64>| -> Vec<(PolicyKind, Vec<f64>)> {
        policies
            .iter()
            .map(|&p| {
                let mut v: Vec<f64> = results
                    .iter()
                    .filter(|r| r.policy == p)
                    .filter_map(f)
                    .collect();
                v.sort_by(f64::total_cmp);
                (p, v)
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
        &format!("{name}: CDF of estimation error at map close"),
        "|T − T̂| / T",
        &series(JobResult::estimation_error),
    )
}

fn cdf(
    path: &Path,
    title: &str,
    x_label: &str,
    series: &[(PolicyKind, Vec<f64>)],
) -> io::Result<()> {
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
            .label(policy.name())
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
