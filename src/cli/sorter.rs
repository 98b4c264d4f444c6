//! `sort`: one sort on the cycle-level flexible sorter ([BB] §4.1), checked against a
//! software sort.

use super::args::SorterArgs;
use super::command_line;
use super::files::{AtomicFile, write};
use clap::Args;
use flitforge::run::{RunConfig, RunReport};
use flitforge::sorter::SortConfig;
use flitforge::{Error, Result};

/// `flitforge sort`.
#[derive(Args, Clone)]
pub struct SortArgs {
    /// A flexible-sorter configuration as TOML or JSON (a report's "config"); flags override
    /// it. [default: none]
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    #[command(flatten)]
    pub sorter: SorterArgs,
    /// Seed of the random words. [default: 1]
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Write every register (cells, loop closure, sorter, Omega switches, controller) as VCD.
    /// [default: not written]
    #[arg(long, value_name = "FILE.vcd")]
    pub vcd: Option<String>,
    /// Write the report (docs/report-schema.md) as JSON; "-" writes it to standard output
    /// instead of the summary. [default: not written]
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
}

/// `flitforge sort`: sorts `r` random words on the circuit and checks the output.
pub fn sort(args: &SortArgs) -> Result<()> {
    let base = match &args.config {
        None => SortConfig::default(),
        Some(path) => match RunConfig::from_file(path)? {
            RunConfig::FlexibleSorter(c) => c,
            other => {
                return Err(Error::invalid(
                    "config",
                    path,
                    format!(
                        "a flexible-sorter configuration (this one is for {}: run it with `flitforge sim --config`)",
                        other.topology()
                    ),
                ));
            }
        },
    };
    let inputs: Vec<&str> = args.config.iter().map(String::as_str).collect();
    super::files::outputs_apart(
        &[("json", args.json.as_deref()), ("vcd", args.vcd.as_deref())],
        &inputs,
    )?;
    let config = args.sorter.config(base, args.seed, args.config.is_some())?;
    let command = command_line();
    let run = match &args.vcd {
        None => config.run(None, &command)?,
        Some(path) => {
            let (signals, bytes) = config.waveform_estimate()?;
            flitforge::limits::Estimate::new()
                .with(format!("waveform of {signals} signals"), bytes)
                .check_output("vcd", std::path::Path::new(path))?;
            let mut file = AtomicFile::create(path)?;
            let run = config.run(Some(file.writer()), &command)?;
            file.commit()?;
            run
        }
    };
    let p = config.params;
    if args.json.as_deref() != Some("-") {
        say!(
            "flexible sorter (b = {}, s = {}, l = {}): sorted r = {} words in {} cycles (w = {}, {} Columnsort phases); output checked",
            p.bits,
            p.s,
            p.l,
            config.r,
            run.cycles,
            run.w,
            run.phases
        );
        let shown: Vec<String> = run.output.iter().take(16).map(u64::to_string).collect();
        say!(
            "first words out: {}{}",
            shown.join(" "),
            if run.output.len() > 16 { " ..." } else { "" }
        );
    }
    if let Some(path) = &args.json {
        write(path, &RunReport::sorter(&config, &run).to_json())?;
    }
    Ok(())
}
