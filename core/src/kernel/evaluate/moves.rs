//! A player's move probabilities on one board ([`Moves`]): the numbers
//! the evaluation kernels take for a player.

/// A player's move probabilities on one board, by action code (left,
/// right, up, down); 0 for a move it never plays.
pub type Moves = [f64; 4];
