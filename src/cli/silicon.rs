//! `silicon` and `experiment vlsi`: the standard-cell flow over circuits and sizes, and the
//! papers' area and time claims. Thin: flags become [`SiliconConfig`]s, the library measures,
//! caches and formats.

use super::command_line;
use super::experiment::OutDir;
use super::files::write;
use super::progress::Progress;
use clap::Args;
use flitforge::config::Backpressure;
use flitforge::silicon::{Circuit, Library, SiliconConfig, claims, sweep};
use flitforge::{Error, Result};

/// `flitforge silicon`.
#[derive(Args)]
pub struct SiliconArgs {
    /// butterfly (a whole network of VC switches, size = inputs N), pruned-butterfly (bit-serial
    /// vertices, size = leaves N) or flexible-sorter (size = rings s).
    #[arg(long, default_value = "butterfly", value_parser = ["butterfly", "pruned-butterfly", "flexible-sorter"])]
    circuit: String,
    /// Sizes, comma-separated: butterfly powers of two 2..=64, pruned-butterfly powers of 4
    /// 16..=256, flexible-sorter powers of two 2..=64. [default: butterfly 4,8;
    /// pruned-butterfly 16; flexible-sorter 8]
    #[arg(long, value_delimiter = ',')]
    sizes: Option<Vec<u32>>,
    /// The OSU standard-cell library (Debian packages qflow-tech-osu018, -osu035, -osu050).
    #[arg(long, default_value = "osu018", value_parser = ["osu018", "osu035", "osu050"])]
    library: String,
    /// Also place and route with qflow (graywolf, qrouter) for the die area and the routed
    /// wire length: minutes per design; practical up to a few thousand cells.
    #[arg(long)]
    place_route: bool,
    /// Butterfly: back-pressure modes to measure, comma-separated.
    /// [default: combinational,registered]
    #[arg(long, value_delimiter = ',', value_parser = ["combinational", "registered"])]
    backpressure: Option<Vec<String>>,
    /// Butterfly: virtual channels B per link. [default: 2]
    #[arg(long)]
    vcs: Option<u32>,
    /// Butterfly: flit bits W. [default: 8]
    #[arg(long)]
    flit_bits: Option<u32>,
    /// Butterfly: flits per VC buffer. [default: 1]
    #[arg(long)]
    vc_depth: Option<u32>,
    /// Flexible sorter: columns l/s (l = columns x s), a power of two. [default: 2]
    #[arg(long)]
    columns: Option<u32>,
    /// Flexible sorter: key bits b, 1..=32. [default: 8]
    #[arg(long)]
    bits: Option<u32>,
    /// Where to write (results are cached there by configuration hash, so a sweep resumes).
    #[command(flatten)]
    out: OutDir,
}

impl SiliconArgs {
    /// Every configuration the flags name, refusing flags without effect on the circuit.
    fn configs(&self) -> Result<Vec<SiliconConfig>> {
        let circuit = Circuit::from_name(&self.circuit).ok_or_else(|| {
            Error::invalid(
                "circuit",
                &self.circuit,
                "butterfly|pruned-butterfly|flexible-sorter",
            )
        })?;
        let library = Library::from_name(&self.library)
            .ok_or_else(|| Error::invalid("library", &self.library, "osu018|osu035|osu050"))?;
        let butterfly_only = [
            ("backpressure", self.backpressure.is_some()),
            ("vcs", self.vcs.is_some()),
            ("flit-bits", self.flit_bits.is_some()),
            ("vc-depth", self.vc_depth.is_some()),
        ];
        let sorter_only = [
            ("columns", self.columns.is_some()),
            ("bits", self.bits.is_some()),
        ];
        let refuse = |flags: &[(&str, bool)], needs: &str| -> Result<()> {
            match flags.iter().find(|f| f.1) {
                Some((flag, _)) => Err(Error::invalid(
                    flag,
                    "given",
                    format!("no value: it applies only with --circuit {needs}"),
                )),
                None => Ok(()),
            }
        };
        if circuit != Circuit::Butterfly {
            refuse(&butterfly_only, "butterfly")?;
        }
        if circuit != Circuit::FlexibleSorter {
            refuse(&sorter_only, "flexible-sorter")?;
        }
        let sizes = self.sizes.clone().unwrap_or_else(|| match circuit {
            Circuit::Butterfly => vec![4, 8],
            Circuit::PrunedButterfly => vec![16],
            Circuit::FlexibleSorter => vec![8],
        });
        let modes: Vec<Backpressure> = match (&self.backpressure, circuit) {
            (_, Circuit::PrunedButterfly | Circuit::FlexibleSorter) => {
                vec![Backpressure::Combinational]
            }
            (None, _) => vec![Backpressure::Combinational, Backpressure::Registered],
            (Some(v), _) => v
                .iter()
                .map(|m| {
                    if m == "registered" {
                        Backpressure::Registered
                    } else {
                        Backpressure::Combinational
                    }
                })
                .collect(),
        };
        let mut out = Vec::new();
        for &backpressure in &modes {
            for &size in &sizes {
                let base = SiliconConfig::new(circuit, size);
                let c = SiliconConfig {
                    library,
                    place_route: self.place_route,
                    backpressure,
                    vcs: self.vcs.unwrap_or(base.vcs),
                    flit_bits: self.flit_bits.unwrap_or(base.flit_bits),
                    vc_depth: self.vc_depth.unwrap_or(base.vc_depth),
                    columns: self.columns.unwrap_or(base.columns),
                    bits: self.bits.unwrap_or(base.bits),
                    ..base
                };
                c.validate()?;
                c.library.liberty()?;
                out.push(c);
            }
        }
        Ok(out)
    }
}

