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
/// registration. 3: a solve task names its chunk's requests, and responses
/// hold sums only (a worker of 2 would misread them). 4: run frames cross
/// as arrays (a coordinator of 3 would refuse a worker's runs).
pub const PROTOCOL_VERSION: u32 = 4;

/// Metadata key of the shared secret on every call.
pub const TOKEN_HEADER: &str = "authorization";
