//! Who may call what. One cluster secret (32 random bytes the rm creates at first start and
//! keeps in a file only its owner can read) and keys derived from it, each for one purpose:
//!
//! - the **bearer key** signs the rm's bearer tokens ([`Principal`]: an admin, a user, one
//!   attempt of one application's master, a nodemanager). Only the rm holds it.
//! - a **container key per node** signs that node's container tokens (`crate::token`); the rm
//!   hands a node its own key at registration, so a node can forge tokens for itself only.
//! - the **data key** signs the data plane's grants ([`DataGrant`]: a job token that opens one
//!   application's shuffle output and the datasets' blocks, as Hadoop's job token does; an
//!   upload grant for one dataset). Every registered nodemanager holds it, to check them.
//!
//! A token is `PREFIX.HEX(JSON claims).HEX(HMAC-SHA256)`: readable by anyone, valid only when
//! signed with the right key (checked in constant time). Pure functions, no IO.

use hmac::{Hmac, Mac};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::token::TokenKey;

/// What every caller of the rm proves it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Principal {
    /// May do anything, as any user (the operator; the rm writes this token for the OS user
    /// that runs it).
    Admin { user: String },
    /// Owns the applications and datasets it submits.
    User { user: String },
    /// One attempt of one application's master: it may act for that application only, and only
    /// while that attempt is the current one.
    Master { app: String, attempt: u32 },
    /// A nodemanager: `node` is the node id it may register as, or `None` for any (the
    /// credential the rm leaves for nodemanagers started by its own OS user).
    Node { node: Option<String> },
    /// Prometheus: reads the scrape targets and metrics (the rm's targets list and the final
    /// figures it keeps, a master's `/metrics`), nothing else. Issued by an admin
    /// (`yard auth token --scrape`).
    Scraper,
}

impl Principal {
    /// The user this principal acts as, for ownership (`None`: masters and nodes act for no user).
    pub fn user(&self) -> Option<&str> {
        match self {
            Principal::Admin { user } | Principal::User { user } => Some(user),
            Principal::Master { .. } | Principal::Node { .. } | Principal::Scraper => None,
        }
    }

    pub fn is_admin(&self) -> bool {
        matches!(self, Principal::Admin { .. })
    }

    /// Whether this principal may act on something `owner` owns (admins on everything).
    pub fn owns(&self, owner: &str) -> bool {
        self.is_admin() || self.user() == Some(owner)
    }
}

/// What a data-plane token lets its bearer do on a nodemanager.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum DataGrant {
    /// The job token of one application: read and delete its shuffle output, read blocks.
    /// Every container of the application gets it from its nodemanager (`YARD_JOB_TOKEN`).
    Job { app: String },
    /// Write the blocks of one dataset until `expires_ms` (the rm grants it to the dataset's
    /// owner for `yard data put`).
    Upload { dataset: String, expires_ms: i64 },
    /// Read the blocks of one dataset until `expires_ms` (the rm grants it to whoever may
    /// read the dataset, for `yard data cat|get`).
    Read { dataset: String, expires_ms: i64 },
}

/// Why a token was refused. The messages say what to do; none repeats the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("no credential: send `Authorization: Bearer <token>` (`yard auth token` prints yours)")]
    Missing,
    #[error("the Authorization header is not `Bearer <token>`")]
    NotBearer,
    #[error("the token is not a yard {what} token (it should start with `{prefix}.`)")]
    WrongKind {
        what: &'static str,
        prefix: &'static str,
    },
    #[error(
        "the token's signature does not match: it was not issued by this cluster, or was altered"
    )]
    Forged,
    #[error("the grant expired at {expired_ms} ms (now {now_ms} ms); ask the rm for a new one")]
    Expired { expired_ms: i64, now_ms: i64 },
}

const BEARER_PREFIX: &str = "yard1";
const DATA_PREFIX: &str = "yarddata1";

/// The secret everything else is derived from.
#[derive(Clone)]
pub struct ClusterSecret([u8; 32]);

impl std::fmt::Debug for ClusterSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClusterSecret(…)") // never print the secret
    }
}

type HmacSha256 = Hmac<Sha256>;

fn mac(key: &[u8]) -> HmacSha256 {
    HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length")
}

impl ClusterSecret {
    pub fn new(bytes: [u8; 32]) -> Self {
        ClusterSecret(bytes)
    }

