//! `yard logs APP`: YARN's `yarn logs -applicationId`. Prints each of an application's
//! containers' log files under a header line, read through the rm: from its aggregated store
//! once a container ended, from the container's nodemanager while it runs. Containers whose
//! logs are missing (their node was lost before it uploaded them) are named, with why. Owner
//! and admins only; a refusal (unknown application, someone else's) is bad input, exit 2.

use anyhow::Result;
use clap::Args;
use yard_wire::logs::{AppLogs, LogFile, LogSource};

use crate::client::{Client, Rm};
use crate::sim::BadInput;

#[derive(Args)]
pub(crate) struct LogsArgs {
    #[command(flatten)]
    rm: Rm,
    /// The application id (application_…).
    id: String,
    /// Only this container's logs (container_…).
    #[arg(long, value_name = "ID")]
    container: Option<String>,
    /// Only the last N lines of each file.
    #[arg(long, value_name = "N")]
    tail: Option<usize>,
}

pub(crate) fn logs(args: LogsArgs) -> Result<()> {
    let client = Client::new(&args.rm)?;
    let listing = client.typed(|rm| rm.app_logs(&args.id, args.container.as_deref()))?;
    if let Some(c) = &args.container
        && listing.files.is_empty()
        && listing.missing.is_empty()
    {
        return Err(BadInput(format!(
            "the rm knows no logs of container {c} of {} (`yard logs {}` lists its containers)",
            args.id, args.id
        ))
        .into());
    }
    print_logs(&client, &listing, |_| true, args.tail)?;
    if listing.files.is_empty() && listing.missing.is_empty() {
        eprintln!(
            "yard: the rm knows no container logs of {}: none has started yet, or they passed the rm's --log-aggregation-retain-seconds",
            args.id
        );
    }
    Ok(())
}

/// The header line of a file: its container, node and name, and where its text is from.
fn header(f: &LogFile) -> String {
    let mut notes = vec![format!("{} bytes", f.bytes)];
    if f.master {
        notes.push("master".into());
    }
    if f.cut {
        notes.push("cut to the aggregation cap".into());
    }
    if f.source == LogSource::Node {
        notes.push("from its nodemanager".into());
    }
    format!(
        "==> {} on {}: {} ({}) <==\n",
        f.container_id,
        f.node_id,
        f.file,
        notes.join(", ")
    )
}

/// Prints the files `wanted` picks, each under its header (the last `tail` lines of each if
/// given), then the containers whose logs are missing.
pub(crate) fn print_logs(
    client: &Client,
    listing: &AppLogs,
    wanted: impl Fn(&LogFile) -> bool,
    tail: Option<usize>,
) -> Result<()> {
    let id = &listing.application_id;
    for f in listing.files.iter().filter(|f| wanted(f)) {
        let bytes = client.typed(|rm| rm.log_text(id, &f.container_id, &f.file, None))?;
        let text = String::from_utf8_lossy(&bytes);
        let text = match tail {
            Some(n) => last_lines(&text, n),
            None => &text,
        };
        let mut out = header(f);
        out.push_str(text);
        if !text.is_empty() && !text.ends_with('\n') {
            out.push('\n');
        }
        crate::print(&out)?;
    }
    for m in &listing.missing {
        crate::print(&format!(
            "==> {} on {}: logs missing: {} <==\n",
            m.container_id, m.node_id, m.reason
        ))?;
    }
    Ok(())
}

/// The last `n` lines of `text` (a final newline ends the last line, it does not start one).
fn last_lines(text: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    match body.rmatch_indices('\n').nth(n - 1) {
        Some((i, _)) => &text[i + 1..],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(last_lines("a\nb\nc", 2), "b\nc");
        assert_eq!(last_lines("a\nb\n", 5), "a\nb\n");
        assert_eq!(last_lines("a\n", 0), "");
    }
}
