//! A sweep of circuits and sizes through the standard-cell flow, each result cached under its
//! configuration hash (`cache/<hash>.json`) so an interrupted sweep resumes where it stopped;
//! its CSV, Markdown and log-log charts with the fitted exponent.

use super::layout::{self, Layout};
use super::{Measurement, SiliconConfig, measure};
use crate::error::{Error, Result};
use crate::plot::{Chart, Marker};
use std::fmt::Write as _;
use std::path::Path;

/// Measures every configuration in `configs` (cached results are reused), reporting progress
/// as `(done, total, what)`.
pub fn run(
    configs: &[SiliconConfig],
    out: &Path,
    command: &str,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<Vec<Measurement>> {
    let cache = out.join("cache");
    std::fs::create_dir_all(&cache).map_err(|e| Error::io(cache.display(), e))?;
    let mut results = Vec::new();
    for (i, config) in configs.iter().enumerate() {
        let hash = config.config_hash();
        let cached = cache.join(format!("{hash}.json"));
        let name = format!(
            "{} {} ({})",
            config.circuit.name(),
            config.size,
            config.label()
        );
        if let Some(m) = std::fs::read_to_string(&cached)
            .ok()
            .and_then(|t| serde_json::from_str::<Measurement>(&t).ok())
            .filter(|m| m.config == *config)
        {
            progress(i + 1, configs.len(), &format!("{name}: cached"));
            results.push(m);
            continue;
        }
        let dir = out.join(format!("{}-{}-{hash}", config.circuit.name(), config.size));
        let m = measure(config, &dir, command, &mut |step| {
            progress(i, configs.len(), &format!("{name}: {step}"))
        })?;
        let json = serde_json::to_string_pretty(&m).map_err(|e| Error::parse("measurement", e))?;
        crate::files::write_atomic(&cached, json + "\n")?;
        progress(i + 1, configs.len(), &format!("{name}: done"));
        results.push(m);
    }
    Ok(results)
}

/// The layout model's prediction for a measurement, if the model covers its circuit.
fn model(m: &Measurement) -> Option<Layout> {
    layout::predict(m, m.config.library).ok().flatten()
}

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v}"))
}

/// One line per measurement.
pub fn csv(results: &[Measurement]) -> String {
    let mut s = String::from(
        "circuit,size,parameters,library,cells,flops,cell_area_um2,critical_path_ns,reg_to_reg_ns,input_to_reg_ns,reg_to_output_ns,input_to_output_ns,die_area_um2,wire_length_um,model_area_um2,model_error_percent,config_hash\n",
    );
    for m in results {
        let c = &m.config;
        let pr = m.place_route.as_ref();
        let model = model(m).map(|l| l.area_um2.round());
        let error = match (model, pr) {
            (Some(a), Some(p)) if p.die_area_um2 > 0.0 => {
                Some(((a - p.die_area_um2) / p.die_area_um2 * 1000.0).round() / 10.0)
            }
            _ => None,
        };
        let t = &m.timing;
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            c.circuit.name(),
            c.size,
            c.label().replace(", ", "; "),
            c.library.name(),
            m.synthesis.cells,
            m.synthesis.flops,
            m.synthesis.cell_area_um2,
            t.critical_path_ns,
            opt(t.reg_to_reg_ns),
            opt(t.input_to_reg_ns),
            opt(t.reg_to_output_ns),
            opt(t.input_to_output_ns),
            opt(pr.map(|p| p.die_area_um2)),
            opt(pr.map(|p| p.wire_length_um)),
            opt(model),
            opt(error),
            m.config_hash,
        );
    }
    s
}

