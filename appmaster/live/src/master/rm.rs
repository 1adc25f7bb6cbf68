//! The rm, as the master calls it: allocate calls, their asks and what their replies grant
//! (runners are started in granted containers by [`super::nodemanager`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use yard_wire::protocol::{AllocateReply, AllocateRequest, TaskCounts};

use super::ALLOCATE_EVERY;
use super::nodemanager::start_runner;
use super::recovery::send_kept;
use super::state::{Shared, State, log_line};
use super::umbilical::with;

/// The rm, as this master's application calls it: `yard_rm::client::RmClient` with the
/// master's credential (`YARD_TOKEN`, good for this application's attempt only) and its
/// application id.
pub(super) struct RmClient {
    pub(super) rm: yard_rm::client::RmClient,
    pub(super) application: String,
}

impl RmClient {
    pub(super) fn new(base: &str, application: &str) -> RmClient {
        RmClient {
            rm: yard_rm::client::RmClient::new(base, std::env::var("YARD_TOKEN").ok()),
            application: application.to_owned(),
        }
    }

    pub(super) fn http(&self) -> &reqwest::Client {
        self.rm.http()
    }

    pub(super) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value> {
        Ok(self.rm.call(method, path, body.as_ref()).await?)
    }

    /// [`Self::call`] that leaves judging the status to the caller.
    pub(super) async fn call_status(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &impl Serialize,
    ) -> Result<(reqwest::StatusCode, Value)> {
        let body = serde_json::to_value(body).context("a request body is JSON")?;
        Ok(self.rm.send(method, path, Some(&body)).await?)
    }

    /// Leaves this master's last exposition (its `/metrics` text) with the rm, which serves it
    /// to Prometheus in the master's place once the process is gone.
    pub(super) async fn leave_final_figures(&self, text: String) -> Result<()> {
        let url = format!(
            "{}/ws/v1/yard/apps/{}/metrics",
            self.rm.base(),
            self.application
        );
        let mut request = self
            .http()
            .put(&url)
            .header(reqwest::header::CONTENT_TYPE, super::metrics::CONTENT_TYPE)
            .body(text);
        if let Some(token) = self.rm.token() {
            request = request.bearer_auth(token);
        }
        let response = request.send().await?;
        let status = response.status();
        if !status.is_success() {
            bail!(
                "{url} answered {status}: {}",
                response.text().await.unwrap_or_default()
            );
        }
        Ok(())
    }

    /// A call on this application's own master routes, `/ws/v1/yard/apps/{id}/{what}`: the
    /// body one of the `yard_wire` types the rm reads there, the reply read as the one it
    /// answers with.
    pub(super) async fn app_call<R: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        what: &str,
        body: &impl Serialize,
    ) -> Result<R> {
        let path = format!("/ws/v1/yard/apps/{}/{what}", self.application);
        let body = serde_json::to_value(body).context("a request body is JSON")?;
        let reply = self.call(method, &path, Some(body)).await?;
        serde_json::from_value(reply)
            .with_context(|| format!("the rm's reply to {what} is not what it answers there"))
    }
}

impl State {
    /// The next allocate call: asks, the releases not yet sent, progress, the job proper's
    /// task counts and the job's type once known.
    pub(super) fn allocate_request(&mut self) -> AllocateRequest {
        let progress = self.progress_for_rm();
        // The job proper's counts (the task sampler's maps are not the job's): the rm sizes
        // a deadline job's quota on the maps and reduces left.
        let tasks = self.job.as_ref().filter(|j| !j.sampler).map(|j| {
            let p = j.policy.progress();
            TaskCounts {
                maps_done: p.maps_done,
                maps_to_run: if p.map_phase_closed { p.k } else { p.maps }.max(p.maps_done),
                reduces_done: p.reduces_done,
            }
        });
        AllocateRequest {
            application_id: self.application.clone(),
            asks: self.asks(),
            releases: std::mem::take(&mut self.releases),
            progress: progress.clamp(0.0, 1.0),
            tasks,
            job_type: self.job_type(),
            job: self.job_progress(),
        }
    }
}

/// Calls the rm every `ALLOCATE_EVERY` (the idle heartbeat), and at once when the state's
/// `call_rm` is woken (the policy wants more containers, gives some back, or the master stops),
/// until stopping: a grant does not wait for the next interval.
pub(super) async fn allocate_loop(shared: Arc<Shared>, rm: Arc<RmClient>, exe: String) {
    let mut unreachable_since: Option<Instant> = None;
    let mut type_sent = None;
    let call_rm = shared.lock().call_rm.clone();
    loop {
        let (request, stopping) = {
            let mut s = shared.lock();
            (s.allocate_request(), s.stopping)
        };
        if request.job_type != type_sent {
            type_sent = request.job_type;
            log_line(&format!(
                "allocate requests carry jobType {}",
                serde_json::to_string(&request.job_type).unwrap_or_default()
            ));
        }
        let releases = request.releases.clone();
        match rm
            .app_call::<AllocateReply>(reqwest::Method::POST, "allocate", &request)
            .await
        {
            Ok(reply) => {
                unreachable_since = None;
                let (fresh, moved) = with(&shared, |s| {
                    let before = s.deadline;
                    (s.allocated(reply), s.deadline != before)
                });
                if moved {
                    // `run_phase` tells the policy now, not at its next tick.
                    shared.changed.notify_waiters();
                }
                for c in fresh {
                    let (shared, rm, exe) = (shared.clone(), rm.clone(), exe.clone());
                    tokio::spawn(async move {
                        let master = shared.lock().url.clone();
                        if let Err(e) = start_runner(rm.http(), &exe, &master, &c).await {
                            log_line(&format!(
                                "container {} could not start: {e:#}",
                                c.container_id
                            ));
                            with(&shared, |s| s.start_failed(&c.container_id));
                        }
                    });
                }
            }
            Err(e) => {
                shared.lock().releases.extend(releases);
                let since = *unreachable_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_secs(60) {
                    log_line(&format!("the rm stays unreachable: {e:#}"));
                }
            }
        }
        send_kept(&shared, &rm).await;
        if stopping {
            return;
        }
        // `notify_one` keeps a permit: a wake during the call above is not lost.
        let _ = tokio::time::timeout(ALLOCATE_EVERY, call_rm.notified()).await;
    }
}
