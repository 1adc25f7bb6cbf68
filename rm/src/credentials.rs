//! The files that carry credentials on one host. The cluster secret lives beside the rm's state
//! database (created at first start, readable by its owner only). At every start the rm also
//! leaves, for clients and nodemanagers started by the same OS user on its host, a credentials
//! file (as `~/.kube/config` does): `$YARD_HOME/clusters/rm-<port>.json` (`$YARD_HOME` defaults
//! to `~/.yard`), holding an admin token and a node credential. Across hosts the operator hands
//! tokens over instead (`yard auth token`, then `--token-file` / `YARD_TOKEN`).

use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use yard_wire::auth::ClusterSecret;

/// What a client or nodemanager on the rm's host finds by itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LocalCredentials {
    /// The rm's URL as it advertises itself.
    pub rm: String,
    /// An admin's bearer token.
    pub token: String,
    /// A nodemanager's credential (any node id).
    pub node_credential: String,
}

/// `$YARD_HOME`, else `$HOME/.yard`.
pub fn yard_home() -> Option<PathBuf> {
    match std::env::var_os("YARD_HOME") {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".yard")),
    }
}

/// Host and port of an `http://host:port[/…]` URL.
fn host_port(url: &str) -> Option<(String, u16)> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))?;
    let authority = rest.split('/').next()?;
    let (host, port) = authority.rsplit_once(':')?;
    Some((
        host.trim_matches(|c| c == '[' || c == ']').to_owned(),
        port.parse().ok()?,
    ))
}

fn is_local(host: &str) -> bool {
    host == "localhost"
        || host == "::1"
        || host == "0.0.0.0"
        || host == "::"
        || host.starts_with("127.")
}

/// Where the rm at `url` leaves its local credentials under `home`.
pub(crate) fn file_for(home: &Path, url: &str) -> Option<PathBuf> {
    let (_, port) = host_port(url)?;
    Some(home.join("clusters").join(format!("rm-{port}.json")))
}

/// Writes `creds` for the same OS user: the folder 0700, the file 0600, replaced atomically.
pub(crate) fn write_local(home: &Path, creds: &LocalCredentials) -> io::Result<PathBuf> {
    let path = file_for(home, &creds.rm)
        .ok_or_else(|| io::Error::other(format!("{} is not http://host:port", creds.rm)))?;
    let dir = path.parent().expect("a file in clusters/");
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let partial = path.with_extension("json~");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)?;
    f.write_all(serde_json::to_string_pretty(creds)?.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&partial, &path)?;
    Ok(path)
}

/// The credentials the rm at `url` left on this host, if `url` names this host and they are
/// there (a remote rm's are never guessed).
pub fn find_local(url: &str) -> Option<LocalCredentials> {
    find_local_in(&yard_home()?, url)
}

/// [`find_local`] under the given `$YARD_HOME`.
pub fn find_local_in(home: &Path, url: &str) -> Option<LocalCredentials> {
    let (host, _) = host_port(url)?;
    if !is_local(&host) {
        return None;
    }
    let path = file_for(home, url)?;
    let creds: LocalCredentials = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    Some(creds)
}

/// Reads the cluster secret at `path`, or creates it (32 bytes from the OS, mode 0600) if
/// there is none. A secret others may read is refused: whoever reads it is every user.
pub fn load_or_create_secret(path: &Path) -> io::Result<ClusterSecret> {
    let shown = path.display();
    match std::fs::File::open(path) {
        Ok(mut f) => {
            let mode = f.metadata()?.permissions().mode();
            if mode & 0o077 != 0 {
                return Err(io::Error::other(format!(
                    "the cluster secret {shown} may be read by other users (mode {:o}): run `chmod 600 {shown}`",
                    mode & 0o777
                )));
            }
            let mut text = String::new();
            f.read_to_string(&mut text)?;
            ClusterSecret::from_hex(&text).ok_or_else(|| {
                io::Error::other(format!(
                    "the cluster secret {shown} is not 64 hex digits: restore it, or remove it to make a new one (every token issued so far then stops working)"
                ))
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let mut bytes = [0u8; 32];
            std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
            let secret = ClusterSecret::new(bytes);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| io::Error::other(format!("cannot create {shown}: {e}")))?;
            f.write_all(format!("{}\n", secret.to_hex()).as_bytes())?;
            f.sync_all()?;
            tracing::info!(secret = %shown, "created the cluster secret");
            Ok(secret)
        }
        Err(e) => Err(io::Error::other(format!("cannot read {shown}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_created_once_private_and_refused_when_shared() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("yard-rm.secret");
        let first = load_or_create_secret(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            load_or_create_secret(&path).unwrap().to_hex(),
            first.to_hex()
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = load_or_create_secret(&path).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&path, "nonsense").unwrap();
        let e = load_or_create_secret(&path).unwrap_err().to_string();
        assert!(e.contains("64 hex digits"), "{e}");
    }

    #[test]
    fn local_credentials_are_private_and_found_by_port_on_this_host_only() {
        let home = tempfile::tempdir().unwrap();
        let creds = LocalCredentials {
            rm: "http://127.0.0.1:40123".into(),
            token: "t".into(),
            node_credential: "n".into(),
        };
        let path = write_local(home.path(), &creds).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            file_for(home.path(), "http://localhost:40123/ws/v1"),
            Some(path)
        );
        assert_eq!(host_port("http://[::1]:80"), Some(("::1".into(), 80)));
        assert!(is_local("127.0.0.2") && !is_local("10.0.0.1"));
        assert_eq!(host_port("ftp://x:1"), None);
    }
}
