//! Dependency-free SVG line and scatter charts for experiment results.
//!
//! Output is byte-deterministic: coordinates are written with two decimals and nothing depends
//! on hashing, fonts or the environment, so rendering the same [`Chart`] twice gives equal bytes.

use std::fmt::Write as _;

/// Plot area in viewBox units (800 x 500); the legend sits to its right.
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

/// One named data series; points are drawn in the given order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub marker: Marker,
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

/// A short, stable tick label: plain decimals, or scientific notation for extreme magnitudes.
fn label(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
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
    pub fn series(mut self, name: &str, points: Vec<(f64, f64)>, marker: Marker) -> Self {
        let name = name.into();
        self.series.push(Series {
            name,
            points,
            marker,
        });
        self
    }

    /// The plottable points of `s`: finite, and positive on log axes.
    fn kept<'a>(&self, s: &'a Series) -> impl Iterator<Item = (f64, f64)> + 'a {
        let (lx, ly) = (self.log_x, self.log_y);
        s.points.iter().copied().filter(move |&(x, y)| {
            x.is_finite() && y.is_finite() && (!lx || x > 0.0) && (!ly || y > 0.0)
        })
    }

    /// Renders the chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let all = || self.series.iter().flat_map(|s| self.kept(s));
        let xa = Axis::new(all().map(|p| p.0), self.log_x);
        let ya = Axis::new(all().map(|p| p.1), self.log_y);
        let px = |x: f64| LEFT + xa.frac(x) * (RIGHT - LEFT);
        let py = |y: f64| BOTTOM - ya.frac(y) * (BOTTOM - TOP);
        let mut o = String::from(concat!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 500" width="800" "#,
            "height=\"500\" font-family=\"sans-serif\" font-size=\"12\">\n",
            "<rect width=\"800\" height=\"500\" fill=\"white\"/>\n",
        ));
        let (mid, end) = (r#" text-anchor="middle""#, r#" text-anchor="end""#);
        let big = r#" text-anchor="middle" font-size="16""#;
        text(&mut o, 400.0, 28.0, big, &self.title);
        let grid = r##"stroke="#dddddd""##;
        for &t in &xa.ticks {
            line(&mut o, (px(t), TOP), (px(t), BOTTOM), grid);
            text(&mut o, px(t), BOTTOM + 18.0, mid, &label(t));
        }
        for &t in &ya.ticks {
            line(&mut o, (LEFT, py(t)), (RIGHT, py(t)), grid);
            text(&mut o, LEFT - 6.0, py(t) + 4.0, end, &label(t));
        }
        let frame = [(LEFT, TOP), (LEFT, BOTTOM), (RIGHT, BOTTOM)];
        polyline(&mut o, &frame, r#"fill="none" stroke="black""#);
        text(&mut o, (LEFT + RIGHT) / 2.0, 485.0, mid, &self.x_label);
        let rot = r#" text-anchor="middle" transform="rotate(-90 20.00 245.00)""#;
        text(&mut o, 20.0, 245.0, rot, &self.y_label);
        for (i, s) in self.series.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            let lined = !matches!(s.marker, Marker::Points);
            let dots = matches!(s.marker, Marker::Points | Marker::LinePoints);
            let mut stroke = format!(r#"fill="none" stroke="{c}" stroke-width="2""#);
            if s.marker == Marker::Dashed {
                stroke.push_str(r#" stroke-dasharray="6 4""#);
            }
            let pts: Vec<(f64, f64)> = self.kept(s).map(|(x, y)| (px(x), py(y))).collect();
            if lined && pts.len() >= 2 {
                polyline(&mut o, &pts, &stroke);
            }
            for &(x, y) in pts.iter().filter(|_| dots) {
                circle(&mut o, x, y, c);
            }
            // Legend entry: a line sample and/or a dot, then the name.
            let (lx, ly) = (RIGHT + 20.0, TOP + 10.0 + 20.0 * i as f64);
            if lined {
                line(&mut o, (lx, ly), (lx + 24.0, ly), &stroke);
            }
            if dots {
                circle(&mut o, lx + 12.0, ly, c);
            }
            text(&mut o, lx + 30.0, ly + 4.0, "", &s.name);
        }
        o.push_str("</svg>\n");
        o
    }
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

fn circle(o: &mut String, x: f64, y: f64, fill: &str) {
    let _ = writeln!(
        o,
        r#"<circle cx="{x:.2}" cy="{y:.2}" r="3.00" fill="{fill}"/>"#
    );
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
        // Two data points plus the legend dot.
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
    fn labels_are_short() {
        assert_eq!(label(0.6000000000000001), "0.6");
        assert_eq!(label(1024.0), "1024");
        assert_eq!(label(1e6), "1e6");
        assert_eq!(label(-0.0), "0");
        assert_eq!(label(2.5e-5), "2.5e-5");
    }
}
