//! Container tokens (YARN's design): the rm signs every container it allocates with a key it
//! shares with registered nodemanagers — HMAC-SHA256 over the container id, its node, its
//! resources and an expiry — and a nodemanager starts a container only on a valid token for
//! itself. A master cannot forge one, move one to another node, or reuse an expired one.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::auth::{hex, unhex};

/// The secret the rm shares with its nodemanagers. 32 bytes, from the OS's randomness at rm
/// start (the daemon's business, not this crate's).
#[derive(Clone)]
pub struct TokenKey([u8; 32]);

impl TokenKey {
    pub fn new(bytes: [u8; 32]) -> Self {
        TokenKey(bytes)
    }

    /// The key as hex, for handing to a nodemanager at registration.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    pub fn from_hex(s: &str) -> Option<TokenKey> {
        let bytes = unhex(s)?;
        Some(TokenKey(bytes.try_into().ok()?))
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes a key of any length")
    }
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(…)") // never print the secret
    }
}

/// What a token grants: this container, on this node, with these resources, until then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerToken {
    pub container_id: String,
    pub node_id: String,
    pub memory_mb: u64,
    pub vcores: u32,
    /// Milliseconds since the Unix epoch.
    pub expires_ms: i64,
    /// Lower-case hex HMAC-SHA256 of the fields above.
    pub signature: String,
}

/// Why a nodemanager refuses to start a container.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the container has no token; the rm issues one with every allocated container")]
    Missing,
    #[error(
        "the token's signature does not match its fields: it was not issued by this cluster's rm or was altered"
    )]
    Forged,
    #[error("the token is for node {token_node}, not this node ({this_node})")]
    OtherNode {
        token_node: String,
        this_node: String,
    },
    #[error(
        "the token expired at {expired_ms} ms (now {now_ms} ms); ask the rm for a new container"
    )]
    Expired { expired_ms: i64, now_ms: i64 },
}

/// The bytes the signature covers: every field, each framed by its length, so no two
/// different tokens sign the same bytes.
fn message(
    container_id: &str,
    node_id: &str,
    memory_mb: u64,
    vcores: u32,
    expires_ms: i64,
) -> Vec<u8> {
    let mut m = b"yard-container-token-v1".to_vec();
    for field in [container_id.as_bytes(), node_id.as_bytes()] {
        m.extend_from_slice(&(field.len() as u64).to_be_bytes());
        m.extend_from_slice(field);
    }
    m.extend_from_slice(&memory_mb.to_be_bytes());
    m.extend_from_slice(&vcores.to_be_bytes());
    m.extend_from_slice(&expires_ms.to_be_bytes());
    m
}

/// The rm signs a container.
pub fn mint(
    key: &TokenKey,
    container_id: &str,
    node_id: &str,
    memory_mb: u64,
    vcores: u32,
    expires_ms: i64,
) -> ContainerToken {
    let mut mac = key.mac();
    mac.update(&message(
        container_id,
        node_id,
        memory_mb,
        vcores,
        expires_ms,
    ));
    ContainerToken {
        container_id: container_id.to_owned(),
        node_id: node_id.to_owned(),
        memory_mb,
        vcores,
        expires_ms,
        signature: hex(&mac.finalize().into_bytes()),
    }
}

