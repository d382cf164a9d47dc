//! `solve2048 export`: the solution in analysts' tools. `--format parquet`
//! writes one Parquet file per layer (`OUT/sSSSSS.parquet`, the tile sum on
//! five digits as in the store), one row per stored state in the store's
//! order, one row group per stored chunk: a layer is streamed chunk by
//! chunk, never held whole.
//!
//! Columns (every row a canonical, non-terminal state, as the store keeps
//! them; moves in that orientation):
//! - `board` (UINT64): the board's nybble form, as `query --board 0x...`
//!   reads it;
//! - `c00` .. `c{R-1}{C-1}` (UINT16): the tile on each cell, row-major (R
//!   rows of C cells)
//!   (`cRC`), 0 for empty. One column a cell rather than a list column:
//!   plain integer columns are what pandas and SQL filter on directly
//!   (`WHERE c00 = 64`), where a list becomes an object column of arrays;
//! - `tile_sum` (INT32), `max_tile` (UINT16);
//! - `value` (DOUBLE): the value under optimal play (the win probability,
//!   or the expected score with the score objective);
//! - `best_move` (STRING): `left`, `right`, `up` or `down`, as `query`
//!   names them;
//! - with `--with-moves`, `value_left`, `value_right`, `value_up`,
//!   `value_down` (optional DOUBLE): each move's value, null where the move
//!   is illegal.
//!
//! Each file is written to `NAME.tmp` and renamed, and holds no time or
//! path: a rerun gives the same bytes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, DataType, DoubleType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use parquet::schema::types::{Type, TypePtr};
use solve2048_core::{Board, Direction, Shape};
use solve2048_solution::{ChunkStates, Solution};

use crate::args::SolvedStoreArgs;
use crate::human;
use crate::runtime::{open_existing, runtime};

/// Arguments of `export`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: SolvedStoreArgs,
    /// Output format: parquet (the only one so far).
    #[arg(long)]
    format: String,
    /// Output directory (made if missing): one file per layer, sSSSSS.parquet.
    #[arg(long)]
    out: PathBuf,
    /// Tile sums of the layers to write, both ends included: LO..HI, LO..,
    /// ..HI or one sum (every layer when absent).
    #[arg(long)]
    layers: Option<String>,
    /// Add each move's value (value_left, value_right, value_up, value_down;
    /// null where illegal). Looks up every successor: slower, and keeps the
    /// successor layers' chunks read so far in memory.
    #[arg(long)]
    with_moves: bool,
}

/// The formats `export` writes.
const FORMATS: &[&str] = &["parquet"];

/// Seconds between two progress lines on stderr (none for a short export).
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Run `export`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        FORMATS.contains(&args.format.as_str()),
        "--format {} is not supported (formats: {})",
        args.format,
        FORMATS.join(", ")
    );
    let range = match &args.layers {
        Some(text) => parse_layers(text)?,
        None => (0, u32::MAX),
    };
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store.store)?))?;
    let all = &solution.summary().layers;
    let sums: Vec<u32> = all
        .iter()
        .copied()
        .filter(|s| (range.0..=range.1).contains(s))
        .collect();
    if sums.is_empty() {
        anyhow::bail!(
            "no layer of {} has a tile sum in {} (its layers: {} to {})",
            args.store.store,
            args.layers.as_deref().unwrap_or(".."),
            all.first().copied().unwrap_or(0),
            all.last().copied().unwrap_or(0)
        );
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("making {}", args.out.display()))?;
    let schema = schema(solution.game().shape, args.with_moves)?;
    let started = Instant::now();
    let mut last_progress = started;
    let (mut rows, mut bytes) = (0u64, 0u64);
    for (i, &sum) in sums.iter().enumerate() {
        let path = args.out.join(format!("s{sum:05}.parquet"));
        let (r, b) = rt.block_on(write_layer(
            &solution,
            sum,
            &path,
            schema.clone(),
            args.with_moves,
        ))?;
        rows += r;
        bytes += b;
        // The next layer (sum + 2 or more) looks up layers sum + 4 and up:
        // each move's value, or the values a store left to be recomputed.
        solution.forget_chunks_below(sum + 4);
        if last_progress.elapsed() >= PROGRESS_EVERY {
            last_progress = Instant::now();
            human::eprint_line(&format!(
                "export: layer {}/{} (tile sum {sum}) done, {rows} states, {}, {}",
                i + 1,
                sums.len(),
                human::bytes(bytes),
                human::clock(started.elapsed().as_secs_f64())
            ));
        }
    }
    human::print_out(&format!(
        "wrote {rows} states in {} files ({}) to {}\n",
        sums.len(),
        human::bytes(bytes),
        args.out.display()
    ));
    Ok(())
}

