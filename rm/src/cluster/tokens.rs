//! The rm's keys and the credentials it hands out: a node's container-token key at
//! registration, the bearer key callers' tokens are checked with, data and scan grants. (A
//! container's own token is signed where it is granted, in `allocation`.)

use yard_wire::auth::BearerKey;
use yard_wire::protocol::Registered;

use super::Cluster;

impl Cluster {
    /// What an authenticated nodemanager gets at registration: its own container-token key
    /// and the data key.
    pub fn registration(&self, node_id: &str) -> Registered {
        Registered {
            container_key: self.secret.container_key(node_id).to_hex(),
            data_key: self.secret.data_key().to_hex(),
        }
    }

    /// The bearer key the REST layer checks callers' tokens with.
    pub fn bearer_key(&self) -> &BearerKey {
        &self.bearer
    }

    /// A data-plane grant signed with the cluster's data key (nodemanagers check it).
    pub fn data_token(&self, grant: &yard_wire::auth::DataGrant) -> String {
        self.secret.data_key().issue(grant)
    }

    /// The credential of `host`'s shared scan of `dataset` (`ClusterSecret::scan_token`).
    pub fn scan_token(&self, dataset: &str, host: &str) -> String {
        self.secret.scan_token(dataset, host)
    }
}