/// A Markdown table of the measurements (and the model beside the die where both exist).
pub fn markdown(results: &[Measurement]) -> String {
    let mut s = String::from(
        "| circuit | size | parameters | library | cells | flip-flops | cell area (µm²) | critical path (ns) | reg→reg | in→reg | reg→out | die (µm²) | wire (µm) | model (µm²) | model error |\n|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let cell = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{v:.2}"));
    for m in results {
        let c = &m.config;
        let pr = m.place_route.as_ref();
        let model = model(m);
        let error = match (model, pr) {
            (Some(a), Some(p)) if p.die_area_um2 > 0.0 => format!(
                "{:+.1} %",
                (a.area_um2 - p.die_area_um2) / p.die_area_um2 * 100.0
            ),
            _ => "–".into(),
        };
        let t = &m.timing;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {:.0} | {:.2} | {} | {} | {} | {} | {} | {} | {error} |",
            c.circuit.name(),
            c.size,
            c.label(),
            c.library.name(),
            m.synthesis.cells,
            m.synthesis.flops,
            m.synthesis.cell_area_um2,
            t.critical_path_ns,
            cell(t.reg_to_reg_ns),
            cell(t.input_to_reg_ns),
            cell(t.reg_to_output_ns),
            pr.map_or("–".into(), |p| format!("{:.0}", p.die_area_um2)),
            pr.map_or("–".into(), |p| format!("{:.0}", p.wire_length_um)),
            model.map_or("–".into(), |l| format!("{:.0}", l.area_um2)),
        );
    }
    s.push_str(
        "\nCell area is the sum of the cells' Liberty areas (no wires). The critical path is the shortest clock period OpenSTA allows (no parasitics, ports with zero external delay): the longest of register→register, input→register, register→output and input→output paths. Die and wire come from qflow's placement (graywolf) and routing (qrouter); the model is the layout model of `experiment vlsi` at the circuit's own size, its error relative to the die.\n",
    );
    s
}

/// Least-squares slope of `ln y` against `ln x`: the exponent of a power law.
pub fn exponent(points: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    let spread = logs.iter().any(|p| p.0 != logs[0].0);
    (logs.len() >= 2 && spread).then(|| layout::fit(&logs, &[|_| 1.0, |x| x])[1])
}

/// Area and critical path against size, log-log, one series per circuit and parameter set,
/// each named with its fitted exponent.
pub fn charts(results: &[Measurement]) -> Vec<(&'static str, String)> {
    let mut groups: Vec<(String, Vec<&Measurement>)> = Vec::new();
    for m in results {
        let key = format!("{} ({})", m.config.circuit.name(), m.config.label());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(m),
            None => groups.push((key, vec![m])),
        }
    }
    let mut area = Chart::new(
        "Cell area against size",
        "size (inputs, leaves or rings)",
        "cell area (µm²)",
    );
    let mut period = Chart::new(
        "Critical path against size",
        "size (inputs, leaves or rings)",
        "critical path (ns)",
    );
    for c in [&mut area, &mut period] {
        c.log_x = true;
        c.log_y = true;
    }
    for (key, ms) in &groups {
        let pts = |f: &dyn Fn(&Measurement) -> f64| -> Vec<(f64, f64)> {
            let mut v: Vec<(f64, f64)> = ms
                .iter()
                .map(|m| (f64::from(m.config.size), f(m)))
                .collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            v
        };
        let a = pts(&|m| m.synthesis.cell_area_um2);
        let p = pts(&|m| m.timing.critical_path_ns);
        let label = |pts: &[(f64, f64)]| match exponent(pts) {
            Some(e) => format!("{key}: exponent {e:.2}"),
            None => key.clone(),
        };
        area = area.series(&label(&a), a, Marker::LinePoints);
        period = period.series(&label(&p), p, Marker::LinePoints);
    }
    vec![
        ("area-vs-size.svg", area.to_svg()),
        ("period-vs-size.svg", period.to_svg()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_of_a_power_law() {
        let pts: Vec<(f64, f64)> = [4.0, 8.0, 16.0].iter().map(|&x| (x, 3.0 * x * x)).collect();
        assert!((exponent(&pts).unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(exponent(&pts[..1]), None);
    }
}
