//! yard-wire: the JSON messages the daemons exchange (NM heartbeats, AM allocate, client REST
//! bodies, the rm's views and replies) and the container tokens that bind them.
//! Data shapes and their checks only; no IO.
//!
//! The surface, by who uses it (every public item here has a user in another crate; the
//! module is the namespace, so `yard_wire::protocol::AllocateRequest` reads as where it
//! travels):
//! - [`protocol`], [`telemetry`], [`token`], [`logs`]: the daemons' own protocols (the rm, the
//!   nodemanager and the masters on both ends);
//! - [`views`], [`hadoop`], [`jobs`], [`replies`]: what the rm answers clients (the rm builds
//!   them, `RmClient` and the CLI read them); [`answer`]: what a MapReduce master's answer
//!   says of its job (the master builds it, the rm keeps it as it came);
//! - [`auth`] (keys, bearer tokens, data grants), [`deadline`] ([`deadline::Deadline`], from
//!   `yard submit` to the master), [`limits`] (the range of everything from outside) and
//!   [`BadInput`]: shared by every process;
//! - `openapi` (feature `openapi`, which only the rm's tests turn on): the rm's OpenAPI
//!   document, generated from these types. Nothing here is for tests alone.

pub mod answer;
pub mod auth;
pub mod deadline;
pub mod hadoop;
pub mod jobs;
pub mod limits;
pub mod logs;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod outputs;
pub mod protocol;
pub mod replies;
pub mod telemetry;
pub mod token;
pub mod views;

/// Input from outside that its sender must fix (a bad flag, file or reply): the CLI's exit
/// code 2, as clap gives a usage error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);