/// The tile sums `LO..HI` (both included), `LO..`, `..HI` or `N`.
fn parse_layers(text: &str) -> anyhow::Result<(u32, u32)> {
    let sum = |s: &str, default: u32| -> anyhow::Result<u32> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(default);
        }
        s.parse().map_err(|_| {
            anyhow::anyhow!("--layers {text:?}: {s:?} is not a tile sum (LO..HI, LO.., ..HI or N)")
        })
    };
    let (lo, hi) = match text.split_once("..") {
        Some((lo, hi)) => (sum(lo, 0)?, sum(hi, u32::MAX)?),
        None => {
            let n = sum(text, 0)?;
            (n, n)
        }
    };
    anyhow::ensure!(lo <= hi, "--layers {text:?} is empty ({lo} > {hi})");
    Ok((lo, hi))
}

/// The files' schema for boards of `n`.
fn schema(n: Shape, with_moves: bool) -> anyhow::Result<TypePtr> {
    let column = |name: &str, physical, logical: Option<LogicalType>, repetition| {
        Type::primitive_type_builder(name, physical)
            .with_repetition(repetition)
            .with_logical_type(logical)
            .build()
            .map(Arc::new)
    };
    let required = Repetition::REQUIRED;
    let u16 = || Some(LogicalType::integer(16, false));
    let mut fields = vec![column(
        "board",
        Physical::INT64,
        Some(LogicalType::integer(64, false)),
        required,
    )?];
    for r in 0..n.rows() {
        for c in 0..n.cols() {
            fields.push(column(
                &format!("c{r}{c}"),
                Physical::INT32,
                u16(),
                required,
            )?);
        }
    }
    fields.push(column("tile_sum", Physical::INT32, None, required)?);
    fields.push(column("max_tile", Physical::INT32, u16(), required)?);
    fields.push(column("value", Physical::DOUBLE, None, required)?);
    fields.push(column(
        "best_move",
        Physical::BYTE_ARRAY,
        Some(LogicalType::String),
        required,
    )?);
    if with_moves {
        for d in Direction::ALL {
            let name = format!("value_{}", d.name());
            fields.push(column(&name, Physical::DOUBLE, None, Repetition::OPTIONAL)?);
        }
    }
    Ok(Arc::new(
        Type::group_type_builder("solve2048_state")
            .with_fields(fields)
            .build()?,
    ))
}

/// Write the layer of tile sum `sum` to `path` (through `path.tmp`): its
/// rows and bytes.
async fn write_layer(
    solution: &Solution,
    sum: u32,
    path: &Path,
    schema: TypePtr,
    with_moves: bool,
) -> anyhow::Result<(u64, u64)> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let file = File::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
    let written = fill(solution, sum, file, schema, with_moves).await;
    let rows = match written {
        Ok(rows) => rows,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.context(format!("writing {}", path.display())));
        }
    };
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    let bytes = std::fs::metadata(path)?.len();
    Ok((rows, bytes))
}

/// Stream a layer into `file`, a row group a chunk: its rows.
async fn fill(
    solution: &Solution,
    sum: u32,
    file: File,
    schema: TypePtr,
    with_moves: bool,
) -> anyhow::Result<u64> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?))
        .set_key_value_metadata(Some(vec![
            KeyValue::new("solve2048.game".into(), solution.game().name()),
            KeyValue::new("solve2048.tile_sum".into(), sum.to_string()),
        ]))
        .build();
    let mut writer = SerializedFileWriter::new(BufWriter::new(file), schema, Arc::new(props))?;
    let n = solution.game().shape;
    let mut rows = 0u64;
    for solved in solution.layer_chunks(sum).await? {
        let chunk = solution.chunk_states(&solved).await?;
        let moves = if with_moves {
            let mut moves = Vec::with_capacity(chunk.states.len());
            for &s in &chunk.states {
                moves.push(solution.action_values(s).await?);
            }
            Some(moves)
        } else {
            None
        };
        write_row_group(&mut writer, n, &chunk, moves.as_deref())?;
        rows += chunk.states.len() as u64;
    }
    let out = writer.into_inner()?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(rows)
}

