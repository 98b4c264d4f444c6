//! `topology`: a network's structure, counts and per level what it has.

use super::args::{NetworkArgs, RunFlags, SerialArgs, TrafficArgs};
use clap::Args;
use flitforge::config::SimConfig;
use flitforge::run::RunConfig;
use flitforge::sorter::fattree::FatTreeConfig;
use flitforge::{Error, Result};

/// `flitforge topology`.
#[derive(Args, Clone, Default)]
pub struct TopologyArgs {
    #[command(flatten)]
    pub net: NetworkArgs,
    #[command(flatten)]
    pub serial: SerialArgs,
    /// Seed of the splitters' random wiring.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Splitter networks: the largest input set whose expansion is measured, as a fraction α
    /// of a splitter's inputs, in (0, 1] (as faults --rules theory). [default: 0.125]
    #[arg(long, value_name = "ALPHA")]
    pub alpha: Option<f64>,
}

/// `flitforge topology`: counts, and per level what the topology has.
pub fn topology(args: &TopologyArgs) -> Result<()> {
    let traffic = TrafficArgs {
        seed: args.seed,
        ..TrafficArgs::default()
    };
    let flags = RunFlags {
        net: &args.net,
        switch: None,
        serial: Some(&args.serial),
        traffic: &traffic,
    };
    let run = flags.resolve(SimConfig::default())?;
    let splitter = matches!(&run, RunConfig::Network(c) if c.topology.name() == "splitter");
    if args.seed.is_some() && !splitter {
        return Err(Error::invalid(
            "seed",
            "given",
            "no value: --seed applies only with --topology splitter (its random wiring)",
        ));
    }
    if matches!(run, RunConfig::PrunedButterfly(_)) && args.serial.body_bits.is_some() {
        return Err(Error::invalid(
            "body-bits",
            "given",
            "no value: --body-bits applies only with --topology sorting-fat-tree here",
        ));
    }
    if args.alpha.is_some()
        && !matches!(&run, RunConfig::Network(c) if c.topology.name() == "splitter")
    {
        return Err(Error::invalid(
            "alpha",
            "given",
            "no value: --alpha applies only with --topology splitter",
        ));
    }
    match run {
        RunConfig::Network(c) => describe_network(&c, args.alpha.unwrap_or(0.125)),
        RunConfig::PrunedButterfly(c) => describe_pruned(c.inputs),
        RunConfig::SortingFatTree(c) => describe_fat_tree(&c),
        RunConfig::FlexibleSorter(_) | RunConfig::Greedy(_) | RunConfig::Upfal(_) => {
            unreachable!("resolve refuses circuits and packet routings")
        }
    }
}

fn describe_network(config: &SimConfig, alpha: f64) -> Result<()> {
    use flitforge::topology::{expansion, parallel_links};
    if !(alpha > 0.0 && alpha <= 1.0) {
        return Err(Error::invalid("alpha", alpha, "(0, 1]"));
    }
    config.validate()?;
    let topo = flitforge::sim::build_topology(config)?;
    if topo.kind == flitforge::topology::TopologyKind::KaryFly {
        say!(
            "kary-fly: {} terminals, k = {}, {} stages of {} switches ({}x{}) and an ejection level, {} links ({} per stage)",
            topo.terminals(),
            topo.radix,
            topo.levels - 1,
            topo.n,
            topo.radix,
            topo.radix,
            topo.links.len(),
            topo.terminals()
        );
        return Ok(());
    }
    say!(
        "{}: n = {}, {} levels, {} switches, {} links ({} per level, multiplicity {}), {} parallel links",
        topo.kind.name(),
        topo.n,
        topo.levels,
        topo.node_count(),
        topo.links.len(),
        topo.links.len() as u32 / (topo.levels - 1),
        topo.multiplicity,
        parallel_links(&topo)
    );
    if topo.kind.name() != "splitter" {
        return Ok(());
    }
    say!(
        "level  inputs/splitter  min up  min down  (expansion at alpha = {alpha}, over all splitters, [LM] §I-C)"
    );
    for level in 0..topo.log_n.min(topo.levels - 1) {
        let (mut up, mut down, mut exact) = (f64::INFINITY, f64::INFINITY, true);
        for block in 0..1u32 << level {
            let e = expansion(&topo, level, block, alpha);
            up = up.min(e.up);
            down = down.min(e.down);
            exact &= e.exact;
        }
        let how = if exact { "exact" } else { "upper bound" };
        say!(
            "{level:>5}  {:>15}  {up:>6.3}  {down:>8.3}  {how}",
            topo.n >> level
        );
    }
    Ok(())
}

/// The pruned butterfly's counts, widths and capacities per level ([BB] §3.1).
fn describe_pruned(n: u32) -> Result<()> {
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

/// The sorting fat-tree's meshes, and per depth its flexible sorters and channel capacities
/// ([BB] §4.2).
fn describe_fat_tree(config: &FatTreeConfig) -> Result<()> {
    let t = config.tree()?;
    let n = config.inputs;
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
        let sorter = format!("({}, {}, {})", p.bits, p.s, p.l);
        say!(
            "{d:>5}  {:>5}  {:>9}  {sorter:<16}  {:>10}  {cap:>13}",
            1u32 << d,
            t.terminals(d),
            p.cells(),
        );
    }
    say!(
        "{:>5}  {:>5}  {:>9}  {:<16}  {:>10}  {:>13}",
        t.depth,
        1u32 << t.depth,
        t.terminals(t.depth),
        format!("mesh {} x {}", t.mesh, t.mesh),
        "-",
        t.capacity(t.depth)
    );
    Ok(())
}
