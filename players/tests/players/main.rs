//! Integration tests of the players: legality and determinism of every
//! player on every board size, exact win probabilities against simulation
//! and against the published optimal values, and playing strength.

mod exact;
mod legality;
mod strength;
