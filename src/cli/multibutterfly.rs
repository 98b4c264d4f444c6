//! `faults` and `multibutterfly`: fault placement and one routing on [LM]'s networks; the
//! experiments are in [`super::experiment`]. Thin: flags become
//! library configurations, results are printed or written as the library formats them.

use super::args::parse_name;
use super::command_line;
use super::files::{AtomicFile, write};
use clap::Args;
use flitforge::config::LaneChoice;
use flitforge::multibutterfly::faults::{self, Interior};
use flitforge::multibutterfly::run::GreedyRunConfig;
use flitforge::multibutterfly::theory::{self, Theory};
use flitforge::multibutterfly::upfal::{self, UpfalConfig};
use flitforge::multibutterfly::wave::GreedyVcd;
use flitforge::rng::{Stream, stream};
use flitforge::run::{RunConfig, RunReport};
use flitforge::topology::{FirstMatching, SplitterWiring, TopologyKind, WiringGenerator};
use flitforge::wave::ScopeFilter;
use flitforge::{Error, Result};

/// Network, wiring and fault-rule options shared by `faults` and `multibutterfly`.
#[derive(Args, Clone)]
pub struct NetworkArgs {
    /// modified-splitter ([LM] §IV: a level of matchings, splitters, a 4x4 stage; d = 2),
    /// splitter (randomly wired, multiplicity --dilation), butterfly, or dilated (--dilation
    /// lanes per edge). [default: modified-splitter; with --algorithm upfal: splitter, the only
    /// one it takes]
    #[arg(long, value_parser = ["modified-splitter", "splitter", "butterfly", "dilated"])]
    topology: Option<String>,
    /// Inputs N, a power of two (modified: from 4).
    #[arg(long, default_value_t = 1024)]
    inputs: u32,
    /// Multiplicity d of splitter and dilated networks, 1..=8 (the modified splitter network
    /// has 2). [default: 2; with --algorithm upfal: 4]
    #[arg(long, value_name = "D")]
    dilation: Option<u32>,
    #[command(flatten)]
    wiring: WiringArgs,
    /// Random faults placed on the interior levels (--interior; never on the outputs).
    /// `multibutterfly` routes around faults on the modified and splitter networks only.
    #[arg(long, default_value_t = 0)]
    faults: u32,
    /// Interior levels as FIRST..LAST in [LM]'s numbering (modified splitter network: level
    /// −1 is the matching level). [default: every level between the inputs and the outputs]
    #[arg(long, value_name = "FIRST..LAST", allow_hyphen_values = true)]
    interior: Option<String>,
    /// Modified splitter network, level −1: faulty when all four neighbours are (all), or when
    /// both links of matchings 0-1 or of 2-3 lead to faulty switches (pairs). [default: all]
    #[arg(long, value_parser = ["all", "pairs"])]
    input_rule: Option<String>,
    /// How the --faults switches are drawn: distinct (exactly that many are faulty) or
    /// with-replacement (that many uniform draws; a switch drawn twice counts once).
    /// [default: distinct]
    #[arg(long, value_parser = ["distinct", "with-replacement"])]
    fault_draw: Option<String>,
    /// Seed of the wiring, the faults and the destinations.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// How random splitters are wired (docs/interpretations.md, 'Wiring of random splitters').
#[derive(Args, Clone, Default)]
pub struct WiringArgs {
    /// configuration (a random matching of link stubs), rounds (d balanced random rounds) or
    /// butterfly-plus-random (lane 0 the butterfly's edge, the other lanes random).
    /// [default: configuration; experiment leighton-maggs: butterfly-plus-random]
    #[arg(long, value_parser = ["configuration", "rounds", "butterfly-plus-random"])]
    wiring: Option<String>,
    /// Modified splitter network: the first of level −1's four matchings, identity or random.
    /// [default: random; experiment leighton-maggs: identity]
    #[arg(long, value_parser = ["identity", "random"])]
    first_matching: Option<String>,
    /// Keep parallel links (without it they are swapped away where possible, as [LM] did).
    #[arg(long)]
    no_cleanup: bool,
}

impl WiringArgs {
    /// The wiring the flags give, `default` where they are silent.
    pub fn wiring_or(&self, default: SplitterWiring) -> Result<SplitterWiring> {
        let mut w = default;
        if let Some(g) = &self.wiring {
            w.generator = parse_name::<WiringGenerator>(
                "wiring",
                g,
                "configuration|rounds|butterfly-plus-random",
            )?;
        }
        if let Some(m) = &self.first_matching {
            w.first_matching = parse_name::<FirstMatching>("first-matching", m, "identity|random")?;
        }
        w.cleanup = !self.no_cleanup;
        Ok(w)
    }

