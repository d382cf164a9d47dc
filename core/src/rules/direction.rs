//! The four moves as a type: their action codes (stored in policy chunks)
//! and names.

use serde::{Deserialize, Serialize};

/// A move. The discriminant is the action code stored in policy chunks; in
/// JSON it is its lower-case name (`"left"`), as [`Direction::name`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Direction {
    /// Toward column 0.
    Left = 0,
    /// Toward column n-1.
    Right = 1,
    /// Toward row 0.
    Up = 2,
    /// Toward row n-1.
    Down = 3,
}

impl Direction {
    /// All four, in action-code order (the tie-break order of the solver).
    pub const ALL: [Direction; 4] = [
        Direction::Left,
        Direction::Right,
        Direction::Up,
        Direction::Down,
    ];

    /// The direction with the given action code.
    pub fn from_code(code: u8) -> Option<Direction> {
        Direction::ALL.get(code as usize).copied()
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Left => "left",
            Direction::Right => "right",
            Direction::Up => "up",
            Direction::Down => "down",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_uses_the_lower_case_name() {
        for d in Direction::ALL {
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(json, format!("\"{}\"", d.name()));
            assert_eq!(serde_json::from_str::<Direction>(&json).unwrap(), d);
            assert_eq!(Direction::from_code(d as u8), Some(d));
        }
        assert_eq!(Direction::from_code(4), None);
    }
}