    /// The secret as its file holds it: 64 hex digits.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    pub fn from_hex(s: &str) -> Option<ClusterSecret> {
        Some(ClusterSecret(unhex(s.trim())?.try_into().ok()?))
    }

    /// A key for one purpose: HMAC(secret, purpose). Knowing one derived key tells nothing of
    /// the secret or of the others.
    fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut m = mac(&self.0);
        m.update(b"yard-derive-v1\0");
        m.update(purpose.as_bytes());
        m.finalize().into_bytes().into()
    }

    pub fn bearer_key(&self) -> BearerKey {
        BearerKey(self.derive("bearer"))
    }

    /// The key that signs (and on its node, checks) the container tokens of `node_id`.
    pub fn container_key(&self, node_id: &str) -> TokenKey {
        TokenKey::new(self.derive(&format!("container\0{node_id}")))
    }

    pub fn data_key(&self) -> DataKey {
        DataKey(self.derive("data"))
    }

    /// The credential of the shared scan of `dataset` that application `host`'s master runs:
    /// the rm hands it to the host and to every job it lets ride, and the host asks it of the
    /// riders on its scan routes. Riders are other applications' masters, so the host's job
    /// token is not theirs to have; this opens that one scan only.
    pub fn scan_token(&self, dataset: &str, host: &str) -> String {
        let mut m = mac(&self.derive("scan"));
        m.update(dataset.as_bytes());
        m.update(b"\0");
        m.update(host.as_bytes());
        format!("{SCAN_PREFIX}.{}", hex(&m.finalize().into_bytes()))
    }
}

const SCAN_PREFIX: &str = "yardscan1";

/// Whether a presented token is the one expected, in time independent of where they differ
/// (a master holds its job token and compares; it has no key to verify one with).
pub fn same_token(presented: &str, expected: &str) -> bool {
    use subtle::ConstantTimeEq as _;
    presented.len() == expected.len() && bool::from(presented.as_bytes().ct_eq(expected.as_bytes()))
}

/// Signs and checks the rm's bearer tokens.
#[derive(Clone)]
pub struct BearerKey([u8; 32]);

/// Signs and checks data-plane grants; nodemanagers hold it.
#[derive(Clone)]
pub struct DataKey([u8; 32]);

impl std::fmt::Debug for DataKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DataKey(…)")
    }
}

impl DataKey {
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    pub fn from_hex(s: &str) -> Option<DataKey> {
        Some(DataKey(unhex(s)?.try_into().ok()?))
    }

    pub fn issue(&self, grant: &DataGrant) -> String {
        sign(&self.0, DATA_PREFIX, grant)
    }

    /// The job token of application `app`.
    pub fn job_token(&self, app: &str) -> String {
        self.issue(&DataGrant::Job { app: app.into() })
    }

    /// The grant a token carries, if this key signed it and it has not expired.
    pub fn verify(&self, token: &str, now_ms: i64) -> Result<DataGrant, AuthError> {
        let grant: DataGrant = open(&self.0, DATA_PREFIX, "data-plane", token)?;
        if let DataGrant::Upload { expires_ms, .. } | DataGrant::Read { expires_ms, .. } = grant
            && now_ms >= expires_ms
        {
            return Err(AuthError::Expired {
                expired_ms: expires_ms,
                now_ms,
            });
        }
        Ok(grant)
    }
}

impl BearerKey {
    pub fn issue(&self, principal: &Principal) -> String {
        sign(&self.0, BEARER_PREFIX, principal)
    }

    pub fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        open(&self.0, BEARER_PREFIX, "rm", token)
    }
}

/// The token in an `Authorization` header's value: `Bearer <token>` (the scheme in any case).
pub fn bearer_of(header: Option<&str>) -> Result<&str, AuthError> {
    let value = header.ok_or(AuthError::Missing)?.trim();
    let (scheme, token) = value.split_once(' ').ok_or(AuthError::NotBearer)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(AuthError::NotBearer);
    }
    Ok(token.trim())
}

fn sign<T: Serialize>(key: &[u8], prefix: &str, claims: &T) -> String {
    let payload = hex(&serde_json::to_vec(claims).expect("claims serialize"));
    let mut m = mac(key);
    m.update(prefix.as_bytes());
    m.update(b".");
    m.update(payload.as_bytes());
    format!("{prefix}.{payload}.{}", hex(&m.finalize().into_bytes()))
}

fn open<T: DeserializeOwned>(
    key: &[u8],
    prefix: &'static str,
    what: &'static str,
    token: &str,
) -> Result<T, AuthError> {
    let mut parts = token.split('.');
    let (Some(p), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(AuthError::WrongKind { what, prefix });
    };
    if p != prefix {
        return Err(AuthError::WrongKind { what, prefix });
    }
    let signature = unhex(signature).ok_or(AuthError::Forged)?;
    let mut m = mac(key);
    m.update(prefix.as_bytes());
    m.update(b".");
    m.update(payload.as_bytes());
    m.verify_slice(&signature).map_err(|_| AuthError::Forged)?;
    // Signed by us, so well-formed unless the claims' shape changed between versions.
    let bytes = unhex(payload).ok_or(AuthError::Forged)?;
    serde_json::from_slice(&bytes).map_err(|_| AuthError::Forged)
}

pub(crate) use crate::protocol::hex;

pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn secret(b: u8) -> ClusterSecret {
        ClusterSecret::new([b; 32])
    }

    #[test]
    fn a_bearer_token_names_its_principal_and_only_its_cluster_accepts_it() {
        let alice = Principal::User {
            user: "alice".into(),
        };
        let token = secret(1).bearer_key().issue(&alice);
        assert!(token.starts_with("yard1."), "{token}");
        assert_eq!(secret(1).bearer_key().verify(&token), Ok(alice));
        assert_eq!(
            secret(2).bearer_key().verify(&token),
            Err(AuthError::Forged)
        );
    }

    #[test]
    fn changing_the_claims_breaks_the_token() {
        let key = secret(1).bearer_key();
        let token = key.issue(&Principal::User {
            user: "alice".into(),
        });
        let forged_claims = hex(br#"{"kind":"admin","user":"alice"}"#);
        let parts: Vec<&str> = token.split('.').collect();
        let forged = format!("{}.{forged_claims}.{}", parts[0], parts[2]);
        assert_eq!(key.verify(&forged), Err(AuthError::Forged));
    }

    #[test]
    fn data_and_bearer_tokens_are_not_interchangeable() {
        let s = secret(3);
        let job = s.data_key().job_token("application_1_0001");
        assert!(matches!(
            s.bearer_key().verify(&job),
            Err(AuthError::WrongKind { .. })
        ));
        let admin = s
            .bearer_key()
            .issue(&Principal::Admin { user: "op".into() });
        assert!(matches!(
            s.data_key().verify(&admin, 0),
            Err(AuthError::WrongKind { .. })
        ));
        assert_eq!(
            s.data_key().verify(&job, 0),
            Ok(DataGrant::Job {
                app: "application_1_0001".into()
            })
        );
    }

    #[test]
    fn an_upload_grant_expires() {
        let key = secret(4).data_key();
        let grant = DataGrant::Upload {
            dataset: "logs".into(),
            expires_ms: 1_000,
        };
        let token = key.issue(&grant);
        assert_eq!(key.verify(&token, 999), Ok(grant));
        assert_eq!(
            key.verify(&token, 1_000),
            Err(AuthError::Expired {
                expired_ms: 1_000,
                now_ms: 1_000
            })
        );
        let read = key.issue(&DataGrant::Read {
            dataset: "logs".into(),
            expires_ms: 1_000,
        });
        assert!(key.verify(&read, 999).is_ok());
        assert!(matches!(
            key.verify(&read, 1_000),
            Err(AuthError::Expired { .. })
        ));
    }

    #[test]
    fn derived_keys_differ_by_purpose_and_node() {
        let s = secret(5);
        assert_ne!(
            s.container_key("n1:1").to_hex(),
            s.container_key("n2:1").to_hex()
        );
        assert_ne!(s.container_key("n1:1").to_hex(), s.data_key().to_hex());
        assert_ne!(s.data_key().to_hex(), hex(&s.bearer_key().0));
    }

    #[test]
    fn secrets_and_keys_round_trip_as_hex_and_never_print() {
        let s = secret(6);
        assert_eq!(
            ClusterSecret::from_hex(&(s.to_hex() + "\n")).map(|x| x.0),
            Some([6; 32])
        );
        assert!(ClusterSecret::from_hex("abcd").is_none());
        assert_eq!(format!("{s:?}"), "ClusterSecret(…)");
        assert_eq!(format!("{:?}", s.data_key()), "DataKey(…)");
        let d = s.data_key();
        assert_eq!(DataKey::from_hex(&d.to_hex()).map(|k| k.0), Some(d.0));
    }

    #[test]
    fn the_authorization_header_is_read_as_bearer() {
        assert_eq!(bearer_of(Some("Bearer abc")), Ok("abc"));
        assert_eq!(bearer_of(Some("bearer  abc ")), Ok("abc"));
        assert_eq!(bearer_of(None), Err(AuthError::Missing));
        assert_eq!(bearer_of(Some("Basic abc")), Err(AuthError::NotBearer));
        assert_eq!(bearer_of(Some("Bearer ")), Err(AuthError::NotBearer));
    }

    #[test]
    fn ownership() {
        let alice = Principal::User {
            user: "alice".into(),
        };
        assert!(alice.owns("alice") && !alice.owns("bob"));
        assert!(Principal::Admin { user: "op".into() }.owns("bob"));
        let master = Principal::Master {
            app: "a".into(),
            attempt: 1,
        };
        assert!(!master.owns("alice"));
    }

    #[test]
    fn a_scan_token_opens_one_scan_of_one_host_and_tokens_compare_whole() {
        let s = secret(8);
        let t = s.scan_token("logs", "application_1_0001");
        assert!(t.starts_with("yardscan1."), "{t}");
        assert_eq!(t, s.scan_token("logs", "application_1_0001"));
        assert_ne!(t, s.scan_token("logs", "application_1_0002"));
        assert_ne!(t, s.scan_token("logs2", "application_1_0001"));
        assert_ne!(t, secret(9).scan_token("logs", "application_1_0001"));
        assert!(same_token(&t, &t.clone()));
        assert!(!same_token(&t[..t.len() - 1], &t));
        assert!(!same_token("", &t));
        assert!(!same_token(
            &s.scan_token("logs2", "application_1_0001"),
            &t
        ));
    }

    proptest! {
        /// No string that is not a token this key issued opens as one.
        #[test]
        fn garbage_never_verifies(s in ".{0,200}") {
            prop_assert!(secret(7).bearer_key().verify(&s).is_err());
            prop_assert!(secret(7).data_key().verify(&s, 0).is_err());
        }
    }
}
