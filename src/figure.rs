//! The state-space figure as a self-contained SVG: states by tile sum with one
//! series per max tile, on a linear and a log scale (like the published
//! enumeration figures), and the distribution of values in each layer. PNG is
//! the same SVG rasterised with resvg.

use std::collections::BTreeMap;
use std::fmt::Write;

use solve2048_solution::stats::{LayerStats, VALUE_BINS};

const W: f64 = 900.0;
const PANEL_H: f64 = 300.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 150.0;
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
    let max_sum = layers.iter().map(|l| l.sum).max().unwrap_or(4) as f64;
    let min_sum = layers.iter().map(|l| l.sum).min().unwrap_or(4) as f64;
    let mut series: BTreeMap<u8, Vec<(u32, u64)>> = BTreeMap::new();
    for l in layers {
        for &(m, n) in &l.parts {
            series.entry(m).or_default().push((l.sum, n));
        }
    }
    let peak = series
        .values()
        .flatten()
        .map(|&(_, n)| n)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let plot_w = W - LEFT - RIGHT;
    let x = |sum: f64| LEFT + (sum - min_sum) / (max_sum - min_sum).max(1.0) * plot_w;
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
        axes(&mut o, top, bottom, min_sum, max_sum, &x);
        // y ticks
        if log {
            for e in 0..=lmax as i32 {
                let yy = y(10f64.powi(e));
                let _ = writeln!(
                    o,
                    r##"<line x1="{LEFT}" x2="{}" y1="{yy}" y2="{yy}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">1e{e}</text>"##,
                    LEFT + plot_w,
                    LEFT - 6.0,
                    yy + 4.0
                );
            }
        } else {
            for i in 0..=4 {
                let n = peak * i as f64 / 4.0;
                let yy = y(n);
                let _ = writeln!(
                    o,
                    r##"<line x1="{LEFT}" x2="{}" y1="{yy}" y2="{yy}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{:.3e}</text>"##,
                    LEFT + plot_w,
                    LEFT - 6.0,
                    yy + 4.0,
                    n
                );
            }
        }
        let _ = writeln!(
            o,
            r#"<text x="20" y="{}" transform="rotate(-90 20 {})" text-anchor="middle">states ({})</text>"#,
            (top + bottom) / 2.0,
            (top + bottom) / 2.0,
            if log { "log scale" } else { "linear" }
        );
        for (i, (m, pts)) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let path: Vec<String> = pts
                .iter()
                .map(|&(s, n)| format!("{:.1},{:.1}", x(s as f64), y(n as f64)))
                .collect();
            let _ = writeln!(
                o,
                r#"<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{}"/>"#,
                path.join(" ")
            );
            if panel == 0 {
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
        }
    }
    // Value distribution: a heat map, one column per layer, one row per bin.
    let top = TOP + 2.0 * (PANEL_H + GAP);
    let bottom = top + PANEL_H;
    axes(&mut o, top, bottom, min_sum, max_sum, &x);
    let col_w = (plot_w / ((max_sum - min_sum) / 2.0 + 1.0)).max(1.0);
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
                x(l.sum as f64) - col_w / 2.0,
                bottom - (b + 1) as f64 * bin_h,
                col_w,
                bin_h
            );
        }
    }
    for i in 0..=4 {
        let v = i as f64 / 4.0;
        let yy = bottom - v * PANEL_H;
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="end">{v:.2}</text>"#,
            LEFT - 6.0,
            yy + 4.0
        );
    }
    let _ = writeln!(
        o,
        r#"<text x="20" y="{}" transform="rotate(-90 20 {})" text-anchor="middle">value (share of layer)</text>"#,
        (top + bottom) / 2.0,
        (top + bottom) / 2.0
    );
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
    o.push_str("</svg>\n");
    o
}

/// Rasterise the figure to PNG with resvg (pure Rust; text in the system's
/// sans-serif font).
pub fn png(svg: &str) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    let mut options = usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    if options.fontdb.is_empty() {
        eprintln!("warning: no system fonts found: the PNG has no text (the SVG keeps it)");
    }
    let tree = usvg::Tree::from_str(svg, &options)?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| anyhow::anyhow!("figure of size {size:?} cannot be rasterised"))?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    Ok(pixmap.encode_png()?)
}

fn axes(o: &mut String, top: f64, bottom: f64, min_sum: f64, max_sum: f64, x: &dyn Fn(f64) -> f64) {
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
            r#"<text x="{}" y="{}" text-anchor="middle">{s}</text>"#,
            x(s),
            bottom + 16.0
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
