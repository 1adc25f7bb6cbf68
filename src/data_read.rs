//! `yard data cat|get`: a dataset's blocks read back from the nodemanagers, in the block
//! map's order — a job output's parts (`part-r-00000`, …) or a `yard data put` dataset's
//! blocks. The rm hands out a read grant for the one dataset (any user may read any dataset,
//! as jobs do: datasets are not private in yard); each block is read from its first replica
//! that answers with the bytes the block map recorded (size, SHA-256), so a damaged or stale
//! replica is passed over, and a block no replica serves intact is an error naming each
//! replica's problem.

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, Result, bail};
use yard_wire::protocol::{BlockReplicas, Dataset, sha256_hex};

use crate::client::{Client, Rm};
use crate::sim::BadInput;

/// The dataset's block map and a token that reads its blocks.
fn open(rm: &Rm, name: &str) -> Result<(Dataset, String)> {
    let client = Client::new(rm)?;
    let dataset = client.typed(|rm| rm.dataset(name))?;
    let grant = client.typed(|rm| rm.read_grant(name))?;
    Ok((dataset, grant.token))
}

/// Why a replica's bytes are not the block's, if they are not.
fn mismatch(block: &BlockReplicas, bytes: &[u8]) -> Option<String> {
    if bytes.len() as u64 != block.bytes {
        return Some(format!(
            "{} bytes, the block map says {}",
            bytes.len(),
            block.bytes
        ));
    }
    match &block.sha256 {
        Some(want) if *want != sha256_hex(bytes) => {
            Some("its SHA-256 differs from the block map's".into())
        }
        _ => None,
    }
}

/// One block's bytes from the first replica that serves them intact.
fn read_block(
    http: &reqwest::blocking::Client,
    dataset: &str,
    block: &BlockReplicas,
    token: &str,
) -> Result<Vec<u8>> {
    let mut problems = Vec::new();
    for node in &block.nodes {
        let url = format!("http://{node}/ws/v1/node/blocks/{dataset}/{}", block.block);
        let got = http
            .get(&url)
            .bearer_auth(token)
            .send()
            .map_err(|e| format!("unreachable ({e})"))
            .and_then(|r| {
                let status = r.status();
                if status.is_success() {
                    r.bytes().map_err(|e| format!("cut off ({e})"))
                } else {
                    Err(format!("{status} {}", r.text().unwrap_or_default()))
                }
            });
        match got {
            Ok(bytes) => match mismatch(block, &bytes) {
                None => return Ok(bytes.to_vec()),
                Some(why) => problems.push(format!("{node}: {why}")),
            },
            Err(why) => problems.push(format!("{node}: {why}")),
        }
    }
    bail!(
        "no replica of {dataset}/{} could be read: {}",
        block.block,
        problems.join("; ")
    )
}

/// `yard data cat NAME`: every block, in order, to stdout.
pub(crate) fn cat(rm: &Rm, name: &str) -> Result<()> {
    let (dataset, token) = open(rm, name)?;
    let http = reqwest::blocking::Client::new();
    let mut out = std::io::stdout().lock();
    for block in &dataset.blocks {
        let bytes = read_block(&http, name, block, &token)?;
        out.write_all(&bytes)?;
    }
    out.flush()?;
    Ok(())
}

/// `yard data get NAME DIR`: every block as the file `DIR/<block>`. Nothing is overwritten:
/// a file already there is bad input, found before anything is read.
pub(crate) fn get(rm: &Rm, name: &str, dir: &Path) -> Result<()> {
    let (dataset, token) = open(rm, name)?;
    std::fs::create_dir_all(dir).map_err(|e| BadInput(format!("{}: {e}", dir.display())))?;
    if let Some(there) = dataset
        .blocks
        .iter()
        .map(|b| dir.join(&b.block))
        .find(|p| p.exists())
    {
        return Err(BadInput(format!(
            "{} exists: yard data get does not overwrite (remove it, or name another directory)",
            there.display()
        ))
        .into());
    }
    let http = reqwest::blocking::Client::new();
    let mut bytes_written = 0u64;
    for block in &dataset.blocks {
        let bytes = read_block(&http, name, block, &token)?;
        let path = dir.join(&block.block);
        std::fs::write(&path, &bytes).with_context(|| format!("writing {}", path.display()))?;
        bytes_written += bytes.len() as u64;
    }
    crate::print(&format!(
        "{name}: {} files, {bytes_written} bytes in {}\n",
        dataset.blocks.len(),
        dir.display()
    ))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_is_taken_only_with_the_recorded_size_and_digest() {
        let block = |sha256: Option<String>| BlockReplicas {
            block: "part-r-00000".into(),
            bytes: 3,
            nodes: vec![],
            sha256,
        };
        assert_eq!(mismatch(&block(Some(sha256_hex(b"abc"))), b"abc"), None);
        assert_eq!(mismatch(&block(None), b"xyz"), None, "no digest: size only");
        let short = mismatch(&block(None), b"ab").unwrap();
        assert!(short.contains("2 bytes"), "{short}");
        let other = mismatch(&block(Some(sha256_hex(b"abc"))), b"abd").unwrap();
        assert!(other.contains("SHA-256"), "{other}");
    }
}
