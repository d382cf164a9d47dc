//! The state-space figure as a self-contained SVG: states by tile sum with one
//! series per max tile, on a linear and a log scale (like the published
//! enumeration figures), and the distribution of values in each layer.
//! `solve2048 plot` writes it (or rasterises it to PNG) and `serve` shows it.
//!
//! Tick labels are plain numbers (`67,080`; `6.7e7` only past ten million),
//! and the value map's columns tile the plot area exactly (each layer's
//! column spans one tile-sum step around it), so that no bar reaches the
//! legend however few layers a game has.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::stats::{LayerStats, VALUE_BINS};

/// Width of the figure.
pub const W: f64 = 900.0;
const PANEL_H: f64 = 300.0;
/// Left edge of the plot area.
pub const LEFT: f64 = 80.0;
/// Width right of the plot area, for the legends.
pub const RIGHT: f64 = 150.0;
const TOP: f64 = 40.0;
const GAP: f64 = 70.0;
const COLORS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;")
}

/// Render the figure for `game` from its layer statistics.
pub fn svg(game: &str, layers: &[LayerStats]) -> String {
    let mut series: BTreeMap<u8, Vec<(u32, u64)>> = BTreeMap::new();
    for l in layers {
        for &(m, n) in &l.parts {
            series.entry(m).or_default().push((l.sum, n));
        }
    }
    let frame = Frame::new(layers, &series);
    let height = TOP + 3.0 * PANEL_H + 3.0 * GAP;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" font-family="DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{}" y="22" font-size="16" text-anchor="middle">{}: states by tile sum and max tile</text>"#,
        W / 2.0,
        esc(game)
    );
    for (panel, log) in [(0, false), (1, true)] {
        count_panel(&mut o, &frame, &series, panel, log);
    }
    value_panel(&mut o, &frame, layers);
    o.push_str("</svg>\n");
    o
}

/// The x axis shared by the three panels, and the peak of the counts.
struct Frame {
    min_sum: f64,
    max_sum: f64,
    /// The largest count, raised to the linear panel's highest tick.
    peak: f64,
    /// Width of the plot area.
    plot_w: f64,
}

impl Frame {
    /// The frame of `layers`, whose counts by max tile are `series`.
    fn new(layers: &[LayerStats], series: &BTreeMap<u8, Vec<(u32, u64)>>) -> Frame {
        let max_sum = layers.iter().map(|l| l.sum).max().unwrap_or(4) as f64;
        let min_sum = layers.iter().map(|l| l.sum).min().unwrap_or(4) as f64;
        let peak = series
            .values()
            .flatten()
            .map(|&(_, n)| n)
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        // The linear panel reaches its highest tick, at or above the peak.
        let peak = linear_ticks(peak).last().copied().unwrap_or(peak).max(peak);
        Frame {
            min_sum,
            max_sum,
            peak,
            plot_w: W - LEFT - RIGHT,
        }
    }

    /// The x of tile sum `sum`.
    fn x(&self, sum: f64) -> f64 {
        // Layers are 2 apart in tile sum: the axis runs one unit past the first
        // and last layer, so each layer owns [sum - 1, sum + 1] of it.
        LEFT + (sum - self.min_sum + 1.0) / (self.max_sum - self.min_sum + 2.0) * self.plot_w
    }
}

