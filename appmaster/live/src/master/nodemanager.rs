//! The nodemanagers, as the master calls them: a runner started in each granted container
//! (`yard mr-runner`, through the node's `/ws/v1/node/containers`).

use anyhow::{Result, bail};
use yard_wire::protocol::{Allocated, StartContainer};

/// Starts a runner in a granted container.
pub(super) async fn start_runner(
    http: &reqwest::Client,
    exe: &str,
    master: &str,
    c: &Allocated,
) -> Result<()> {
    let start = StartContainer {
        token: Some(c.token.clone()),
        command: vec![
            exe.to_owned(),
            "mr-runner".into(),
            "--master".into(),
            master.to_owned(),
            "--container".into(),
            c.container_id.clone(),
        ],
        env: Default::default(),
    };
    let url = format!("{}/ws/v1/node/containers", c.node_http_address);
    let response = http.post(&url).json(&start).send().await?;
    if !response.status().is_success() {
        bail!(
            "{url} answered {}: {}",
            response.status(),
            response.text().await.unwrap_or_default()
        );
    }
    Ok(())
}