/// One chunk's rows as a row group, columns in the schema's order.
fn write_row_group<W: Write + Send>(
    writer: &mut SerializedFileWriter<W>,
    n: Shape,
    chunk: &ChunkStates,
    moves: Option<&[[Option<f64>; 4]]>,
) -> anyhow::Result<()> {
    let tile = |e: u8| if e == 0 { 0 } else { 1i32 << e };
    let states = &chunk.states;
    let mut group = writer.next_row_group()?;
    let boards: Vec<i64> = states.iter().map(|&s| s as i64).collect();
    column::<Int64Type, W>(&mut group, &boards, None)?;
    for r in 0..n.rows() {
        for c in 0..n.cols() {
            let cells: Vec<i32> = states.iter().map(|&s| tile(Board(s).get(r, c))).collect();
            column::<Int32Type, W>(&mut group, &cells, None)?;
        }
    }
    let sums: Vec<i32> = states.iter().map(|&s| Board(s).tile_sum() as i32).collect();
    column::<Int32Type, W>(&mut group, &sums, None)?;
    let maxes: Vec<i32> = states
        .iter()
        .map(|&s| tile(Board(s).max_exponent()))
        .collect();
    column::<Int32Type, W>(&mut group, &maxes, None)?;
    column::<DoubleType, W>(&mut group, &chunk.values, None)?;
    let best: Vec<ByteArray> = chunk
        .actions
        .iter()
        .map(|d| ByteArray::from(d.name()))
        .collect();
    column::<ByteArrayType, W>(&mut group, &best, None)?;
    if let Some(moves) = moves {
        for d in Direction::ALL {
            let of = |m: &[Option<f64>; 4]| m[d as usize];
            let values: Vec<f64> = moves.iter().filter_map(of).collect();
            let defined: Vec<i16> = moves.iter().map(|m| of(m).is_some() as i16).collect();
            column::<DoubleType, W>(&mut group, &values, Some(&defined))?;
        }
    }
    group.close()?;
    Ok(())
}

/// Write the next column of a row group: its values, and for an optional
/// column each row's definition level (1 present, 0 null).
fn column<T: DataType, W: Write + Send>(
    group: &mut SerializedRowGroupWriter<'_, W>,
    values: &[T::T],
    defined: Option<&[i16]>,
) -> anyhow::Result<()> {
    let mut column = group
        .next_column()?
        .context("the schema has fewer columns than written")?;
    column.typed::<T>().write_batch(values, defined, None)?;
    column.close()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_ranges_include_both_ends() {
        assert_eq!(parse_layers("4..20").unwrap(), (4, 20));
        assert_eq!(parse_layers("8").unwrap(), (8, 8));
        assert_eq!(parse_layers("10..").unwrap(), (10, u32::MAX));
        assert_eq!(parse_layers("..6").unwrap(), (0, 6));
        let e = parse_layers("20..4").unwrap_err().to_string();
        assert!(e.contains("is empty (20 > 4)"), "{e}");
        let e = parse_layers("4..x").unwrap_err().to_string();
        assert!(e.contains("\"x\" is not a tile sum"), "{e}");
    }

    #[test]
    fn the_schema_names_one_column_a_cell_in_row_major_order() {
        let names = |s: &TypePtr| -> Vec<String> {
            s.get_fields()
                .iter()
                .map(|f| f.name().to_string())
                .collect()
        };
        let s = names(&schema(Shape::square(2), false).unwrap());
        assert_eq!(
            s,
            [
                "board",
                "c00",
                "c01",
                "c10",
                "c11",
                "tile_sum",
                "max_tile",
                "value",
                "best_move"
            ]
        );
        let m = names(&schema(Shape::square(3), true).unwrap());
        assert_eq!(m.len(), 1 + 9 + 4 + 4);
        assert_eq!(
            &m[m.len() - 4..],
            ["value_left", "value_right", "value_up", "value_down"]
        );
    }
}
