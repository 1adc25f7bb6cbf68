//! yard-wire: the JSON messages the daemons exchange (NM heartbeats, AM allocate, client REST
//! bodies) and the container tokens that bind them. Data shapes and their checks only; no IO.

pub mod auth;
pub mod limits;
pub mod protocol;
pub mod telemetry;
pub mod token;
