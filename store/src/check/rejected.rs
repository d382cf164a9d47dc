//! A damaged or missing object a check found, with its reason: what the
//! check and each unit of it report.

use serde::Serialize;

/// A damaged or missing object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Rejected {
    /// The object.
    pub object: String,
    /// What is wrong with it.
    pub reason: String,
}
