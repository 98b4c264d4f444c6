//! The commands for seed 001's networks and circuits: the pruned butterfly, the flexible
//! sorter and the sorting fat-tree (route, describe, sort, experiments). Thin: each parses
//! nothing itself and prints what the library returns.

use crate::{SimArgs, SorterArgs, command_line, parse_name, write};
use flitforge::config::SimConfig;
use flitforge::pruned::Engine;
use flitforge::sorter::SorterParams;
use flitforge::wave::ScopeFilter;
use flitforge::{Error, Result};

/// `sim --topology sorting-fat-tree`: route the message set with the eight-step algorithm.
pub fn simulate_fat_tree(args: &SimArgs) -> Result<()> {
    args.refuse_network_flags(
        "--topology sorting-fat-tree",
        "only --inputs, --traffic (with --q, --region or --messages), --seed, --body-bits, --json",
    )?;
    for (flag, given) in [
        ("engine", args.engine.is_some()),
        ("vcd", args.vcd.is_some()),
    ] {
        if given {
            return Err(Error::invalid(
                flag,
                "given with --topology sorting-fat-tree",
                "no value: the sorting fat-tree is modelled at the message level",
            ));
        }
    }
    let c = args.resolve(SimConfig::default())?;
    if c.traffic.is_continuous() {
        return Err(Error::invalid(
            "traffic",
            c.traffic.name(),
            "a batch pattern for the sorting fat-tree",
        ));
    }
    let n = c.inputs;
    let tree = flitforge::sorter::fattree::FatTree::new(
        n,
        args.body_bits.unwrap_or(2 * n.trailing_zeros()),
    )?;
    let messages: Vec<(u32, u32)> = c
        .traffic
        .messages(n, 0, c.seed)?
        .iter()
        .map(|m| (m.source, m.destination))
        .collect();
    let r = tree.route(&messages)?;
    say!(
        "sorting fat-tree, N = {n} ({} x {} meshes at depth {}): {} messages, {} delivered, {} colour class(es) of degree {}",
        tree.mesh,
        tree.mesh,
        tree.depth,
        r.messages,
        r.delivered,
        r.colours,
        r.degree
    );
    say!(
        "load factor {:.3} (per direction; {:.3} both ways); {} ascent and {} descent stages",
        r.load_factor_dir,
        r.load_factor_cut,
        r.ascent_stages,
        r.descent_stages
    );
    say!(
        "cycles: mesh {} + batching {} + ascent {} + peak sorts {} + descent {} = {}",
        r.mesh_cycles,
        r.batching_cycles,
        r.ascent_cycles,
        r.peak_sort_cycles,
        r.descent_cycles,
        r.routing_cycles
    );
    say!(
        "Theorem 3: T / (lambda lg N + lg^2 N) = {:.2}; sorter capacity exceeded {} times, Lemma 10 exceeded {} times",
        r.theorem3_ratio,
        r.capacity_violations,
        r.lemma10_violations
    );
    if let Some(path) = &args.json {
        let json = serde_json::json!({ "inputs": n, "traffic": c.traffic, "seed": c.seed, "bits": tree.bits, "report": r });
        write(path, &format!("{json:#}\n"))?;
        say!("statistics written to {path}");
    }
    Ok(())
}

/// `sim --topology pruned-butterfly`: route the message set with the stage algorithm.
pub fn simulate_pruned(args: &SimArgs) -> Result<()> {
    let config = args.pruned()?;
    let command = command_line();
    let report = match &args.vcd {
        None => config.run(None, &command)?,
        Some(path) => {
            config.check_waveform()?;
            let filter = ScopeFilter::new(args.vcd_scope.as_deref().unwrap_or(""))?;
            let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
            let mut out = std::io::BufWriter::new(file);
            let report = config.run(Some((&mut out, &filter)), &command)?;
            say!("waveform written to {path}");
            report
        }
    };
    say!("{}", report.summary());
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "config": config,
            "config_hash": config.config_hash(),
            "seed": config.seed,
            "report": report,
        });
        write(path, &format!("{json:#}\n"))?;
        say!("statistics written to {path}");
    }
    Ok(())
}

