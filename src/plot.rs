//! Dependency-free SVG line and scatter charts for experiment results.
//!
//! Output is byte-deterministic: coordinates are written with two decimals and nothing depends
//! on hashing, fonts or the environment, so rendering the same [`Chart`] twice gives equal bytes.

use std::fmt::Write as _;

/// Plot area in viewBox units (at least 800 x 500); the legend sits to its right and the canvas
/// widens to hold its longest entry.
const LEFT: f64 = 80.0;
const TOP: f64 = 50.0;
const RIGHT: f64 = 620.0;
const BOTTOM: f64 = 440.0;
/// Series colours, cycling.
const PALETTE: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Line,
    Points,
    LinePoints,
    /// Dashed line, for fitted or theoretical curves.
    Dashed,
}

/// One named data series; points are drawn in the given order. Every series but a dashed
/// curve marks its points with its own shape, so series that coincide stay visible.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub marker: Marker,
    /// One standard deviation per point, drawn as an error bar (empty: none).
    pub sigma: Vec<f64>,
}

/// A chart with optional logarithmic axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

/// One axis: its tick values and the drawn range (log10 of the values on a log axis).
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Self {
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let (lo, hi) = match (lo <= hi, log) {
            (true, _) => (lo, hi),
            (false, true) => (1.0, 10.0),
            (false, false) => (0.0, 1.0),
        };
        let ticks = if log { log_ticks } else { nice_ticks }(lo, hi);
        let t = |v: f64| if log { v.log10() } else { v };
        let (lo, hi) = (t(ticks[0]), t(ticks[ticks.len() - 1]));
        Axis { lo, hi, log, ticks }
    }

    /// How far along the axis `v` lies, 0 at the low end and 1 at the high end.
    fn frac(&self, v: f64) -> f64 {
        let v = if self.log { v.log10() } else { v };
        (v - self.lo) / (self.hi - self.lo)
    }
}

/// `m * 10^e`, correctly rounded for small integers `m`, so that ticks like 0.6 are exact.
fn scaled(m: f64, e: i32) -> f64 {
    let p = 10f64.powi(e.abs());
    if e >= 0 { m * p } else { m / p }
}

/// About five ticks on a 1-2-5 step that cover `[lo, hi]`, from a multiple of the step below
/// `lo` to one above `hi`.
pub fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (lo, hi) = if lo < hi {
        (lo, hi)
    } else {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() / 2.0 };
        (lo - d, hi + d)
    };
    if !(hi - lo).is_finite() {
        return vec![lo, hi];
    }
    let e0 = (hi - lo).log10().floor() as i32;
    let range = |(m, e): (f64, i32)| {
        let s = scaled(m, e);
        (
            (lo / s + 1e-9).floor() as i64,
            (hi / s - 1e-9).ceil() as i64,
        )
    };
    // The tick count nearest five wins; on a tie, the smaller step.
    let (m, e) = [e0 - 2, e0 - 1, e0]
        .into_iter()
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| (m, e)))
        .min_by_key(|&c| (range(c).1 - range(c).0 - 4).abs())
        .expect("candidates are never empty");
    let (a, b) = range((m, e));
    (a..=b).map(|k| scaled(k as f64 * m, e)).collect()
}

/// Ticks at powers of two (data spanning under three decades) or of ten covering positive
/// `[lo, hi]`, thinned to at most seven.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let two = hi / lo < 1000.0;
    let log = |v: f64| if two { v.log2() } else { v.log10() };
    let a = (log(lo) + 1e-9).floor() as i32;
    let b = (log(hi) - 1e-9).ceil() as i32;
    let (a, b) = if a < b { (a, b) } else { (a - 1, b + 1) };
    let stride = (b - a + 5) / 6;
    let a = a.div_euclid(stride) * stride;
    let n = (b - a + stride - 1) / stride;
    let pow = |k: i32| if two { 2f64.powi(k) } else { scaled(1.0, k) };
    (0..=n).map(|i| pow(a + i * stride)).collect()
}

/// Tick labels in one style per axis: plain decimals, or scientific notation for every tick
/// when any of them has an extreme magnitude.
fn labels(ticks: &[f64]) -> Vec<String> {
    let extreme = |v: f64| v != 0.0 && !(1e-3..1e5).contains(&v.abs());
    let sci = ticks.iter().any(|&v| extreme(v));
    ticks.iter().map(|&v| label(v, sci)).collect()
}