/// A panel of states by tile sum, one line per max tile, on a linear or a
/// log scale (`panel` 0, 1 from the top; the first has the legend).
fn count_panel(
    o: &mut String,
    frame: &Frame,
    series: &BTreeMap<u8, Vec<(u32, u64)>>,
    panel: i32,
    log: bool,
) {
    let (peak, plot_w) = (frame.peak, frame.plot_w);
    let top = TOP + panel as f64 * (PANEL_H + GAP);
    let bottom = top + PANEL_H;
    let lmax = peak.log10().ceil().max(1.0);
    let y = |n: f64| {
        if log {
            bottom - (n.max(1.0).log10() / lmax) * PANEL_H
        } else {
            bottom - n / peak * PANEL_H
        }
    };
    axes(o, top, bottom, frame);
    // y ticks
    let ticks: Vec<f64> = if log {
        (0..=lmax as i32).map(|e| 10f64.powi(e)).collect()
    } else {
        linear_ticks(peak)
    };
    for n in ticks {
        let yy = y(n);
        let _ = writeln!(
            o,
            r##"<line x1="{LEFT}" x2="{}" y1="{yy}" y2="{yy}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            yy + 4.0,
            tick_label(n)
        );
    }
    let scale = if log { "log scale" } else { "linear" };
    y_title(o, top, bottom, &format!("states ({scale})"));
    for (i, (m, pts)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let path: Vec<String> = pts
            .iter()
            .map(|&(s, n)| format!("{:.1},{:.1}", frame.x(s as f64), y(n as f64)))
            .collect();
        let _ = writeln!(
            o,
            r#"<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{}"/>"#,
            path.join(" ")
        );
        if panel == 0 {
            legend_entry(o, top, i, color, *m);
        }
    }
}
/// Entry `i` of the legend of the series, from the panel's `top`: the
/// colour of max tile exponent `m`.
fn legend_entry(o: &mut String, top: f64, i: usize, color: &str, m: u8) {
    let ly = top + 14.0 + 16.0 * i as f64;
    let lx = W - RIGHT + 15.0;
    let _ = writeln!(
        o,
        r#"<line x1="{lx}" x2="{}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="3"/><text x="{}" y="{}">max tile {}</text>"#,
        lx + 18.0,
        lx + 24.0,
        ly + 4.0,
        1u32 << m
    );
}

/// The value map: one column per layer, one row per value bin, darker where
/// more of the layer's states lie.
fn value_panel(o: &mut String, frame: &Frame, layers: &[LayerStats]) {
    let top = TOP + 2.0 * (PANEL_H + GAP);
    let bottom = top + PANEL_H;
    axes(o, top, bottom, frame);
    let col_w = frame.x(frame.min_sum + 1.0) - frame.x(frame.min_sum - 1.0);
    let bin_h = PANEL_H / VALUE_BINS as f64;
    for l in layers {
        let total: u64 = l.values.iter().sum();
        for (b, &n) in l.values.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let f = n as f64 / total.max(1) as f64;
            let shade = (255.0 * (1.0 - f.sqrt())) as u8;
            let _ = writeln!(
                o,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="rgb({shade},{shade},255)"/>"#,
                frame.x(l.sum as f64) - col_w / 2.0,
                bottom - (b + 1) as f64 * bin_h,
                col_w,
                bin_h
            );
        }
    }
    let value_top = layers.first().map_or(1.0, |l| l.value_top);
    for i in 0..=4 {
        let f = i as f64 / 4.0;
        let yy = bottom - f * PANEL_H;
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="end">{:.2}</text>"#,
            LEFT - 6.0,
            yy + 4.0,
            f * value_top
        );
    }
    y_title(o, top, bottom, "value (share of layer)");
    for (i, line) in ["darker = larger", "share of the", "layer's states"]
        .iter()
        .enumerate()
    {
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="start">{line}</text>"#,
            W - RIGHT + 10.0,
            top + 14.0 + 16.0 * i as f64
        );
    }
}

/// The title of a panel's y axis, upright along its left edge.
fn y_title(o: &mut String, top: f64, bottom: f64, title: &str) {
    let _ = writeln!(
        o,
        r#"<text x="20" y="{}" transform="rotate(-90 20 {})" text-anchor="middle">{title}</text>"#,
        (top + bottom) / 2.0,
        (top + bottom) / 2.0
    );
}

/// A panel's axes, with the tile sums along the bottom.
fn axes(o: &mut String, top: f64, bottom: f64, frame: &Frame) {
    let (min_sum, max_sum) = (frame.min_sum, frame.max_sum);
    let right = W - RIGHT;
    let _ = writeln!(
        o,
        r#"<line x1="{LEFT}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="black"/><line x1="{LEFT}" x2="{LEFT}" y1="{top}" y2="{bottom}" stroke="black"/>"#
    );
    let step = (((max_sum - min_sum) / 10.0 / 10.0).ceil() * 10.0).max(2.0);
    let mut s = (min_sum / step).ceil() * step;
    while s <= max_sum {
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            frame.x(s),
            bottom + 16.0,
            tick_label(s)
        );
        s += step;
    }
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" text-anchor="middle">tile sum</text>"#,
        (LEFT + right) / 2.0,
        bottom + 34.0
    );
}

/// Ticks 0, step, 2 step, ... up to the first at or above `peak`, with a
/// step of 1, 2 or 5 times a power of ten that makes 3 to 6 intervals.
fn linear_ticks(peak: f64) -> Vec<f64> {
    let peak = peak.max(1.0);
    let raw = peak / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * power)
        .max(1.0);
    let count = (peak / step).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

