//! Every simulated job's result as one CSV row (`yard sim --jobs-csv FILE`): what the report's
//! tables aggregate, for a researcher who wants to ask another question of the same runs
//! (which jobs lose their input, where the estimate's tail comes from).

use std::io::Write;

use serde::Serialize;

use crate::engine::{JobResult, Moment};

/// One row: the run's setup and seed, then the job's result. Times are seconds from the job's
/// start; an estimate or phase the run did not make is empty.
#[derive(Serialize)]
struct Row<'a> {
    setup: &'a str,
    seed: u64,
    config: &'a str,
    policy: String,
    job: &'a str,
    bin: &'static str,
    maps: u32,
    k: u32,
    k_max: u32,
    deadline: f64,
    completion: f64,
    outcome: &'static str,
    processed: f64,
    byte_oracle: f64,
    byte_oracle_exact: bool,
    bytes_vs_oracle: Option<f64>,
    guard_fired: bool,
    lone_map: bool,
    /// The estimate at map close, its parts, and the true phases beside them.
    close_map: Option<f64>,
    close_shuffle: Option<f64>,
    close_reduce: Option<f64>,
    close_total: Option<f64>,
    /// Dart eq. (1)'s `map + shuffle + reduce` at close, before `forecast_cut`'s cap at D.
    close_uncapped: Option<f64>,
    true_map: Option<f64>,
    true_shuffle: Option<f64>,
    true_reduce: Option<f64>,
    true_total: Option<f64>,
    /// The last `Reforecast`'s parts and total (`reforecast_after_kill`), empty without one.
    reforecast_map: Option<f64>,
    reforecast_shuffle: Option<f64>,
    reforecast_reduce: Option<f64>,
    reforecast_total: Option<f64>,
    /// The error of the estimate in force at the answer (the reforecast's, else the
    /// close's), and of the close's alone.
    estimation_error: Option<f64>,
    close_error: Option<f64>,
    /// The floor estimate of the completion (`crate::floor`) and its error.
    floor_total: Option<f64>,
    floor_error: Option<f64>,
}

/// Writes `results` (one seed's run of one setup) as CSV rows; the header first when
/// `header`. Infinite times (a policy that never finished) are written as `inf`.
pub fn write<W: Write>(
    out: W,
    header: bool,
    setup: &str,
    seed: u64,
    results: &[JobResult],
) -> csv::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(header)
        .from_writer(out);
    for r in results {
        let close = r.estimate(Moment::MapClose);
        w.serialize(Row {
            setup,
            seed,
            config: r.config,
            policy: r.label(),
            job: &r.job,
            bin: r.bin.name(),
            maps: r.maps,
            k: r.k,
            k_max: r.k_max,
            deadline: r.deadline,
            completion: r.completion,
            outcome: r.outcome().name(),
            processed: r.processed_fraction,
            byte_oracle: r.byte_max_fraction,
            byte_oracle_exact: r.byte_max_exact,
            bytes_vs_oracle: r.bytes_vs_oracle(),
            guard_fired: r.guard_fired,
            lone_map: r.lone_map,
            close_map: close.map(|e| e.map),
            close_shuffle: close.map(|e| e.shuffle),
            close_reduce: close.map(|e| e.reduce),
            close_total: close.map(|e| e.total),
            close_uncapped: close.map(|e| e.uncapped()),
            true_map: r.phases.map(|e| e.map),
            true_shuffle: r.phases.map(|e| e.shuffle),
            true_reduce: r.phases.map(|e| e.reduce),
            true_total: r.phases.map(|e| e.total),
            reforecast_map: r.reforecast.map(|e| e.map),
            reforecast_shuffle: r.reforecast.map(|e| e.shuffle),
            reforecast_reduce: r.reforecast.map(|e| e.reduce),
            reforecast_total: r.reforecast.map(|e| e.total),
            estimation_error: r.estimation_error(),
            close_error: r.close_estimation_error(),
            floor_total: r.floor,
            floor_error: r.floor_error(),
        })?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use yard_appmaster::policy::PolicyKind;
    use yard_workload::SizeBin;

    use crate::report::tests::result;

    #[test]
    fn one_row_per_job_read_back_with_its_outcome_and_estimate() {
        let mut results = [
            result("C1", PolicyKind::Dart, SizeBin::Small, 4, 5, false, 90.0),
            result("C3", PolicyKind::Aria, SizeBin::Large, 0, 5, false, 70.0),
            result("C3", PolicyKind::Ps, SizeBin::Medium, 10, 10, true, 110.0),
        ];
        results[0].floor = Some(84.0);
        results[1].floor = None;
        let mut out = Vec::new();
        super::write(&mut out, true, "deadlines", 7, &results).unwrap();
        super::write(&mut out, false, "deadlines", 8, &results[..1]).unwrap();
        let mut reader = csv::Reader::from_reader(out.as_slice());
        let header = reader.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 4, "one header, then a row per job and seed");
        let field = |row: &csv::StringRecord, name: &str| {
            let i = header.iter().position(|h| h == name).unwrap();
            row[i].to_owned()
        };
        let outcomes: Vec<String> = rows.iter().map(|r| field(r, "outcome")).collect();
        assert_eq!(outcomes, ["met", "empty", "missed", "met"]);
        assert_eq!(field(&rows[0], "policy"), "dart");
        assert_eq!(field(&rows[0], "bin"), "small");
        assert_eq!(field(&rows[0], "close_total"), "90.0");
        // The parts' sum (the test result's close estimate is all map, 10 s).
        assert_eq!(field(&rows[0], "close_uncapped"), "10.0");
        assert_eq!(field(&rows[0], "true_total"), "80.0");
        assert_eq!(field(&rows[0], "estimation_error"), "0.125");
        assert_eq!(field(&rows[0], "close_error"), "0.125");
        assert_eq!(field(&rows[0], "reforecast_total"), "");
        assert_eq!(field(&rows[0], "floor_total"), "84.0");
        assert_eq!(field(&rows[0], "floor_error"), "0.05");
        assert_eq!(field(&rows[1], "floor_error"), "");
        assert_eq!(field(&rows[3], "seed"), "8");
    }

    /// A `Reforecast` after the close is the estimate in force: the estimation error is
    /// scored against it, the close's apart; with no close estimate, neither is scored.
    #[test]
    fn the_error_is_scored_against_the_estimate_in_force_at_the_answer() {
        use yard_appmaster::policy::Estimate;
        // Truth 80 s (not missed), the close said 90 s: 12.5 % off.
        let mut r = result("C1", PolicyKind::Dart, SizeBin::Small, 4, 5, false, 90.0);
        r.reforecast = Some(Estimate {
            map: 10.0,
            shuffle: 0.0,
            reduce: 0.0,
            total: 84.0,
        });
        assert_eq!(r.estimation_error(), Some(0.05));
        assert_eq!(r.close_estimation_error(), Some(0.125));
        let mut out = Vec::new();
        super::write(&mut out, true, "deadlines", 1, &[r.clone()]).unwrap();
        let text = String::from_utf8(out).unwrap();
        // Then the floor's estimate (the helper's: the completion itself) and its error.
        assert!(text.contains(",84.0,0.05,0.125,80.0,0.0\n"), "{text}");
        r.estimates[1] = None;
        assert_eq!(
            (r.estimation_error(), r.close_estimation_error()),
            (None, None)
        );
    }
}
