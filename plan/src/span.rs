//! A figure's range.

use serde::Serialize;

/// A figure's range: the least and the most it is expected to be; equal
/// where the figure is known.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Span {
    /// The least.
    pub low: f64,
    /// The most.
    pub high: f64,
}

impl Span {
    /// A known figure.
    pub fn exactly(x: f64) -> Span {
        Span { low: x, high: x }
    }

    /// Both ends times `f`.
    pub fn times(self, f: f64) -> Span {
        Span {
            low: self.low * f,
            high: self.high * f,
        }
    }
}
