//! `sim --sweep`: a load curve of one network, its loads run in parallel (or sharded), and
//! the saturation point found from it ([`flitforge::sweep`]).

use super::files::write;
use super::network::SimArgs;
use flitforge::config::SimConfig;
use flitforge::run::RunConfig;
use flitforge::{Error, Result};

/// `sim --sweep`, or (from `merge`) its shards' results replayed.
pub fn sweep(args: &SimArgs, replay: &mut super::shard::Replay) -> Result<()> {
    let Some(rates) = &args.sweep.sweep else {
        return Err(Error::invalid("sweep", "none", "a list of loads"));
    };
    let o = &args.out;
    let single = [
        ("json", o.json.is_some()),
        ("vcd", o.vcd.is_some()),
        ("per-message", o.per_message),
        ("rate", args.traffic.rate.is_some()),
        // A load's run is cut short by --cycles by design (continuous traffic).
        ("allow-partial", o.allow_partial),
    ];
    if o.threads != 1 {
        return Err(Error::invalid(
            "threads",
            o.threads,
            "1 with --sweep: its loads run at once, one a core, each on one thread",
        ));
    }
    if o.kernel.is_some() {
        return Err(Error::invalid(
            "kernel",
            "given",
            "no value: --sweep runs every load on the auto kernel (the run is the same on either)",
        ));
    }
    if let Some((flag, _)) = single.iter().find(|(_, given)| *given) {
        return Err(Error::invalid(
            flag,
            "given",
            format!(
                "no value: --{flag} belongs to a single run; --sweep sets the rate of every run and writes into --out"
            ),
        ));
    }
    flitforge::sweep::check_rates(rates)?;
    // `--traffic bernoulli` (the sweep's own) is read with a rate, which every load replaces.
    let mut args = args.clone();
    if args.traffic.traffic.as_deref() == Some("bernoulli") {
        args.traffic.rate = Some(rates[0]);
    }
    let mut base = match args.flags().resolve(SimConfig {
        traffic: flitforge::traffic::Traffic::Bernoulli {
            rate: rates[0].clamp(0.0, 1.0),
        },
        ..SimConfig::default()
    })? {
        RunConfig::Network(c) => c,
        other => {
            return Err(Error::invalid(
                "topology",
                other.topology(),
                "a network of virtual-channel switches with --sweep (any topology but pruned-butterfly and sorting-fat-tree)",
            ));
        }
    };
    if !matches!(base.traffic, flitforge::traffic::Traffic::Bernoulli { .. }) {
        return Err(Error::invalid(
            "traffic",
            base.traffic.name(),
            "bernoulli with --sweep (the sweep sets its rate)",
        ));
    }
    if base.cycles == Some(0) {
        return Err(Error::invalid(
            "cycles",
            0,
            "1 or more with --sweep (every load is measured over the run)",
        ));
    }
    base.cycles.get_or_insert(2000);
    // The run at every load but its rate: recorded with the first load's (a --config file's
    // rate is replaced as --rate would be).
    base.traffic = flitforge::traffic::Traffic::Bernoulli { rate: rates[0] };
    // What its results belong to, by value: resumed and merged as the same sweep however the
    // command line spells it (`--cycles 2000` given or not, `0.10` for `0.1`), and the
    // contents of the graph file it names (its configuration holds only the path).
    let graph: Vec<String> = base.graph.iter().cloned().collect();
    let mut identity = vec![
        format!("config={}", base.to_value()),
        format!(
            "loads={}",
            rates
                .iter()
                .map(f64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
    ];
    identity.extend(super::shard::input_digests(&graph)?);
    let dir = super::files::experiment_dir(
        "sweep",
        args.sweep.out.as_deref(),
        args.sweep.force,
        &super::args::run_input_files(&args.net, &args.traffic)?,
    )?;
    let at_once = flitforge::sweep::loads_at_once(&base, rates);
    let mut jobs =
        (args.sweep.shard).jobs_keyed(&dir, at_once, replay, args.sweep.force, Some(&identity))?;
    let progress = super::progress::Progress::new("sim --sweep", "loads");
    let curve = flitforge::sweep::load_curve(&base, rates, &mut jobs, &|done, total| {
        progress.update(done as u64, total as u64);
    })?;
    progress.finish();
    let Some(curve) = curve else {
        return super::shard::write_shard(&dir, "sweep", &jobs, Some(&identity));
    };
    write(dir.join("sweep.csv"), &curve.csv())?;
    let md = curve.markdown();
    write(dir.join("sweep.md"), &md)?;
    for (name, svg) in curve.charts() {
        write(dir.join(name), &svg)?;
    }
    let json = serde_json::to_string_pretty(&curve).unwrap_or_default();
    write(dir.join("sweep.json"), &format!("{json}\n"))?;
    say!("{md}");
    Ok(())
}