/// `flitforge silicon`: measure, cache, write CSV, Markdown and charts.
pub fn silicon(args: &SiliconArgs) -> Result<()> {
    let configs = args.configs()?;
    let dir = args.out.dir("silicon")?;
    let results = measure_all(&configs, &dir, "silicon")?;
    write(dir.join("silicon.csv"), &sweep::csv(&results))?;
    let table = sweep::markdown(&results);
    write(dir.join("silicon.md"), &table)?;
    for (name, svg) in sweep::charts(&results) {
        write(dir.join(name), &svg)?;
    }
    say!("{table}");
    Ok(())
}

fn measure_all(
    configs: &[SiliconConfig],
    dir: &std::path::Path,
    what: &str,
) -> Result<Vec<flitforge::silicon::Measurement>> {
    let progress = Progress::new(what, "designs");
    let mut last = String::new();
    let results = sweep::run(configs, dir, &command_line(), &mut |done, total, step| {
        progress.update(done as u64, total as u64);
        if step != last {
            note!("{what}: {step}");
            last = step.to_string();
        }
    })?;
    progress.finish();
    Ok(results)
}

/// `experiment vlsi` options.
#[derive(Args)]
pub struct VlsiArgs {
    /// The standard-cell library.
    #[arg(long, default_value = "osu018", value_parser = ["osu018", "osu035", "osu050"])]
    library: String,
    /// Place and route the smallest butterfly and pruned butterfly for the model's error.
    #[arg(long)]
    place_route: bool,
    /// Largest size of the layout model, lg N, 8..=20.
    #[arg(long, default_value_t = 20)]
    model_lg: u32,
    #[command(flatten)]
    out: OutDir,
}

/// `flitforge experiment vlsi`: measure, model, and write claims.md.
pub fn vlsi(args: &VlsiArgs) -> Result<()> {
    let library = Library::from_name(&args.library)
        .ok_or_else(|| Error::invalid("library", &args.library, "osu018|osu035|osu050"))?;
    library.liberty()?;
    if !(8..=20).contains(&args.model_lg) {
        return Err(Error::invalid("model-lg", args.model_lg, "8..=20"));
    }
    let dir = args.out.dir("vlsi")?;
    let configs = claims::configs(library, args.place_route);
    let results = measure_all(&configs, &dir, "experiment vlsi")?;
    let report = claims::evaluate(&results, library, args.model_lg)?;
    write(dir.join("claims.md"), &claims::markdown(&report))?;
    write(dir.join("model.csv"), &claims::model_csv(&report))?;
    write(dir.join("silicon.csv"), &sweep::csv(&results))?;
    write(dir.join("silicon.md"), &sweep::markdown(&results))?;
    for (name, svg) in sweep::charts(&results)
        .into_iter()
        .chain(claims::charts(&report))
    {
        write(dir.join(name), &svg)?;
    }
    say!("{}", claims::markdown(&report));
    Ok(())
}
