//! yard-wire: the JSON messages the daemons exchange (NM heartbeats, AM allocate, client REST
//! bodies, the rm's views and replies) and the container tokens that bind them.
//! Data shapes and their checks only; no IO.

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