/// A count for a tick: a plain whole number with thousands separated
/// (`67,080`), or below ten million; past that, a short power of ten
/// (`6.7e7`, `1e8`).
fn tick_label(v: f64) -> String {
    if v.abs() >= 1e7 {
        let e = v.abs().log10().floor() as i32;
        let m = v / 10f64.powi(e);
        let m = format!("{m:.1}");
        let m = m.strip_suffix(".0").unwrap_or(&m);
        return format!("{m}e{e}");
    }
    let digits = format!("{}", v.round() as i64);
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", digits.as_str()),
    };
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Layer statistics of a made-up game: layers of sums `sums`, one part
    /// of max exponent 3 with `states` states each, values spread over bins.
    fn layers(sums: impl Iterator<Item = u32>, states: u64) -> Vec<LayerStats> {
        sums.map(|sum| LayerStats {
            sum,
            parts: vec![(3, states)],
            values: std::array::from_fn(|b| (b as u64 + sum as u64) % 3),
            value_top: 1.0,
        })
        .collect()
    }

    /// The numbers in attribute `name` of every element `tag` of `svg`.
    fn attrs(svg: &str, tag: &str, name: &str) -> Vec<f64> {
        svg.split(&format!("<{tag} "))
            .skip(1)
            .filter_map(|el| {
                let el = format!(" {}", el.split('>').next()?);
                let rest = el.split(&format!(" {name}=\"")).nth(1)?;
                rest.split('"').next()?.parse().ok()
            })
            .collect()
    }

    /// The text of every `<text>` element.
    fn labels(svg: &str) -> Vec<String> {
        svg.split("<text ")
            .skip(1)
            .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.to_string()))
            .collect()
    }

    #[test]
    fn value_columns_stay_inside_the_plot_on_small_games() {
        // A 2x2 game has a dozen layers: its columns were wide enough that
        // the last one covered the legend.
        for (first, last) in [(4, 30), (4, 6), (4, 4), (4, 2000)] {
            let svg = svg("2x2-to-16", &layers((first..=last).step_by(2), 5));
            let xs = attrs(&svg, "rect", "x");
            let ws = attrs(&svg, "rect", "width");
            assert_eq!(xs.len(), ws.len(), "every map cell has x and width");
            assert!(!xs.is_empty());
            for (x, w) in xs.iter().zip(&ws) {
                assert!(
                    *x >= LEFT - 0.05 && x + w <= W - RIGHT + 0.05,
                    "cell {x}..{} leaves the plot {LEFT}..{} ({first}..{last})",
                    x + w,
                    W - RIGHT
                );
            }
        }
    }

    #[test]
    fn tick_labels_are_plain_numbers() {
        let big = svg("3x3-to-1024", &layers((4..=200).step_by(2), 67_080));
        let small = svg("2x2-to-16", &layers((4..=30).step_by(2), 4));
        for svg in [&big, &small] {
            for l in labels(svg) {
                assert!(
                    !l.contains("e0") && !l.contains(".000"),
                    "label {l:?} is in scientific notation"
                );
            }
        }
        let big = labels(&big);
        for want in [
            "0", "20,000", "40,000", "60,000", "80,000", "1", "10", "100,000",
        ] {
            assert!(big.iter().any(|l| l == want), "no tick {want} in {big:?}");
        }
        assert!(labels(&small).iter().any(|l| l == "4"), "{small}");
    }

    #[test]
    fn tick_label_and_ticks() {
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(4.0), "4");
        assert_eq!(tick_label(67_080.0), "67,080");
        assert_eq!(tick_label(1_234_567.0), "1,234,567");
        assert_eq!(tick_label(67_000_000.0), "6.7e7");
        assert_eq!(tick_label(1e8), "1e8");
        assert_eq!(linear_ticks(67_080.0), [0.0, 20e3, 40e3, 60e3, 80e3]);
        assert_eq!(linear_ticks(4.0), [0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(linear_ticks(1.0), [0.0, 1.0]);
        for peak in [1.0, 3.0, 7.0, 99.0, 12_345.0, 2.5e10] {
            let t = linear_ticks(peak);
            assert!(t.len() >= 2 && t.len() <= 7, "{peak}: {t:?}");
            assert!(*t.last().unwrap() >= peak);
        }
    }
}
