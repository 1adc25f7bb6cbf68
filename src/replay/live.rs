//! The live side of a replay: every job submitted at its arrival to the rm, followed to its
//! answer ([`replay`], [`poll_job`]), and its answer read into a [`LiveResult`], with k_max on
//! the task times the cluster measured ([`measured_k_max`]).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;
use yard_appmaster::policy::Seconds;
use yard_sim::engine::MEASURABLE;
use yard_sim::shared::SharedJob;
use yard_wire::answer::{AnswerJob, Measured};
use yard_wire::jobs::{AnswerView, JobView};
use yard_wire::views::FinalApplicationStatus;

use super::ReplayArgs;
use super::prepare::{LiveJob, clean_id};
use crate::client::Client;

/// What became of one live job.
#[derive(Debug, Clone, Default)]
pub(super) struct LiveResult {
    pub(super) id: String,
    pub(super) app: Option<String>,
    /// missed, empty or met; `None`: it never answered (failed, killed, or still running).
    pub(super) outcome: Option<String>,
    pub(super) processed_fraction: f64,
    /// From its submission to its answer, seconds.
    pub(super) completion: Option<Seconds>,
    pub(super) estimation_error: Option<f64>,
    /// The estimate of the job's time (from its job phase's start) when its map phase closed.
    pub(super) estimate_at_close: Option<Seconds>,
    /// When its map phase closed and when it answered, from its job phase's start.
    pub(super) map_closed_at: Option<Seconds>,
    pub(super) job_seconds: Option<Seconds>,
    pub(super) guard_fired: bool,
    pub(super) task_sampler_ran: bool,
    pub(super) k: u32,
    pub(super) k_max: Option<u32>,
    pub(super) state: String,
    /// From its submission to its master's start (the master's clock starts then), seconds.
    pub(super) master_start: Option<Seconds>,
    /// Its master's start-up: from its start to its job phase's (`completionSeconds −
    /// jobSeconds`), unless the task sampler ran in between.
    pub(super) master_startup: Option<Seconds>,
    /// Its median task launch: from a container freed to its next task's process started.
    pub(super) task_startup: Option<Seconds>,
}