/// `topology --topology sorting-fat-tree`: the meshes, and per depth the flexible sorters and
/// channel capacities (notes-001 §5.1).
pub fn describe_fat_tree(args: &SimArgs) -> Result<()> {
    let c = args.resolve(SimConfig::default())?;
    let n = c.inputs;
    let t = flitforge::sorter::fattree::FatTree::new(
        n,
        args.body_bits.unwrap_or(2 * n.trailing_zeros()),
    )?;
    say!(
        "sorting-fat-tree: N = {n}, {} meshes of {} x {} terminals at depth {}, words of b = {} bits",
        n / (t.mesh * t.mesh),
        t.mesh,
        t.mesh,
        t.depth,
        t.bits
    );
    say!("depth  nodes  terminals  sorter (b, s, l)  cells/ring  channel above");
    for d in 0..t.depth {
        let p = t.sorter(d);
        let cap = if d == 0 {
            "-".to_string()
        } else {
            t.capacity(d).to_string()
        };
        say!(
            "{d:>5}  {:>5}  {:>9}  ({}, {}, {}){:>w$}  {:>10}  {cap:>13}",
            1u32 << d,
            t.terminals(d),
            p.bits,
            p.s,
            p.l,
            "",
            p.cells(),
            w = 16usize.saturating_sub(format!("({}, {}, {})", p.bits, p.s, p.l).len())
        );
    }
    say!(
        "{:>5}  {:>5}  {:>9}  mesh {} x {}{:>8}  {:>10}  {:>13}",
        t.depth,
        1u32 << t.depth,
        t.terminals(t.depth),
        t.mesh,
        t.mesh,
        "",
        "-",
        t.capacity(t.depth)
    );
    Ok(())
}

/// `topology --topology pruned-butterfly`: counts, widths and capacities per level.
pub fn describe_pruned(n: u32) -> Result<()> {
    let g = flitforge::topology::pruned::PrunedButterfly::new(n)?;
    say!(
        "pruned-butterfly: N = {n}, {} levels, {} vertices (4N - 3 sqrt N), {} edges (6N - 6 sqrt N)",
        g.levels() + 1,
        g.vertex_count(),
        g.edge_count()
    );
    say!("level  nodes  vertices/node W  capacity above  up-ports");
    for i in 0..=g.levels() {
        let cap = if i == 0 {
            "-".to_string()
        } else {
            g.capacity(i).to_string()
        };
        say!(
            "{i:>5}  {:>5}  {:>15}  {cap:>14}  {:>8}",
            1u32 << i,
            g.width(i),
            g.up_degree(i)
        );
    }
    Ok(())
}

/// `sort`: sorts `r` random words on the circuit and checks the output.
pub fn sort(sorter: &SorterArgs, seed: u64, vcd: Option<&str>, json: Option<&str>) -> Result<()> {
    let config = sorter.config(seed)?;
    let command = command_line();
    let run = match &vcd {
        None => config.run(None, &command)?,
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
            let mut out = std::io::BufWriter::new(file);
            let run = config.run(Some(&mut out), &command)?;
            say!("waveform written to {path}");
            run
        }
    };
    let p = config.params;
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
    if let Some(path) = json {
        let j = serde_json::json!({
            "config": config, "config_hash": config.config_hash(),
            "cycles": run.cycles, "w": run.w, "phases": run.phases, "output": run.output,
        });
        write(path, &format!("{j:#}\n"))?;
        say!("result written to {path}");
    }
    Ok(())
}

