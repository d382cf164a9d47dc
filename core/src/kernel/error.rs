//! Why the backward pass cannot go on ([`SolveError`]): inputs that are
//! incomplete or inconsistent.

/// Inputs of the backward pass that are incomplete or inconsistent: a
/// damaged or incomplete store.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SolveError {
    /// A non-terminal successor missing from the values that must hold it.
    #[error("successor {state:#018x} of {from:#018x} is missing from layer {sum}")]
    Missing {
        /// The successor.
        state: u64,
        /// The afterstate (or state) it is a successor of.
        from: u64,
        /// Tile sum of the layer that should hold it.
        sum: u32,
    },
    /// An afterstate of a state of the chunk that no response answers.
    #[error(
        "afterstate {afterstate:#018x} of state {state:#018x} has no spawn sums in the responses"
    )]
    NoSums {
        /// The afterstate.
        afterstate: u64,
        /// A state that makes it.
        state: u64,
    },
    /// A state with no legal move inside a chunk of non-terminal states.
    #[error("state {0:#018x} has no legal move but is stored as non-terminal")]
    Terminal(u64),
}