/// A nodemanager checks a token before starting its container: signed by the rm (compared in
/// constant time), for this node, not expired.
pub fn verify(
    key: &TokenKey,
    token: Option<&ContainerToken>,
    this_node: &str,
    now_ms: i64,
) -> Result<(), TokenError> {
    let t = token.ok_or(TokenError::Missing)?;
    let signature = unhex(&t.signature).ok_or(TokenError::Forged)?;
    let mut mac = key.mac();
    mac.update(&message(
        &t.container_id,
        &t.node_id,
        t.memory_mb,
        t.vcores,
        t.expires_ms,
    ));
    mac.verify_slice(&signature)
        .map_err(|_| TokenError::Forged)?;
    if t.node_id != this_node {
        return Err(TokenError::OtherNode {
            token_node: t.node_id.clone(),
            this_node: this_node.to_owned(),
        });
    }
    if now_ms >= t.expires_ms {
        return Err(TokenError::Expired {
            expired_ms: t.expires_ms,
            now_ms,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(b: u8) -> TokenKey {
        TokenKey::new([b; 32])
    }

    fn token() -> ContainerToken {
        mint(
            &key(7),
            "container_1_0001_01_000002",
            "nm-2:8042",
            1024,
            1,
            10_000,
        )
    }

    #[test]
    fn a_minted_token_is_valid_on_its_node_until_it_expires() {
        let t = token();
        assert_eq!(t.signature.len(), 64);
        assert_eq!(verify(&key(7), Some(&t), "nm-2:8042", 9_999), Ok(()));
        assert_eq!(
            verify(&key(7), Some(&t), "nm-2:8042", 10_000),
            Err(TokenError::Expired {
                expired_ms: 10_000,
                now_ms: 10_000
            })
        );
    }

    #[test]
    fn missing_forged_and_misplaced_tokens_are_refused() {
        let t = token();
        assert_eq!(
            verify(&key(7), None, "nm-2:8042", 0),
            Err(TokenError::Missing)
        );
        assert_eq!(
            verify(&key(8), Some(&t), "nm-2:8042", 0),
            Err(TokenError::Forged),
            "another cluster's key"
        );
        let bigger = ContainerToken {
            memory_mb: 65_536,
            ..t.clone()
        };
        assert_eq!(
            verify(&key(7), Some(&bigger), "nm-2:8042", 0),
            Err(TokenError::Forged)
        );
        let garbage = ContainerToken {
            signature: "zz".into(),
            ..t.clone()
        };
        assert_eq!(
            verify(&key(7), Some(&garbage), "nm-2:8042", 0),
            Err(TokenError::Forged)
        );
        let moved = verify(&key(7), Some(&t), "nm-3:8042", 0).unwrap_err();
        assert!(matches!(moved, TokenError::OtherNode { .. }));
        assert!(moved.to_string().contains("nm-2:8042") && moved.to_string().contains("nm-3:8042"));
    }

    #[test]
    fn the_json_has_camel_case_fields_and_refuses_unknown_ones() {
        let json = serde_json::to_string(&token()).unwrap();
        assert!(
            json.contains("\"containerId\"") && json.contains("\"expiresMs\""),
            "{json}"
        );
        let back: ContainerToken = serde_json::from_str(&json).unwrap();
        assert_eq!(back, token());
        let extra = json.replacen('{', "{\"admin\":true,", 1);
        assert!(serde_json::from_str::<ContainerToken>(&extra).is_err());
    }

    #[test]
    fn a_key_travels_as_hex() {
        let k = key(7);
        assert_eq!(TokenKey::from_hex(&k.to_hex()).map(|k| k.0), Some([7; 32]));
        assert!(TokenKey::from_hex("abcd").is_none(), "too short");
        assert!(TokenKey::from_hex("zz").is_none());
    }

    #[test]
    fn the_key_is_never_printed() {
        assert_eq!(format!("{:?}", key(7)), "TokenKey(…)");
    }

    proptest! {
        /// Changing any signed field, or one hex digit of the signature, breaks the token.
        #[test]
        fn any_change_breaks_the_signature(field in 0usize..6, flip in 0usize..64) {
            let mut t = token();
            match field {
                0 => t.container_id.push('x'),
                1 => t.node_id.push('x'),
                2 => t.memory_mb += 1,
                3 => t.vcores += 1,
                4 => t.expires_ms -= 1,
                _ => {
                    let mut s: Vec<char> = t.signature.chars().collect();
                    s[flip] = if s[flip] == '0' { '1' } else { '0' };
                    t.signature = s.into_iter().collect();
                }
            }
            let node = t.node_id.clone();
            prop_assert_eq!(verify(&key(7), Some(&t), &node, 0), Err(TokenError::Forged));
        }
    }
}