    /// The wiring the flags give, [`SplitterWiring::default`] where they are silent.
    pub fn wiring(&self) -> Result<SplitterWiring> {
        self.wiring_or(SplitterWiring::default())
    }
}

/// Parses `--interior FIRST..LAST`.
pub fn interior(spec: Option<&str>) -> Result<Interior> {
    let Some(spec) = spec else {
        return Ok(Interior::default());
    };
    let bad = || Error::invalid("interior", spec, "FIRST..LAST, e.g. 0..8 or -1..7");
    let (a, b) = spec.split_once("..").ok_or_else(bad)?;
    let a = a.trim().parse::<i32>().map_err(|_| bad())?;
    let b = b.trim().parse::<i32>().map_err(|_| bad())?;
    Ok(Interior {
        levels: Some((a, b)),
    })
}

impl NetworkArgs {
    fn network(&self) -> &str {
        self.topology.as_deref().unwrap_or("modified-splitter")
    }

    /// The network and fault part of a greedy run, checked: `--dilation` only where it has
    /// an effect.
    fn run_config(&self) -> Result<GreedyRunConfig> {
        let topology = parse_name::<TopologyKind>(
            "topology",
            self.network(),
            "modified-splitter|splitter|butterfly|dilated",
        )?;
        let fixed = match topology {
            TopologyKind::ModifiedSplitter => {
                Some((2, "2 (the modified network has multiplicity 2)"))
            }
            TopologyKind::Butterfly => Some((1, "1 (the butterfly)")),
            _ => None,
        };
        if let (Some((d, allowed)), Some(given)) = (fixed, self.dilation)
            && given != d
        {
            return Err(Error::invalid("dilation", given, allowed));
        }
        let config = GreedyRunConfig {
            topology,
            inputs: self.inputs,
            dilation: self.dilation.unwrap_or(2),
            wiring: self.wiring.wiring()?,
            faults: self.faults,
            interior: interior(self.interior.as_deref())?,
            fault_draw: parse_name(
                "fault-draw",
                self.fault_draw.as_deref().unwrap_or("distinct"),
                "distinct|with-replacement",
            )?,
            input_rule: parse_name(
                "input-rule",
                self.input_rule.as_deref().unwrap_or("all"),
                "all|pairs",
            )?,
            seed: self.seed,
            ..GreedyRunConfig::default()
        };
        config.validate()?;
        Ok(config)
    }
}

/// `flitforge faults`.
#[derive(Args)]
pub struct FaultArgs {
    #[command(flatten)]
    net: NetworkArgs,
    /// experiment ([LM] §IV: all d links of a direction) or theory (§III-A: erase
    /// splitters with more than an ε fraction of faulty inputs, then at least half the links).
    #[arg(long, default_value = "experiment", value_parser = ["experiment", "theory"])]
    rules: String,
    /// Theory rules: the splitters' expansion α, 0 < α <= 1/2. [default: 0.125]
    #[arg(long)]
    alpha: Option<f64>,
    /// Theory rules: the splitters' expansion β, floor(d/2) + 1 < β <= d (so d >= 3).
    /// [default: none, required with --rules theory]
    #[arg(long)]
    beta: Option<f64>,
    /// Write the counts as JSON ("-": standard output). [default: not written]
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
}

/// `flitforge faults`: place, propagate, count.
pub fn faults(args: &FaultArgs) -> Result<()> {
    let net = &args.net;
    let config = net.run_config()?;
    let topo = config.network()?;
    let mut rng = stream(net.seed, Stream::Routing);
    let mut f = faults::place_random(
        &topo,
        config.faults,
        config.interior,
        config.fault_draw,
        &mut rng,
    )?;
    let json = if args.rules == "theory" {
        refuse_given(
            &[
                ("interior", net.interior.is_some()),
                ("input-rule", net.input_rule.is_some()),
            ],
            "no value with --rules theory",
        )?;
        let d = topo.multiplicity;
        if !matches!(net.network(), "splitter" | "dilated") || d < 3 {
            return Err(Error::invalid(
                "topology",
                format!("{} with d = {d}", net.network()),
                "splitter or dilated with --dilation 3 or more for --rules theory (beta must exceed floor(d/2) + 1 and be at most d)",
            ));
        }
        let beta = args.beta.ok_or_else(|| {
            Error::invalid(
                "beta",
                "none",
                format!("{} < beta <= {d} with --rules theory", d / 2 + 1),
            )
        })?;
        let theory = Theory::new(args.alpha.unwrap_or(0.125), beta, d)?;
        let s = theory::survivors(&topo, &mut f, &theory)?;
        say!(
            "{} {}-input network, d = {d}: {} faults placed; epsilon = {:.4}, beta' = {:.3}",
            net.network(),
            topo.n,
            s.faults,
            theory.epsilon,
            theory.beta_prime
        );
        say!(
            "erased {} splitters, propagated {} faults (at least half the links rule)",
            s.erased_splitters,
            s.propagated
        );
        say!(
            "surviving inputs {} (Theorem 3.4: >= {:.1}), outputs {} (>= {:.1})",
            s.inputs,
            s.input_bound,
            s.outputs,
            s.output_bound
        );
        census(
            &config,
            serde_json::json!({ "rules": "theory", "theory": theory, "survivors": s }),
        )
    } else {
        refuse_given(
            &[
                ("alpha", args.alpha.is_some()),
                ("beta", args.beta.is_some()),
            ],
            "no value with --rules experiment",
        )?;
        let propagated = faults::propagate(&topo, &mut f, config.input_rule);
        say!(
            "{} {}-input network: {} faults placed, {} propagated, {} inputs faulty ({})",
            net.network(),
            topo.n,
            f.placed_count(),
            propagated,
            f.faulty_inputs(&topo),
            if f.faulty_inputs(&topo) > 0 {
                "the faults reached the inputs"
            } else {
                "every input survives"
            }
        );
        census(
            &config,
            serde_json::json!({
                "rules": "experiment", "placed": f.placed_count(), "propagated": propagated,
                "faulty_inputs": f.faulty_inputs(&topo)
            }),
        )
    };
    if let Some(path) = &args.json {
        write(path, &format!("{json:#}\n"))?;
    }
    Ok(())
}

/// `faults --json`: the network's identification (as a report's common keys spell it) with
/// the counts; it routes nothing, so it has no `messages` (docs/report-schema.md).
fn census(config: &GreedyRunConfig, counts: serde_json::Value) -> serde_json::Value {
    let mut network = config.to_value();
    if let Some(map) = network.as_object_mut() {
        for key in ["algorithm", "greedy", "problem"] {
            map.remove(key);
        }
    }
    serde_json::json!({
        "schema": flitforge::run::SCHEMA,
        "flitforge": env!("CARGO_PKG_VERSION"),
        "topology": config.topology.name(),
        "config": network,
        "seed": config.seed,
        "faults": counts,
    })
}

/// `flitforge multibutterfly`.
#[derive(Args)]
pub struct RouteArgs {
    #[command(flatten)]
    net: NetworkArgs,
    /// greedy ([LM] §IV store-and-forward) or upfal (§II-A wave algorithm on a random
    /// splitter network of multiplicity --dilation, with --permutations front levels).
    #[arg(long, default_value = "greedy", value_parser = ["greedy", "upfal"])]
    algorithm: String,
    /// Greedy: the problem, C or CT with C in 1..=64 (C packets per input, random
    /// destinations or transpose; [LM] §IV's are 1, 10, 1T, 10T). [default: 1]
    #[arg(long)]
    problem: Option<String>,
    /// Greedy: a link is used only if its head held at most this many packets at the end of
    /// the previous step. [default: 4]
    #[arg(long)]
    max_held: Option<u32>,
    /// Greedy: which eligible link a packet takes: lowest, random (uniform, by a per-switch
    /// LFSR) or least-loaded (fewest packets at the head). [default: lowest]
    #[arg(long, value_parser = ["lowest", "random", "least-loaded"])]
    lane_choice: Option<String>,
    /// Upfal: permutations routed at once, P. [default: 1]
    #[arg(long)]
    permutations: Option<u32>,
    /// Upfal: the wave modulus L, a power of two. [default: 16]
    #[arg(long)]
    wave_modulus: Option<u32>,
    /// Upfal: the splitters' assumed expansion β for σ, ρ and the Theorem 2.1 bound
    /// (0 < β <= d). It is not measured. [default: min(4, d)]
    #[arg(long)]
    beta: Option<f64>,
    /// Upfal: the front levels (with --permutations 2 or more): copies of the first splitter
    /// level or random matchings. [default: copies]
    #[arg(long, value_parser = ["copies", "matchings"])]
    front: Option<String>,
    /// Run the configuration of a report (its `config`, with `algorithm` greedy or upfal;
    /// TOML or JSON) instead of the flags above. [default: none]
    #[arg(long, value_name = "FILE", conflicts_with_all = CONFIG_CONFLICTS)]
    config: Option<String>,
    /// Write the report (docs/report-schema.md) as JSON ("-": standard output).
    /// [default: not written]
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Greedy: write every switch's queue registers (q_count, q_packet_s*) as VCD, under
    /// tb.net.l{level}_c{column} (level 0 = the input level). [default: not written]
    #[arg(long, value_name = "FILE.vcd")]
    vcd: Option<String>,
    /// Only the switches whose scope matches one of these comma-separated globs.
    /// [default: every switch]
    #[arg(long, value_name = "GLOBS", requires = "vcd")]
    vcd_scope: Option<String>,
}

/// Flags a config file replaces.
const CONFIG_CONFLICTS: [&str; 17] = [
    "topology",
    "inputs",
    "dilation",
    "wiring",
    "no_cleanup",
    "faults",
    "interior",
    "input_rule",
    "seed",
    "algorithm",
    "problem",
    "max_held",
    "lane_choice",
    "permutations",
    "wave_modulus",
    "beta",
    "front",
];

/// `flitforge multibutterfly`: one routing.
pub fn route(args: &RouteArgs) -> Result<()> {
    super::files::outputs_apart(
        &[("json", args.json.as_deref()), ("vcd", args.vcd.as_deref())],
        &args.config.iter().map(String::as_str).collect::<Vec<_>>(),
    )?;
    let run = match &args.config {
        Some(path) => RunConfig::from_file(path)?,
        None if args.algorithm == "upfal" => RunConfig::Upfal(upfal_config(args)?),
        None => RunConfig::Greedy(greedy_config(args)?),
    };
    let report = match &run {
        RunConfig::Greedy(c) => route_greedy(c, args)?,
        RunConfig::Upfal(c) => route_upfal(c, args)?,
        other => {
            return Err(Error::invalid(
                "config",
                format!("a {} configuration", other.topology()),
                "one with algorithm greedy or upfal (other runs take `flitforge sim --config`)",
            ));
        }
    };
    if let Some(path) = &args.json {
        write(path, &report.to_json())?;
    }
    Ok(())
}

/// The first flag of `flags` given (`true`) is an error: `--flag` takes `allowed`.
fn refuse_given(flags: &[(&str, bool)], allowed: &str) -> Result<()> {
    match flags.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(Error::invalid(flag, "given", allowed)),
        None => Ok(()),
    }
}

