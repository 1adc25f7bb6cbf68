//! Synthetic jobs: map and reduce tasks that take the time and write the bytes they are given,
//! either uniform (`--maps N --map-seconds S …`) or as a trace recorded them
//! (`--trace FILE --job ID`), so a trace's job replays on the live cluster.

use std::path::Path;

use anyhow::{Result, bail};
use yard_appmaster::apps::SyntheticTask;
use yard_workload::{ReadOptions, read_file};

/// A job this large is more than a local cluster replays usefully.
const MAX_MAPS: u64 = 20_000;

/// Job `job` (its id, or its index in the file) of the trace at `path`: every map with its
/// recorded duration (times `time_scale`), input bytes and an even share of the job's shuffle
/// bytes, and every reduce's duration. Bad input is an error that names it.
pub fn from_trace(
    path: &Path,
    job: &str,
    time_scale: f64,
) -> Result<(Vec<SyntheticTask>, Vec<f64>)> {
    if !(time_scale > 0.0 && time_scale.is_finite()) {
        bail!(yard_wire::BadInput(format!(
            "--time-scale {time_scale}: a positive factor"
        )));
    }
    let workload = read_file(path, &ReadOptions::default())?;
    let found = workload
        .jobs
        .iter()
        .find(|j| j.id == job)
        .or_else(|| job.parse::<usize>().ok().and_then(|i| workload.jobs.get(i)));
    let Some(j) = found else {
        bail!(yard_wire::BadInput(format!(
            "{}: no job {job:?} (give a job id, or an index below {})",
            path.display(),
            workload.jobs.len()
        )));
    };
    let maps = j.map_count();
    if maps == 0 || maps > MAX_MAPS {
        bail!(yard_wire::BadInput(format!(
            "job {}: {maps} maps; a synthetic replay takes 1 to {MAX_MAPS}",
            j.id
        )));
    }
    let seconds = |ms: Option<i64>| -> Result<f64> {
        match ms {
            Some(ms) if ms >= 0 => Ok(ms as f64 / 1000.0 * time_scale),
            _ => bail!(yard_wire::BadInput(format!(
                "{}: job {} has tasks without a recorded duration (SWIM records bytes only): replay a Rumen trace, or use --maps and --map-seconds",
                path.display(),
                j.id
            ))),
        }
    };
    let output_per_map = j.shuffle_bytes.unwrap_or(0) / maps;
    let mut out = Vec::with_capacity(maps as usize);
    for group in &j.maps {
        let task = SyntheticTask {
            seconds: seconds(group.task.duration_ms)?,
            input_bytes: group.task.bytes.unwrap_or(0),
            output_bytes: output_per_map,
        };
        out.extend(std::iter::repeat_n(task, group.count as usize));
    }
    let mut reduces = Vec::new();
    for group in &j.reduces {
        let s = seconds(group.task.duration_ms)?;
        reduces.extend(std::iter::repeat_n(s, group.count as usize));
    }
    if reduces.is_empty() {
        reduces.push(0.0); // a map-only job still gathers its answer in one reduce
    }
    Ok((out, reduces))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(name: &str) -> std::path::PathBuf {
        // The repository's traces, two levels up from this crate.
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../traces")
            .join(name)
    }

    #[test]
    fn a_rumen_job_replays_with_its_recorded_durations_scaled() {
        let path = trace("rumen/2jobs2min-rumen-jh.json");
        let workload = read_file(&path, &ReadOptions::default()).unwrap();
        let job = &workload.jobs[0];
        let (maps, reduces) = from_trace(&path, &job.id, 0.5).unwrap();
        assert_eq!(maps.len() as u64, job.map_count());
        let first = job.map_tasks().next().unwrap();
        assert_eq!(
            maps[0].seconds,
            first.duration_ms.unwrap() as f64 / 1000.0 * 0.5
        );
        assert_eq!(maps[0].input_bytes, first.bytes.unwrap_or(0));
        // A map-only job still has the one reduce that gathers its answer.
        assert_eq!(reduces.len() as u64, job.reduce_count().max(1));
        // By index, the same job.
        assert_eq!(from_trace(&path, "0", 0.5).unwrap().0, maps);
    }

    #[test]
    fn what_cannot_be_replayed_is_refused_with_the_reason() {
        let swim = trace("swim/FB-2009_samples_24_times_1hr_0_first50jobs.tsv");
        let err = from_trace(&swim, "0", 1.0).unwrap_err().to_string();
        assert!(err.contains("without a recorded duration"), "{err}");
        let rumen = trace("rumen/2jobs2min-rumen-jh.json");
        let err = from_trace(&rumen, "no-such-job", 1.0)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no job \"no-such-job\""), "{err}");
        let err = from_trace(&rumen, "0", 0.0).unwrap_err().to_string();
        assert!(err.contains("positive"), "{err}");
    }
}
