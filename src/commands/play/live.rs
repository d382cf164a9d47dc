//! A game of `play` shown as text: boards as rows of tiles, with their
//! value under optimal play, and one game shown move by move as it is
//! played.

use std::io::Write;
use std::time::Duration;

use solve2048_core::{Board, Shape};
use solve2048_players::Step;
use solve2048_solution::OptimalPlayer;

/// A game shown live, move by move, until writing fails.
pub(super) struct Live<'a> {
    n: Shape,
    /// Whether to show it (not with `--json`).
    show: bool,
    /// Milliseconds to pause after each move.
    delay: u64,
    /// What the values are (see `Setup::value_name`).
    value_name: String,
    oracle: Option<&'a OptimalPlayer>,
    moves: u64,
    score: u64,
    /// Whether the start is still to be shown.
    first: bool,
    failed: Option<anyhow::Error>,
}

impl<'a> Live<'a> {
    /// A game on boards `n`, shown or not, pausing `delay` ms after each
    /// move; each board's `value_name` from `oracle`, with a store.
    pub(super) fn new(
        n: Shape,
        show: bool,
        delay: u64,
        value_name: String,
        oracle: Option<&'a OptimalPlayer>,
    ) -> Live<'a> {
        Live {
            n,
            show,
            delay,
            value_name,
            oracle,
            moves: 0,
            score: 0,
            first: true,
            failed: None,
        }
    }

    /// Show the line that names the game.
    pub(super) fn header(&mut self, text: &str) {
        self.failed = write_out(text).err();
    }

    /// Show a move and the board `next` it led to (the start first).
    pub(super) fn step(&mut self, step: &Step, next: u64) {
        if !self.show || self.failed.is_some() {
            return;
        }
        let mut text = String::new();
        if self.first {
            self.first = false;
            text.push_str(&format!(
                "\nstart, score 0\n{}",
                grid(step.board, self.n, None)
            ));
            self.value(&mut text, step.board);
        }
        self.moves += 1;
        self.score += u64::from(step.score);
        text.push_str(&format!(
            "\nmove {}: {} (+{}), score {}\n{}",
            self.moves,
            step.dir.name(),
            step.score,
            self.score,
            grid(next, self.n, Some(step.spawn_cell))
        ));
        self.value(&mut text, next);
        if let Err(e) = write_out(&text) {
            self.failed = Some(e);
            return;
        }
        if self.delay > 0 {
            std::thread::sleep(Duration::from_millis(self.delay));
        }
    }

    /// Why showing the game failed, if it did.
    pub(super) fn failed(&mut self) -> Option<anyhow::Error> {
        self.failed.take()
    }

    /// A board's value under optimal play, as a line (none without a store).
    pub(super) fn value_line(&self, board: u64) -> anyhow::Result<String> {
        Ok(match self.oracle {
            Some(o) => format!("{} {:.6}\n", self.value_name, o.value(board)?),
            None => String::new(),
        })
    }

    /// Add `board`'s value line to `text`, or keep why it failed.
    fn value(&mut self, text: &mut String, board: u64) {
        match self.value_line(board) {
            Ok(line) => text.push_str(&line),
            Err(e) => self.failed = Some(e),
        }
    }
}

/// Write `text` to stdout now (a game shown live).
pub(super) fn write_out(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Whether `e` is stdout's reader having gone away.
pub(super) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// The board as rows of right-aligned tiles, `.` for an empty cell, the
/// tile at nybble index `mark` (the one that just appeared) in brackets.
pub(super) fn grid(board: u64, n: Shape, mark: Option<u8>) -> String {
    let mut out = String::new();
    for r in 0..n.rows() {
        for c in 0..n.cols() {
            let e = Board(board).get(r, c);
            let tile = if e == 0 {
                ".".to_string()
            } else {
                (1u32 << e).to_string()
            };
            let cell = if mark == Some((4 * r + c) as u8) {
                format!("[{tile}]")
            } else {
                tile
            };
            out.push_str(&format!("{cell:>8}"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_new_tile_is_in_brackets() {
        let (b, _) = Board::parse("2 . 4 / . 32768 . / . . 2").unwrap();
        assert_eq!(
            grid(b.0, Shape::square(3), Some(8 + 2)),
            "       2       .       4\n       .   32768       .\n       .       .     [2]\n"
        );
    }
}