/// A short, stable tick label: plain decimals, or scientific notation (`sci`).
fn label(v: f64, sci: bool) -> String {
    if sci && v != 0.0 {
        let s = format!("{v:.3e}");
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        format!("{}e{exp}", mant.trim_end_matches('0').trim_end_matches('.'))
    } else {
        let s = format!("{v:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" { "0".into() } else { s.into() }
    }
}

/// Escapes text for SVG content and attribute values.
fn escape(s: &str) -> String {
    let pairs = [
        ('&', "&amp;"),
        ('<', "&lt;"),
        ('>', "&gt;"),
        ('"', "&quot;"),
        ('\'', "&#39;"),
    ];
    pairs
        .iter()
        .fold(s.to_string(), |s, &(c, e)| s.replace(c, e))
}

impl Chart {
    /// An empty chart with linear axes.
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_x: false,
            log_y: false,
            series: Vec::new(),
        }
    }

    /// Adds a series (builder style).
    pub fn series(self, name: &str, points: Vec<(f64, f64)>, marker: Marker) -> Self {
        self.series_with_sigma(name, points, Vec::new(), marker)
    }

    /// Adds a series with one standard deviation per point, drawn as error bars.
    pub fn series_with_sigma(
        mut self,
        name: &str,
        points: Vec<(f64, f64)>,
        sigma: Vec<f64>,
        marker: Marker,
    ) -> Self {
        self.series.push(Series {
            name: name.into(),
            points,
            marker,
            sigma,
        });
        self
    }

    /// The plottable points of `s` with their σ (0 without): finite, and positive on log axes.
    fn kept_sigma<'a>(&self, s: &'a Series) -> impl Iterator<Item = ((f64, f64), f64)> + 'a {
        let (lx, ly) = (self.log_x, self.log_y);
        s.points
            .iter()
            .copied()
            .zip(s.sigma.iter().copied().chain(std::iter::repeat(0.0)))
            .filter(move |&((x, y), _)| {
                x.is_finite() && y.is_finite() && (!lx || x > 0.0) && (!ly || y > 0.0)
            })
    }

    /// Renders the chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let all = || {
            self.series.iter().flat_map(|s| {
                self.kept_sigma(s).flat_map(|((x, y), e)| {
                    let lo = if self.log_y && y - e <= 0.0 { y } else { y - e };
                    [(x, lo), (x, y + e)]
                })
            })
        };
        let xa = Axis::new(all().map(|p| p.0), self.log_x);
        let ya = Axis::new(all().map(|p| p.1), self.log_y);
        let px = |x: f64| LEFT + xa.frac(x) * (RIGHT - LEFT);
        let py = |y: f64| BOTTOM - ya.frac(y) * (BOTTOM - TOP);
        let longest = self.series.iter().map(|s| s.name.chars().count()).max();
        // About 7 units per character at font size 12, after the 30-unit sample.
        let width = (RIGHT + 50.0 + 7.0 * longest.unwrap_or(0) as f64 + 10.0).max(800.0);
        let mut o = String::new();
        let _ = write!(
            o,
            concat!(
                r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:.0} 500" "#,
                "width=\"{w:.0}\" height=\"500\" font-family=\"sans-serif\" font-size=\"12\">\n",
                "<rect width=\"{w:.0}\" height=\"500\" fill=\"white\"/>\n",
            ),
            w = width
        );
        let (mid, end) = (r#" text-anchor="middle""#, r#" text-anchor="end""#);
        let big = r#" text-anchor="middle" font-size="16""#;
        text(&mut o, (LEFT + RIGHT) / 2.0, 28.0, big, &self.title);
        let grid = r##"stroke="#dddddd""##;
        for (&t, l) in xa.ticks.iter().zip(labels(&xa.ticks)) {
            line(&mut o, (px(t), TOP), (px(t), BOTTOM), grid);
            text(&mut o, px(t), BOTTOM + 18.0, mid, &l);
        }
        for (&t, l) in ya.ticks.iter().zip(labels(&ya.ticks)) {
            line(&mut o, (LEFT, py(t)), (RIGHT, py(t)), grid);
            text(&mut o, LEFT - 6.0, py(t) + 4.0, end, &l);
        }
        let frame = [(LEFT, TOP), (LEFT, BOTTOM), (RIGHT, BOTTOM)];
        polyline(&mut o, &frame, r#"fill="none" stroke="black""#);
        text(&mut o, (LEFT + RIGHT) / 2.0, 485.0, mid, &self.x_label);
        let rot = r#" text-anchor="middle" transform="rotate(-90 20.00 245.00)""#;
        text(&mut o, 20.0, 245.0, rot, &self.y_label);
        for (i, s) in self.series.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            let lined = !matches!(s.marker, Marker::Points);
            let marked = s.marker != Marker::Dashed;
            let mut stroke = format!(r#"fill="none" stroke="{c}" stroke-width="2""#);
            if s.marker == Marker::Dashed {
                stroke.push_str(r#" stroke-dasharray="6 4""#);
            }
            let kept: Vec<((f64, f64), f64)> = self.kept_sigma(s).collect();
            let pts: Vec<(f64, f64)> = kept.iter().map(|&((x, y), _)| (px(x), py(y))).collect();
            if lined && pts.len() >= 2 {
                polyline(&mut o, &pts, &stroke);
            }
            let bar = format!(r#"stroke="{c}" stroke-width="1""#);
            for &((x, y), e) in kept.iter().filter(|(_, e)| *e > 0.0) {
                let lo = if self.log_y && y - e <= 0.0 { y } else { y - e };
                let (x, top, bottom) = (px(x), py(y + e), py(lo));
                line(&mut o, (x, top), (x, bottom), &bar);
                line(&mut o, (x - 4.0, top), (x + 4.0, top), &bar);
                line(&mut o, (x - 4.0, bottom), (x + 4.0, bottom), &bar);
            }
            for &(x, y) in pts.iter().filter(|_| marked) {
                shape(&mut o, i, x, y, c);
            }
            // Legend entry: a line sample and/or the series' shape, then the name.
            let (lx, ly) = (RIGHT + 20.0, TOP + 10.0 + 20.0 * i as f64);
            if lined {
                line(&mut o, (lx, ly), (lx + 24.0, ly), &stroke);
            }
            if marked {
                shape(&mut o, i, lx + 12.0, ly, c);
            }
            text(&mut o, lx + 30.0, ly + 4.0, "", &s.name);
        }
        o.push_str("</svg>\n");
        o
    }
}

/// Marks a point with the `i`-th series' shape: circle, square, triangle, diamond, then the
/// same four hollow.
fn shape(o: &mut String, i: usize, x: f64, y: f64, colour: &str) {
    let paint = if i < 4 || (i / 4).is_multiple_of(2) {
        format!(r#"fill="{colour}""#)
    } else {
        format!(r#"fill="white" stroke="{colour}" stroke-width="1.5""#)
    };
    let _ = match i % 4 {
        0 => writeln!(o, r#"<circle cx="{x:.2}" cy="{y:.2}" r="3.50" {paint}/>"#),
        1 => writeln!(
            o,
            r#"<rect x="{:.2}" y="{:.2}" width="7.00" height="7.00" {paint}/>"#,
            x - 3.5,
            y - 3.5
        ),
        2 => writeln!(
            o,
            r#"<polygon points="{x:.2},{:.2} {:.2},{:.2} {:.2},{:.2}" {paint}/>"#,
            y - 4.5,
            x + 4.0,
            y + 3.0,
            x - 4.0,
            y + 3.0
        ),
        _ => writeln!(
            o,
            r#"<polygon points="{x:.2},{:.2} {:.2},{y:.2} {x:.2},{:.2} {:.2},{y:.2}" {paint}/>"#,
            y - 4.5,
            x + 4.5,
            y + 4.5,
            x - 4.5
        ),
    };
}

fn text(o: &mut String, x: f64, y: f64, attrs: &str, s: &str) {
    let s = escape(s);
    let _ = writeln!(o, r#"<text x="{x:.2}" y="{y:.2}"{attrs}>{s}</text>"#);
}

fn line(o: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), attrs: &str) {
    let _ = writeln!(
        o,
        r#"<line x1="{x1:.2}" y1="{y1:.2}" x2="{x2:.2}" y2="{y2:.2}" {attrs}/>"#
    );
}

fn polyline(o: &mut String, pts: &[(f64, f64)], attrs: &str) {
    let coords: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.2},{y:.2}")).collect();
    let _ = writeln!(o, r#"<polyline points="{}" {attrs}/>"#, coords.join(" "));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Chart {
        Chart::new("Routing time", "load factor", "cycles")
            .series(
                "measured",
                vec![(0.1, 12.0), (0.9, 95.0)],
                Marker::LinePoints,
            )
            .series("fit", vec![(0.1, 10.0), (0.9, 100.0)], Marker::Dashed)
    }

    #[test]
    fn output_is_deterministic_and_well_formed() {
        let (a, b) = (sample().to_svg(), sample().to_svg());
        assert_eq!(a, b);
        assert!(a.starts_with("<svg") && a.ends_with("</svg>\n"));
        assert!(a.contains(">measured</text>") && a.contains(">fit</text>"));
        assert!(a.contains("stroke-dasharray"));
    }

    #[test]
    fn empty_chart_renders_axes_only() {
        let svg = Chart::new("empty", "x", "y").to_svg();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(!svg.contains("<circle"));
        let mut log = Chart::new("empty", "x", "y");
        (log.log_x, log.log_y) = (true, true);
        let log = log.series("none", vec![(0.0, -1.0)], Marker::Line).to_svg();
        assert!(log.contains(">none<") && log.matches("<polyline").count() == 1);
    }

    #[test]
    fn log_axes_skip_non_positive_and_non_finite() {
        let mut pts = vec![(1.0, 1.0), (10.0, 100.0), (0.0, 5.0), (-2.0, 3.0)];
        pts.extend([(4.0, 0.0), (f64::NAN, 1.0), (5.0, f64::INFINITY)]);
        let mut c = Chart::new("t", "x", "y").series("s", pts, Marker::Points);
        (c.log_x, c.log_y) = (true, true);
        let svg = c.to_svg();
        // Two data points plus the legend marker.
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn text_is_escaped() {
        let svg = Chart::new(r#"a<b & "c" 'd'>"#, "x", "y").to_svg();
        assert!(svg.contains("a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"));
        assert!(!svg.contains("a<b"));
    }

    #[test]
    fn nice_ticks_use_1_2_5_steps() {
        assert_eq!(nice_ticks(0.0, 1.0), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(nice_ticks(3.0, 97.0), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(nice_ticks(-0.013, 0.042), [-0.02, 0.0, 0.02, 0.04, 0.06]);
        assert_eq!(nice_ticks(5.0, 5.0), [2.0, 4.0, 6.0, 8.0]);
        assert_eq!(nice_ticks(0.0, 0.0), [-1.0, -0.5, 0.0, 0.5, 1.0]);
    }

    #[test]
    fn log_ticks_pick_base_by_span() {
        assert_eq!(log_ticks(0.5, 8.0), [0.5, 1.0, 2.0, 4.0, 8.0]);
        assert_eq!(log_ticks(1.0, 512.0), [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0]);
        assert_eq!(log_ticks(1.0, 1e6), [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        assert_eq!(log_ticks(0.01, 1e6), [0.01, 1.0, 100.0, 1e4, 1e6]);
        assert_eq!(log_ticks(4.0, 4.0), [2.0, 4.0, 8.0]);
    }

    #[test]
    fn labels_are_short_and_one_style_per_axis() {
        assert_eq!(
            labels(&[0.6000000000000001, 1024.0, -0.0]),
            ["0.6", "1024", "0"]
        );
        assert_eq!(labels(&[1e3, 1e4, 1e5, 1e6]), ["1e3", "1e4", "1e5", "1e6"]);
        assert_eq!(labels(&[2.5e-5, 1.0]), ["2.5e-5", "1e0"]);
    }

    #[test]
    fn coinciding_series_keep_distinct_markers_and_the_legend_fits() {
        let long = "a very long series name that would not fit beside an 800-unit canvas";
        let svg = Chart::new("t", "x", "y")
            .series("a", vec![(1.0, 1.0), (2.0, 2.0)], Marker::Line)
            .series(long, vec![(1.0, 1.0), (2.0, 2.0)], Marker::Line)
            .to_svg();
        assert!(svg.contains("<circle") && svg.contains("<rect x="));
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(width >= RIGHT + 50.0 + 7.0 * long.len() as f64, "{width}");
    }

    #[test]
    fn sigma_draws_error_bars() {
        let svg = Chart::new("t", "x", "y")
            .series_with_sigma(
                "m",
                vec![(1.0, 10.0), (2.0, 20.0)],
                vec![2.0, 0.0],
                Marker::LinePoints,
            )
            .to_svg();
        // One bar with two caps for the point with sigma, none for the other.
        assert_eq!(svg.matches(r#"stroke-width="1"/>"#).count(), 3);
    }
}
