//! An error with its causes, as one line of text: `cannot read x.chunk:
//! payload checksum mismatch`. Errors print their own words only and expose
//! their cause as `source()`; this writes the whole chain where an error
//! leaves as text (a task's failure sent to the coordinator, a log line, a
//! report). The binary words the chain for people (`src/human.rs`).

use std::error::Error;
use std::fmt;

/// `error` and each of its causes, joined by `": "`.
pub struct Chain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Chain;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read {object}")]
    struct Read {
        object: &'static str,
        source: std::io::Error,
    }

    #[test]
    fn each_cause_follows_its_error_once() {
        let e = Read {
            object: "x.chunk",
            source: std::io::Error::other("payload checksum mismatch"),
        };
        assert_eq!(
            Chain(&e).to_string(),
            "cannot read x.chunk: payload checksum mismatch"
        );
        let alone = std::io::Error::other("disk full");
        assert_eq!(Chain(&alone).to_string(), "disk full");
    }
}
