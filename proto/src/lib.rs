//! The wire protocol of solve2048: the `Coordinator` gRPC service that
//! workers pull tasks from and the CLI asks for status, generated at build
//! time from `solve2048.proto`.
//!
//! Tasks and their outputs travel as JSON of the core task model
//! (`solve2048_core::task`), so the task model has a single definition; the
//! messages here carry only what the lease protocol itself needs.
//!
//! Modules:
//! - [`client`]: a client of the service with its token, as workers and
//!   `status` connect to a coordinator.

#![deny(missing_docs)]

pub mod client;

tonic::include_proto!("solve2048.v1");

/// Version of this protocol; a worker of another version is refused at
/// registration. It changes whenever a task, an output or a record crosses
/// in a form an older peer would misread (a solve task naming its chunk's
/// requests, responses of sums only, run frames as arrays).
pub const PROTOCOL_VERSION: u32 = 4;

/// Metadata key of the shared secret on every call.
pub const TOKEN_HEADER: &str = "authorization";