fn greedy_config(args: &RouteArgs) -> Result<GreedyRunConfig> {
    let upfal_only = [
        ("permutations", args.permutations.is_some()),
        ("wave-modulus", args.wave_modulus.is_some()),
        ("beta", args.beta.is_some()),
        ("front", args.front.is_some()),
    ];
    refuse_given(&upfal_only, "no value with --algorithm greedy")?;
    let mut config = args.net.run_config()?;
    if let Some(p) = &args.problem {
        config.problem = p.parse()?;
    }
    if let Some(m) = args.max_held {
        config.greedy.max_held = m;
    }
    if let Some(c) = &args.lane_choice {
        config.greedy.lane_choice =
            parse_name::<LaneChoice>("lane-choice", c, "lowest|random|least-loaded")?;
    }
    config.validate()?;
    Ok(config)
}

fn route_greedy(config: &GreedyRunConfig, args: &RouteArgs) -> Result<RunReport> {
    let mut run = config.prepare()?;
    let out = match &args.vcd {
        Some(path) => {
            let filter = ScopeFilter::new(args.vcd_scope.as_deref().unwrap_or(""))?;
            let mut file = AtomicFile::create(path)?;
            let mut vcd = GreedyVcd::new(
                file.writer(),
                run.router.fabric(),
                run.destinations.len() as u32,
                &filter,
                &command_line(),
            )?;
            let out = run.router.run(|fabric, cycle| vcd.sample(fabric, cycle))?;
            vcd.finish()?;
            file.commit()?;
            out
        }
        None => run.router.run(|_, _| Ok(()))?,
    };
    let topo = &run.router.fabric().topo;
    say!(
        "greedy store-and-forward, {} {}-input network (depth {}), problem {}: {} packets",
        config.topology.name(),
        topo.n,
        topo.depth(),
        config.problem,
        out.packets
    );
    let faults = (run.faults.placed_count(), run.faults.propagated_count());
    if config.faults > 0 {
        say!(
            "faults: {} placed, {} propagated, {} placement(s) drawn until every input survived",
            faults.0,
            faults.1,
            run.placements
        );
    }
    say!(
        "completion {} steps; never delayed {:.2}% ({} packets); longest queue {}",
        out.completion,
        out.never_delayed_percent(),
        out.never_delayed,
        out.max_queue
    );
    Ok(RunReport::greedy(config, &out, faults, run.placements))
}