/// `experiment flexible-sorter` and `experiment sorting-fat-tree`.
pub fn sorter_experiment(
    which: &str,
    sizes: Vec<u32>,
    sorter: &SorterArgs,
    seeds: u64,
    engine: &str,
    out: &str,
) -> Result<()> {
    use flitforge::sorter::experiment;
    let dir = std::path::Path::new(&out);
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    if engine != "golden" {
        return Err(Error::invalid(
            "engine",
            engine,
            "no value for this experiment",
        ));
    }
    let (csv, text, charts) = if which == "flexible-sorter" {
        if !sizes.is_empty() {
            return Err(Error::invalid(
                "sizes",
                "given",
                "no value for the flexible sorter (use --s, --l, --bits)",
            ));
        }
        let params = if sorter.given() {
            vec![sorter.config(1)?.params]
        } else {
            vec![
                SorterParams {
                    s: 8,
                    l: 64,
                    bits: 8,
                },
                SorterParams {
                    s: 16,
                    l: 256,
                    bits: 8,
                },
            ]
        };
        let points = experiment::sorter_sweep(&params, seeds, |p| {
            eprintln!(
                "(b, s, l) = ({}, {}, {}), r = {}: {} cycles (w = {}, {} phases)",
                p.bits, p.s, p.l, p.r, p.cycles, p.w, p.phases
            );
        })?;
        let (text, charts) = experiment::sorter_report(&points);
        (experiment::sorter_csv(&points), text, charts)
    } else {
        if sorter.given() {
            return Err(Error::invalid(
                "s, l, r, bits",
                "given",
                "no value for the sorting fat-tree (node sorters follow from N)",
            ));
        }
        let sizes = if sizes.is_empty() {
            vec![256, 1024, 4096, 16384]
        } else {
            sizes
        };
        let points = experiment::tree_sweep(&sizes, seeds, |p| {
            eprintln!(
                "N = {} {} seed {}: {} cycles, lambda {:.2}",
                p.n, p.workload, p.seed, p.cycles, p.lambda
            );
        })?;
        experiment::tree_report(&points)
    };
    let path = dir.join("runs.csv");
    write(&path.to_string_lossy(), &csv)?;
    say!("{}", path.display());
    for (name, svg) in charts {
        let path = dir.join(name);
        write(&path.to_string_lossy(), &svg)?;
        say!("{}", path.display());
    }
    say!("{text}");
    Ok(())
}

/// `experiment pruned-butterfly`.
pub fn pruned_experiment(
    sizes: Vec<u32>,
    sorter: &SorterArgs,
    seeds: u64,
    engine: &str,
    out: &str,
) -> Result<()> {
    if sorter.given() {
        return Err(Error::invalid(
            "s, l, r, bits",
            "given",
            "no value for the pruned butterfly",
        ));
    }
    let sizes = if sizes.is_empty() {
        vec![16, 64, 256, 1024, 4096]
    } else {
        sizes
    };
    use flitforge::pruned::experiment;
    let engine = parse_name::<Engine>("engine", engine, "cycle|golden")?;
    let sizes = experiment::checked_sizes(&sizes)?;
    let total = sizes.len() * experiment::workloads().len() * seeds as usize;
    let mut done = 0;
    let runs = experiment::run(&sizes, seeds, engine, |r| {
        done += 1;
        eprintln!(
            "[{done}/{total}] N = {} {} seed {}: {} cycles, lambda {:.2}, {} sidetracked",
            r.leaves, r.workload, r.seed, r.routing_cycles, r.lambda_dir, r.sidetracked
        );
    })?;
    let fit = experiment::fit(&runs);
    let dir = std::path::Path::new(&out);
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let csv = dir.join("runs.csv");
    write(&csv.to_string_lossy(), &experiment::to_csv(&runs))?;
    say!("{}", csv.display());
    for (name, svg) in experiment::charts(&runs, &fit) {
        let path = dir.join(name);
        write(&path.to_string_lossy(), &svg)?;
        say!("{}", path.display());
    }
    let summary = dir.join("summary.json");
    let json = serde_json::json!({
        "fit": fit, "runs": runs.len(), "sizes": sizes, "seeds": seeds, "engine": engine
    });
    write(&summary.to_string_lossy(), &format!("{json:#}\n"))?;
    say!("{}", summary.display());
    say!("{}", experiment::summary(&runs, &fit));
    Ok(())
}