/// Submits every job at its arrival, follows them to their answers, and reads them.
pub(super) fn replay(
    client: &Client,
    args: &ReplayArgs,
    live: &[LiveJob],
    seed: u64,
    prepared: &[SharedJob],
    containers: usize,
    stop: &mpsc::Receiver<()>,
) -> Result<Vec<LiveResult>> {
    let n = live.len();
    let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("replay [{bar:30}] {pos}/{len} done {msg} {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let start = Instant::now();
    let mut results: Vec<LiveResult> = live
        .iter()
        .map(|j| LiveResult {
            id: j.id.clone(),
            state: "NOT SUBMITTED".into(),
            ..LiveResult::default()
        })
        .collect();
    let mut submitted = 0;
    let mut running: Vec<usize> = Vec::new();
    let (mut done, mut met) = (0, 0);
    let last = live.iter().map(|j| j.arrival).fold(0.0, f64::max);
    let give_up = start + Duration::from_secs_f64(last) + Duration::from_secs(args.patience);
    while done < n {
        if stop.try_recv().is_ok() {
            // The report still comes, over what answered: the rest count as missed.
            bar.abandon();
            eprintln!(
                "interrupted: {submitted} of {n} jobs submitted, {done} answered; the others are counted missed (unanswered)"
            );
            break;
        }
        let now = start.elapsed().as_secs_f64();
        while submitted < n && live[submitted].arrival <= now {
            let j = &live[submitted];
            let body = json!({
                "job": j.to_job(args.policy, seed.wrapping_add(submitted as u64), args.guard),
                "name": app_name(&j.id),
                "deadlineInMs": (j.deadline * 1000.0).round().max(1.0) as u64,
            });
            let view = client
                .typed(|rm| rm.submit_job(&body))
                .with_context(|| format!("submitting job {}", j.id))?;
            results[submitted].app = Some(view.id);
            results[submitted].state = "SUBMITTED".into();
            running.push(submitted);
            submitted += 1;
        }
        let mut still = Vec::new();
        for &i in &running {
            let Some(app) = results[i].app.clone() else {
                continue;
            };
            let polled = poll_job(client, &app)?;
            results[i].state = polled.state.clone();
            match polled.ended {
                true => {
                    if let Some(answer) = &polled.answer {
                        read_answer(&mut results[i], answer, &live[i], &prepared[i], containers);
                    }
                    met += usize::from(results[i].outcome.as_deref() == Some("met"));
                    done += 1;
                    bar.inc(1);
                }
                false => still.push(i),
            }
        }
        running = still;
        bar.set_message(format!(
            "· submitted {submitted}/{n} · running {} · deadlines met {met}",
            running.len()
        ));
        if Instant::now() > give_up {
            bar.abandon();
            eprintln!(
                "gave up on {} jobs still running {} s after the last submission (counted missed)",
                running.len(),
                args.patience
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
    Ok(results)
}

/// A MapReduce job as the rm shows it now (`GET /ws/v1/yard/mapreduce/jobs/{app}`).
pub(crate) struct Polled {
    pub(crate) view: JobView,
    /// YARN's state name.
    pub(crate) state: String,
    /// FINISHED, FAILED or KILLED.
    pub(crate) ended: bool,
    /// Its answer, once it has ended and succeeded.
    pub(crate) answer: Option<AnswerView>,
}

/// Polls the MapReduce job `app` at the rm, and reads its answer once it has ended well.
pub(crate) fn poll_job(client: &Client, app: &str) -> Result<Polled> {
    let view = client.typed(|rm| rm.job(app))?;
    let ended = view.state.is_final();
    let answer = match ended && view.final_status == FinalApplicationStatus::Succeeded {
        true => Some(client.typed(|rm| rm.answer(app))?),
        false => None,
    };
    Ok(Polled {
        state: view.state.name().to_owned(),
        view,
        ended,
        answer,
    })
}

/// An application name from a trace job's id: its letters, digits, `-`, `_` and `.`.
fn app_name(id: &str) -> String {
    format!("replay-{}", clean_id(id, 200))
}

/// The answer's outcome, processed fraction, time from submission, estimation error and k,
/// and k_max on the task times the cluster measured.
fn read_answer(
    r: &mut LiveResult,
    answer: &AnswerView,
    live: &LiveJob,
    shared: &SharedJob,
    containers: usize,
) {
    r.processed_fraction = answer.processed_fraction;
    // The master's own answer (its `job` line), opaque to the rm: read by type.
    let Some(job) = AnswerJob::of(&answer.answer) else {
        return;
    };
    r.outcome = job.times.outcome.map(|o| o.name().to_owned());
    r.k = u32::try_from(job.k).unwrap_or(u32::MAX);
    // The master's clock: its start is `deadlineSeconds` before the deadline, which is
    // `live.deadline` after the submission.
    let completion = job.times.completion_seconds;
    if let Some(to_deadline) = job.times.deadline_seconds {
        r.completion = Some(live.deadline - to_deadline + completion);
        r.master_start = Some(live.deadline - to_deadline);
    }
    let Some(run) = job.run else {
        return;
    };
    // A cold profile store's first jobs run the task sampler before their phase: a job's
    // worth of work (seconds on a 2-job replay's median), not a start-up.
    if !run.task_sampler_ran {
        r.master_startup = Some((completion - run.job_seconds).max(0.0));
    }
    r.estimate_at_close = run.estimate_at_close;
    r.map_closed_at = run.map_phase_closed_at;
    r.job_seconds = Some(run.job_seconds);
    r.guard_fired = run.guard_fired;
    r.task_sampler_ran = run.task_sampler_ran;
    r.task_startup = run.scheduling_overhead_ms.map(|o| o.p50 / 1000.0);
    // The estimate in force at the answer (re-sent after a kill changed k, else the close's),
    // as the simulator scores it.
    let in_force = run.estimate_at_end.or(r.estimate_at_close);
    let t = run.job_seconds;
    if let Some(estimate) = in_force
        && t >= MEASURABLE
    {
        r.estimation_error = Some((t - estimate).abs() / t);
    }
    r.k_max = Some(measured_k_max(
        shared,
        &run.measured,
        live.byte_scale,
        containers,
    ));
}

/// k_max of the job on the whole cluster by its deadline, its maps' and reduces' times as the
/// cluster measured them: the planned times scaled by the measured mean over the planned mean
/// (maps; reduces at the inputs they had), the planned ones where nothing was measured.
fn measured_k_max(
    shared: &SharedJob,
    measured: &Measured,
    byte_scale: f64,
    containers: usize,
) -> u32 {
    let mut truth = shared.job.truth.clone();
    let planned_maps =
        truth.maps.iter().map(|m| m.duration).sum::<f64>() / truth.maps.len().max(1) as f64;
    let measured_maps = [measured.map_local_seconds, measured.map_remote_seconds]
        .into_iter()
        .flatten()
        .fold(None, |acc: Option<f64>, x| {
            Some(acc.map_or(x, |a| a.max(x)))
        });
    if let Some(m) = measured_maps.filter(|_| planned_maps > 0.0) {
        let ratio = m / planned_maps;
        for map in &mut truth.maps {
            map.duration *= ratio;
        }
    }
    let samples = &measured.reduce_samples;
    let planned: f64 = samples
        .iter()
        // The live reduce read the scaled bytes; the truth's law takes the trace's.
        .map(|&(d, _)| truth.reduce_time.at(d / byte_scale))
        .sum();
    let took: f64 = samples.iter().map(|&(_, s)| s).sum();
    if planned > 0.0 && took > 0.0 {
        truth.reduce_time.a *= took / planned;
    }
    yard_sim::oracle::k_max(&truth, &vec![1.0; containers], shared.deadline)
}
