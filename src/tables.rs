//! Tables of measured values beside the papers' bounds, as experiments write them: Markdown,
//! CSV and JSON, with fitted constants and SVG charts.

use crate::stats::round6;
use serde::Serialize;

/// A table: a title, what it measures, column names and formatted cells.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Table {
    pub name: String,
    pub title: String,
    pub note: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(name: &str, title: &str, note: &str, columns: &[&str]) -> Self {
        Table {
            name: name.into(),
            title: title.into(),
            note: note.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn to_csv(&self) -> String {
        let mut s = self.columns.join(",") + "\n";
        for r in &self.rows {
            s.push_str(&r.join(","));
            s.push('\n');
        }
        s
    }

    pub fn to_markdown(&self) -> String {
        let mut s = format!("## {}\n\n{}\n\n", self.title, self.note);
        s.push_str(&format!("| {} |\n", self.columns.join(" | ")));
        s.push_str(&format!("|{}\n", "---:|".repeat(self.columns.len())));
        for r in &self.rows {
            s.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        s
    }
}

/// Everything the experiment writes.
#[derive(Clone, Debug, Default)]
pub struct Results {
    pub tables: Vec<Table>,
    /// `(file name, SVG)`.
    pub charts: Vec<(String, String)>,
    /// Fitted constants, by name.
    pub constants: Vec<(String, f64)>,
}

/// Least-squares c in `y ≈ c·x`.
pub fn fit(points: &[(f64, f64)]) -> f64 {
    let (xy, xx) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x * y, b + x * x));
    if xx > 0.0 { round6(xy / xx) } else { 0.0 }
}

pub fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let v: Vec<f64> = values.into_iter().collect();
    v.iter().sum::<f64>() / (v.len().max(1) as f64)
}

pub fn f2(x: f64) -> String {
    format!("{x:.2}")
}

pub fn f3(x: f64) -> String {
    format!("{x:.3}")
}
