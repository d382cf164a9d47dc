//! The calibration tables under `plan/data/`: CSV files embedded in the
//! build. Lines starting with `#` are comments (where the figures come
//! from); the first other line names the columns; every other line is a
//! row of numbers.

use std::str::FromStr;

/// One row of an embedded table.
pub struct Row<'a> {
    /// The table's file name under `plan/data/`.
    table: &'a str,
    /// The row's line in the file, from 1.
    line: usize,
    /// Its fields.
    fields: Vec<&'a str>,
}

impl Row<'_> {
    /// Field `i`, parsed. Panics when it does not parse: the tables are part
    /// of the build, and the unit tests read every one.
    pub fn get<T: FromStr>(&self, i: usize) -> T {
        self.fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "plan/data/{} line {}: field {} is missing or not a {}",
                    self.table,
                    self.line,
                    i + 1,
                    std::any::type_name::<T>()
                )
            })
    }
}

/// The rows of the embedded table `table` (its `text`), whose first line
/// that is not a comment must name `columns`. Panics when it does not.
pub fn rows<'a>(table: &'a str, text: &'a str, columns: &str) -> Vec<Row<'a>> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty());
    let header = lines.next().map(|(_, l)| l.trim());
    assert_eq!(
        header,
        Some(columns),
        "plan/data/{table}: the columns are not {columns}"
    );
    lines
        .map(|(i, l)| Row {
            table,
            line: i + 1,
            fields: l.split(',').map(str::trim).collect(),
        })
        .collect()
}

/// A fingerprint of a table's numbers (FNV-1a over each one's 8 bytes,
/// little-endian; a float by its bits), to check a table holds exactly the
/// numbers it held before.
#[cfg(test)]
pub fn fingerprint(numbers: impl IntoIterator<Item = u64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for n in numbers {
        for b in n.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_skip_comments_and_check_the_columns() {
        let text = "# a comment\na,b\n1,2.5\n# another\n\n3, 4\n";
        let rows = rows("t.csv", text, "a,b");
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].get::<u8>(0), rows[0].get::<f64>(1)), (1, 2.5));
        assert_eq!((rows[1].line, rows[1].get::<u64>(1)), (6, 4));
    }

    #[test]
    #[should_panic(expected = "the columns are not a,c")]
    fn other_columns_are_refused() {
        rows("t.csv", "a,b\n1,2\n", "a,c");
    }

    #[test]
    #[should_panic(expected = "t.csv line 2: field 2 is missing")]
    fn a_short_row_is_refused() {
        rows("t.csv", "a,b\n1\n", "a,b")[0].get::<u8>(1);
    }
}
