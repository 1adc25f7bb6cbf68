//! Where the CLI's credentials come from, and `yard auth token`. A client's bearer token is,
//! in order: `YARD_TOKEN` (masters get theirs this way from the rm), the file `--token-file`
//! names (or `YARD_TOKEN_FILE`), the credentials the rm left for its own OS user on this host
//! (`$YARD_HOME/clusters/rm-<port>.json`). A nodemanager's credential likewise:
//! `YARD_NM_CREDENTIAL`, `--credential-file`, the same local file.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::client::{Client, Rm};
use crate::sim::BadInput;

fn from_file(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let token = text.trim().to_owned();
    anyhow::ensure!(
        !token.is_empty(),
        BadInput(format!("the token file {} is empty", path.display()))
    );
    Ok(token)
}

fn env_token(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
}

/// The caller's bearer token for the rm at `rm_url`, if it has one.
pub(crate) fn bearer_for(rm_url: &str, token_file: Option<&Path>) -> Result<Option<String>> {
    if let Some(t) = env_token("YARD_TOKEN") {
        return Ok(Some(t));
    }
    if let Some(path) = token_file {
        return from_file(path).map(Some);
    }
    Ok(yard_rm::credentials::find_local(rm_url).map(|c| c.token))
}

/// A nodemanager's credential for the rm at `rm_url`.
pub(crate) fn node_credential_for(rm_url: &str, file: Option<&Path>) -> Result<String> {
    if let Some(t) = env_token("YARD_NM_CREDENTIAL") {
        return Ok(t);
    }
    if let Some(path) = file {
        return from_file(path);
    }
    yard_rm::credentials::find_local(rm_url)
        .map(|c| c.node_credential)
        .ok_or_else(|| {
            BadInput(format!(
                "no node credential for {rm_url}: start the nodemanager as the rm's OS user on the rm's host, or pass --credential-file FILE (or YARD_NM_CREDENTIAL); an admin prints one with `yard auth token --node HOST:PORT`"
            ))
            .into()
        })
}

/// What to tell a caller the rm turned away for want of a credential.
pub(crate) const NO_CREDENTIAL_HINT: &str = "run this as the rm's OS user on its host, or pass --token-file FILE (or YARD_TOKEN); an admin prints a user's token with `yard auth token --user NAME`";

#[derive(Subcommand)]
pub(crate) enum AuthCommand {
    /// Print a bearer token: your own (for curl or a YARN client: `Authorization: Bearer …`),
    /// or, as an admin, a user's (--user), one nodemanager's credential (--node) or the
    /// cluster's read-only scrape token for Prometheus (--scrape).
    Token(TokenArgs),
}

#[derive(Args)]
pub(crate) struct TokenArgs {
    #[command(flatten)]
    rm: Rm,
    /// Issue a token for this user (admins only).
    #[arg(long, conflicts_with_all = ["node", "scrape"])]
    user: Option<String>,
    /// Issue a credential for the nodemanager with this id, HOST:PORT (admins only).
    #[arg(long, conflicts_with = "scrape")]
    node: Option<String>,
    /// Issue the cluster's scrape token (admins only): it reads the rm's scrape targets, the
    /// masters' `/metrics` and the final figures the rm keeps, nothing else. Prometheus sends
    /// it (`grafana/prometheus.yml`'s `credentials_file`).
    #[arg(long)]
    scrape: bool,
    /// Write the token to this file (created with mode 0600) instead of printing it.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn run(command: AuthCommand) -> Result<()> {
    let AuthCommand::Token(args) = command;
    let client = Client::new(&args.rm)?;
    let token = match (&args.user, &args.node) {
        (None, None) if !args.scrape => {
            // Checked with the rm, so a stale or foreign token is said now, not at first use.
            client.call(reqwest::Method::GET, "/ws/v1/yard/auth/whoami", None)?;
            client.token().map(str::to_owned).ok_or_else(|| {
                anyhow::Error::from(BadInput(format!(
                    "no credential for {}: {NO_CREDENTIAL_HINT}",
                    args.rm.rm
                )))
            })?
        }
        (user, node) => {
            let body = json!({ "user": user, "node": node, "scrape": args.scrape });
            client.typed(|rm| rm.issue_token(&body))?.token
        }
    };
    match &args.out {
        Some(path) => write_token(path, &token)?,
        None => crate::print(&format!("{token}\n"))?,
    }
    Ok(())
}

/// Writes `token` to `path`, readable by its owner only (mode 0600).
pub(crate) fn write_token(path: &Path, token: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(f, "{token}")?;
    Ok(())
}