fn upfal_config(args: &RouteArgs) -> Result<UpfalConfig> {
    let net = &args.net;
    if let Some(network) = net.topology.as_deref().filter(|&n| n != "splitter") {
        return Err(Error::invalid(
            "topology",
            network,
            "splitter with --algorithm upfal (a multibutterfly; the default)",
        ));
    }
    let greedy_only = [
        ("faults", net.faults > 0),
        ("interior", net.interior.is_some()),
        ("input-rule", net.input_rule.is_some()),
        ("problem", args.problem.is_some()),
        ("max-held", args.max_held.is_some()),
        ("lane-choice", args.lane_choice.is_some()),
    ];
    refuse_given(
        &greedy_only,
        "no value with --algorithm upfal (it routes --permutations random permutations on a fault-free multibutterfly)",
    )?;
    let defaults = UpfalConfig::default();
    let d = net.dilation.unwrap_or(defaults.multiplicity);
    let config = UpfalConfig {
        inputs: net.inputs,
        multiplicity: d,
        permutations: args.permutations.unwrap_or(defaults.permutations),
        wave_modulus: args.wave_modulus.unwrap_or(defaults.wave_modulus),
        beta: args.beta.unwrap_or(f64::from(d.min(4))),
        wiring: net.wiring.wiring()?,
        front: match &args.front {
            Some(f) => parse_name("front", f, "copies|matchings")?,
            None => defaults.front,
        },
        seed: net.seed,
        ..defaults
    };
    config.validate()?;
    Ok(config)
}

fn route_upfal(config: &UpfalConfig, args: &RouteArgs) -> Result<RunReport> {
    refuse_given(
        &[("vcd", args.vcd.is_some())],
        "no value with algorithm upfal (waveforms are written for greedy routing)",
    )?;
    config.validate()?;
    let perms = upfal::random_permutations(config.inputs, config.permutations, config.seed);
    let r = upfal::route(config, &perms)?;
    say!(
        "Upfal's wave algorithm, {}-input multibutterfly d = {}, P = {}, L = {}: {} packets in {} steps ({} stages)",
        config.inputs,
        config.multiplicity,
        config.permutations,
        config.wave_modulus,
        r.delivered,
        r.steps,
        r.stages
    );
    say!(
        "Theorem 2.1 bound {:.0} steps for an assumed expansion beta = {3} (nu = {1}, w = {2:.4}: sigma = {4:.4}, rho = {5:.4}); worst stage potential ratio {6:.4}; Lemma 2.5 held in {7} checks",
        r.bound_steps,
        config.nu,
        config.w,
        config.beta,
        r.sigma,
        r.rho,
        r.worst_stage_ratio,
        r.lemma_2_5_checks
    );
    Ok(RunReport::upfal(config, &r))
}
