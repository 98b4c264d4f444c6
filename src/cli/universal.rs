//! `flitforge universal`: the universal continuous-routing protocols of [SV], one run at a time.

use super::files::{outputs_apart, write};
use clap::{Args, Subcommand, ValueEnum};
use flitforge::universal::batch::{self, Collection};
use flitforge::universal::continuous::{self, Burst, Outcome, Traffic, Window};
use flitforge::universal::growing_rank::{self, GrowingRank, GrowingRankNet, Overflow};
use flitforge::universal::trial::{TrialNet, TrialOverflow, TrialParams};
use flitforge::universal::{Net, NetKind};
use flitforge::{Error, Result};

#[derive(Subcommand)]
pub enum UniversalCommand {
    /// [SV] §2: store-and-forward with growing ranks. Every link has an unbounded queue that
    /// sends its lowest rank each cycle; a packet born in cycle t starts at rank t·K + k
    /// (k ∈ 1..=K at random) and gains m·K per link. Theorem 2.4: stable with O(D₀) routing
    /// time for any link load λ < 1/e (shortest paths), given m and K large enough.
    ///
    /// Examples:
    ///   flitforge universal growing-rank --topology butterfly --inputs 64 --load 0.3
    ///   flitforge universal growing-rank --topology mesh --inputs 64 --load 0.9 --json -
    #[command(verbatim_doc_comment)]
    GrowingRank(GrowingRankArgs),
    /// [SV] §3: bufferless wormhole trials. A worm's flits move one link per cycle and are
    /// never delayed; more than B flits at a link lose to the B lowest ranks and are cut
    /// there; a complete worm is acknowledged by a flit that travels back (and can be cut);
    /// a failed worm tries again R = 2D + L − 1 cycles after its last try. Theorem 3.1:
    /// expected routing time O(D + L) for λ ≤ B/(12e·L·(2D)^(1/B)).
    ///
    /// Examples:
    ///   flitforge universal trial --topology butterfly --inputs 64 --load 0.01 --bandwidth 2 --flits 8
    ///   flitforge universal trial --topology torus --inputs 64 --load 0.02 --bandwidth 4 --json -
    #[command(verbatim_doc_comment)]
    Trial(TrialArgs),
    /// [CMSV] Routing Algorithm 1: q packets per terminal to random destinations, routed in
    /// rounds; in round r every undelivered packet sends 2^r copies after random delays, and
    /// where more than B copies want a link in a cycle all of them are discarded. B defaults
    /// to the prescribed ⌈10 ln(CD)/ln ln(CD)⌉; a smaller --bandwidth shows the failure mode.
    ///
    /// Examples:
    ///   flitforge universal algorithm1 --topology butterfly --inputs 256 --q 4
    ///   flitforge universal algorithm1 --topology mesh --inputs 64 --q 2 --bandwidth 2 --json -
    #[command(verbatim_doc_comment)]
    Algorithm1(Alg1Args),
    /// [CMSV] Routing Algorithm 2: q worms per terminal, each with a rank and a delay drawn
    /// once; in every round's forward pass the B lowest ranks win a link and the rest are cut.
    /// --deterministic (butterfly only) runs Theorem 1.14(a)'s algorithm instead: ranks from
    /// the input's bit-reversed address, no random delay, concurrent passes.
    ///
    /// Examples:
    ///   flitforge universal algorithm2 --topology torus --inputs 64 --q 2 --bandwidth 2 --flits 8
    ///   flitforge universal algorithm2 --inputs 256 --q 8 --deterministic
    #[command(verbatim_doc_comment)]
    Algorithm2(Alg2Args),
    /// The protocols' switches as hardware on an n-input butterfly, register by register:
    /// [CMSV] Algorithm 1's switch (one forward pass of random copies; a link more than B
    /// want discards them all) or [SV]'s growing-rank store-and-forward switch (random
    /// packets for --cycles, queues of the slots the run needs). Writes the Verilog, the
    /// stimulus and the model's waveform (model.vcd) into --out, and with --simulator
    /// co-simulates: the RTL's waveform must equal the model's, bit for bit.
    ///
    /// Examples:
    ///   flitforge universal rtl --inputs 8 --bandwidth 2 --q 6 --simulator both --out build/cmsv
    ///   flitforge universal rtl --protocol growing-rank --inputs 8 --simulator both --out build/rank
    #[command(verbatim_doc_comment)]
    Rtl(RtlArgs),
}

#[derive(Args)]
pub struct RtlArgs {
    /// algorithm1 ([CMSV] §2) or growing-rank ([SV] §2).
    #[arg(long, default_value = "algorithm1", value_parser = ["algorithm1", "growing-rank"])]
    protocol: String,
    /// growing-rank: injection probability per input per cycle, in (0, 1].
    #[arg(long, default_value_t = 0.4)]
    rate: f64,
    /// growing-rank: cycles of injection (the run lasts twice as long, to drain), 1..=4096.
    #[arg(long, default_value_t = 32)]
    cycles: u64,
    /// growing-rank: rank step multiplier m, 2..=64.
    #[arg(long, default_value_t = 4)]
    rank_step: u32,
    /// growing-rank: random rank offsets K, 1..=256.
    #[arg(long, default_value_t = 8)]
    rank_offsets: u32,
    /// Butterfly inputs, a power of two in 4..=64.
    #[arg(long, default_value_t = 8)]
    inputs: u32,
    /// algorithm1: link bandwidth B (lanes per link), 1..=8.
    #[arg(long, default_value_t = 2)]
    bandwidth: u32,
    /// algorithm1: copies per input, each to a random output, 1..=64.
    #[arg(long, default_value_t = 4)]
    q: u32,
    /// algorithm1: copies start after a delay drawn from 0..DELAYS (the pass's C_r), 1..=1024.
    #[arg(long, default_value_t = 6)]
    delays: u64,
    /// Seed of the destinations and delays.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Co-simulate under this simulator (or both). [default: none, write only]
    #[arg(long, value_parser = ["iverilog", "verilator", "both"])]
    simulator: Option<String>,
    #[command(flatten)]
    out: super::experiment::OutDir,
}

#[derive(Args)]
struct BatchCommon {
    /// butterfly, mesh, torus or random-graph (as for growing-rank).
    #[arg(long, value_enum, default_value = "butterfly")]
    topology: Topology,
    /// Terminals (as for growing-rank).
    #[arg(long, default_value_t = 64)]
    inputs: u32,
    /// random-graph: links out of every switch, 1..=4.
    #[arg(long, default_value_t = 2)]
    degree: u32,
    /// Messages per terminal, each to a uniformly random destination, 1..=1024.
    #[arg(long, default_value_t = 4)]
    q: u32,
    /// α of the w.h.p. bounds (probability 1 - n^(-α)), 0..=16.
    #[arg(long, default_value_t = 1.0)]
    alpha: f64,
    /// Seed of the destinations, the wiring of a random graph and the algorithm's draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the run as JSON ("-": standard output). [default: not written]
    #[arg(long, value_name = "FILE|-")]
    json: Option<String>,
}

#[derive(Args)]
pub struct Alg1Args {
    #[command(flatten)]
    common: BatchCommon,
    /// Link bandwidth B, 1..=4096. [default: ⌈10 ln(CD)/ln ln(CD)⌉ with CD ≥ e^e]
    #[arg(long)]
    bandwidth: Option<u32>,
}

#[derive(Args)]
pub struct Alg2Args {
    #[command(flatten)]
    common: BatchCommon,
    /// Link bandwidth B, 1..=64.
    #[arg(long, default_value_t = 2)]
    bandwidth: u32,
    /// Flits per worm L, 1..=4096.
    #[arg(long, default_value_t = 8)]
    flits: u32,
    /// Draw ranks and delays again every round (the paper draws them once). [default: off]
    #[arg(long)]
    redraw: bool,
    /// Theorem 1.14(a)'s deterministic butterfly algorithm (--topology butterfly). [default:
    /// off]
    #[arg(long)]
    deterministic: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Topology {
    Butterfly,
    Mesh,
    Torus,
    RandomGraph,
}

impl From<Topology> for NetKind {
    fn from(t: Topology) -> NetKind {
        match t {
            Topology::Butterfly => NetKind::Butterfly,
            Topology::Mesh => NetKind::Mesh,
            Topology::Torus => NetKind::Torus,
            Topology::RandomGraph => NetKind::RandomGraph,
        }
    }
}

#[derive(Args)]
struct Common {
    /// butterfly: inputs at level 0, outputs at level lg n, bit-fixing paths ([SV] §2.2);
    /// mesh, torus: k × k switches, dimension-order paths; random-graph: a ring plus random
    /// chords, shortest paths.
    #[arg(long, value_enum, default_value = "butterfly")]
    topology: Topology,
    /// Terminals: butterfly inputs (a power of two, 4..=4096), mesh and torus switches (k²),
    /// random-graph switches (3..=4096).
    #[arg(long, default_value_t = 64)]
    inputs: u32,
    /// random-graph: links out of every switch, 1..=4.
    #[arg(long, default_value_t = 2)]
    degree: u32,
    /// Link load λ: messages per cycle the busiest link is offered (every terminal's
    /// generators together; [SV] §1). Per-generator rates follow from it. [default: none,
    /// required]
    #[arg(long)]
    load: f64,
    /// Cycles before the measured window. [default: 10·D (store-and-forward) or 10·R
    /// (wormhole), at least 1000]
    #[arg(long)]
    warmup: Option<u64>,
    /// Cycles of the measured window: messages born in it are measured, and the stability
    /// verdict is taken over it. 100..=100000000.
    #[arg(long, default_value_t = 10_000)]
    window: u64,
    /// Most cycles after the window for the measured messages to arrive before the run is
    /// reported not drained (unstable). [default: the window]
    #[arg(long)]
    drain: Option<u64>,
    /// Seed of the traffic, the wiring of a random graph and the protocol's draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A bad scenario ([SV] §4): multiply the generation rate by F for the last
    /// --burst-cycles of the warm-up; the window then measures the recovery (routing time by
    /// birth time). 1..=1000. [default: none]
    #[arg(long, value_name = "F")]
    burst_factor: Option<f64>,
    /// Cycles of the burst, at most the warm-up. [default: the warm-up's last half]
    #[arg(long, value_name = "W")]
    burst_cycles: Option<u64>,
    /// Also write the configuration and the outcome as JSON ("-": standard output).
    /// [default: not written]
    #[arg(long, value_name = "FILE|-")]
    json: Option<String>,
    /// Write the protocol's state cycle by cycle as a VCD waveform: per link what crossed it
    /// (growing-rank: queue length, the packet sent and its rank, overflow stack; trial: the
    /// B lanes' worm, rank, flit and acknowledgement, flits cut) and, for trials, per
    /// terminal the worms alive and stacked. Meant for short runs (--warmup, --window).
    /// [default: not written]
    #[arg(long, value_name = "FILE")]
    vcd: Option<String>,
}

#[derive(Args)]
pub struct GrowingRankArgs {
    #[command(flatten)]
    common: Common,
    /// Rank step multiplier m ≥ 2. [default: the smallest m of Theorem 2.4 for λ (ε ≤ 0.9),
    /// or 20 where λ is beyond the theorem]
    #[arg(long)]
    rank_step: Option<u32>,
    /// K: random rank offsets k ∈ 1..=K. [default: Theorem 2.4's K for λ, or 128]
    #[arg(long)]
    rank_offsets: Option<u32>,
    /// [SV] §4.1's recovery: packets older than T go to their link's overflow stack, popped
    /// with probability 1/(γ|E|) per cycle into a suspension of m·T cycles. [default: off]
    #[arg(long)]
    overflow_stacks: bool,
    /// T of the overflow stacks, 1..=16777216 cycles. [default: ⌈4(D + lg(N + |E|))⌉]
    #[arg(long, value_name = "T")]
    stack_age: Option<u64>,
    /// γ of the overflow stacks, at least 1. [default: 2/(1/e - λ), λ held below 1/e - 0.01]
    #[arg(long, value_name = "GAMMA")]
    stack_gamma: Option<f64>,
}

#[derive(Args)]
pub struct TrialArgs {
    #[command(flatten)]
    common: Common,
    /// Link bandwidth B: flits of distinct worms a link carries per cycle, 1..=64.
    #[arg(long, default_value_t = 2)]
    bandwidth: u32,
    /// Flits per worm L, 1..=4096.
    #[arg(long, default_value_t = 8)]
    flits: u32,
    /// [SV] §4.2's recovery: a worm that failed T trials goes to its generator's overflow
    /// stack, popped with probability λ/(6N) per cycle into a suspension of T·R cycles.
    /// [default: off]
    #[arg(long)]
    overflow_stacks: bool,
    /// T of the overflow stacks: failed trials, 1..=65536. [default: ⌈4 lg(N + D + L)⌉]
    #[arg(long, value_name = "T")]
    stack_trials: Option<u32>,
}

pub fn run(command: &UniversalCommand) -> Result<()> {
    match command {
        UniversalCommand::GrowingRank(a) => growing(a),
        UniversalCommand::Trial(a) => trial(a),
        UniversalCommand::Algorithm1(a) => algorithm1(a),
        UniversalCommand::Algorithm2(a) => algorithm2(a),
        UniversalCommand::Rtl(a) => rtl(a),
    }
}

/// Bytes a message in the system takes at most (record, path, queue entry).
fn message_bytes(dilation: u32, flits: u32) -> u64 {
    128 + 4 * u64::from(dilation) + 4 * u64::from(flits)
}

fn prepare(c: &Common, flits: u32) -> Result<(Net, Traffic)> {
    if !(100..=100_000_000).contains(&c.window) {
        return Err(Error::invalid("window", c.window, "100..=100000000 cycles"));
    }
    if let Some(d) = c.drain
        && d > 1_000_000_000
    {
        return Err(Error::invalid("drain", d, "0..=1000000000 cycles"));
    }
    if let Some(w) = c.warmup
        && w > 1_000_000_000
    {
        return Err(Error::invalid("warmup", w, "0..=1000000000 cycles"));
    }
    if !c.load.is_finite() {
        return Err(Error::invalid("load", c.load, "a positive number"));
    }
    outputs_apart(
        &[("json", c.json.as_deref()), ("vcd", c.vcd.as_deref())],
        &[],
    )?;
    let net = Net::new(c.topology.into(), c.inputs, c.degree, c.seed)?;
    let traffic = Traffic::at_load(&net, c.load, flits)?;
    Ok((net, traffic))
}

/// Bytes a waveform of `signals` signals over `w`'s cycles may take (every signal changing
/// every cycle, about 20 bytes a change).
fn vcd_estimate(signals: u64, w: &Window) -> flitforge::limits::Estimate {
    let cycles = w.warmup + w.window + w.drain;
    flitforge::limits::Estimate::new().with(
        "waveform",
        signals.saturating_mul(cycles).saturating_mul(20),
    )
}

/// Runs `protocol`, writing its waveform when `c.vcd` asks for one.
fn run_protocol(
    c: &Common,
    net: &Net,
    traffic: &Traffic,
    w: Window,
    protocol: &mut dyn continuous::Protocol,
) -> Result<Outcome> {
    let Some(path) = &c.vcd else {
        return continuous::run(net, traffic, w, c.seed, protocol);
    };
    let scopes = protocol.wave_scopes(net);
    let signals: u64 = scopes.iter().map(|(_, d)| d.len() as u64).sum();
    vcd_estimate(signals, &w).check_output("vcd", std::path::Path::new(path))?;
    let mut file = super::files::AtomicFile::create(path)?;
    let header = super::command_line();
    let o = continuous::run_with_wave(
        net,
        traffic,
        w,
        c.seed,
        protocol,
        Some((file.writer(), &header)),
    )?;
    file.commit()?;
    Ok(o)
}

fn window(c: &Common, warmup: u64, dilation: u32, flits: u32) -> Result<Window> {
    let (limit, _) = flitforge::limits::memory_limit();
    let warmup = c.warmup.unwrap_or(warmup.max(1000));
    let burst = match (c.burst_factor, c.burst_cycles) {
        (None, None) => None,
        (None, Some(w)) => {
            return Err(Error::invalid(
                "burst-cycles",
                w,
                "a burst with --burst-factor",
            ));
        }
        (Some(f), w) => {
            if !(f.is_finite() && (1.0..=1000.0).contains(&f)) {
                return Err(Error::invalid("burst-factor", f, "1..=1000"));
            }
            let cycles = w.unwrap_or(warmup / 2);
            if !(1..=warmup).contains(&cycles) {
                return Err(Error::invalid(
                    "burst-cycles",
                    cycles,
                    format!("1..={warmup} (the warm-up)"),
                ));
            }
            Some(Burst { cycles, factor: f })
        }
    };
    Ok(Window {
        warmup,
        window: c.window,
        drain: c.drain.unwrap_or(c.window),
        max_buffered: (limit / 2 / message_bytes(dilation, flits)).min(1 << 26),
        burst,
    })
}

fn describe(net: &Net, traffic: &Traffic) -> String {
    format!(
        "{} of {} terminals ({} switches, {} links, D = {}); load λ = {} ({} generator(s) per terminal at p = {})",
        net.kind.name(),
        net.terminals,
        net.graph.nodes,
        net.data_links(),
        net.dilation(),
        traffic.load,
        traffic.generators,
        flitforge::stats::round6(traffic.p)
    )
}

fn report(o: &Outcome) {
    say!(
        "cycles {}: {} generated, {} measured, {} delivered",
        o.cycles,
        o.generated,
        o.measured,
        o.delivered_measured
    );
    say!(
        "routing time (tail arrival - birth + 1): mean {:.3}, p50 {}, p99 {}, max {}; mean time / D0 {:.3}; delay mean {:.3}, p99 {}",
        o.latency.mean,
        o.latency.p50,
        o.latency.p99,
        o.latency.max,
        o.stretch,
        o.delay.mean,
        o.delay.p99
    );
    if let Some(r) = &o.recovery {
        let means: Vec<String> = r
            .means
            .iter()
            .map(|m| m.map_or("-".into(), |m| format!("{m:.1}")))
            .collect();
        say!(
            "recovery: mean routing time by birth, {} cycles a column from the window's start: {}",
            r.bucket,
            means.join(" ")
        );
        match r.recovered_after {
            Some(t) => say!(
                "recovered (within twice the steady {:.2}) from window cycle {t}",
                r.steady
            ),
            None => say!("not recovered within the window"),
        }
    }
    let s = &o.stability;
    if s.stable {
        say!(
            "stable: messages in the system per quarter of the window {:?}, slope {:.3} per 1000 cycles",
            s.quarters,
            s.slope_per_kcycle
        );
        if s.undrained > 0 {
            say!(
                "  (emptying; {} measured messages still out after the drain are not in the statistics)",
                s.undrained
            );
        }
    } else {
        say!(
            "UNSTABLE ({}): messages in the system per quarter of the window {:?}, slope {:.3} per 1000 cycles, most {}",
            s.reason,
            s.quarters,
            s.slope_per_kcycle,
            s.max_buffered
        );
    }
}

fn growing(a: &GrowingRankArgs) -> Result<()> {
    let (net, traffic) = prepare(&a.common, 1)?;
    let (tm, tk) = growing_rank::theorem_parameters(traffic.load).unwrap_or((20, 128));
    let d = net.dilation();
    let generators = u64::from(net.terminals) * u64::from(traffic.generators);
    let overflow = if a.overflow_stacks {
        let o = Overflow::defaults(d, generators, net.data_links(), traffic.load);
        Some(Overflow {
            t: a.stack_age.unwrap_or(o.t),
            gamma: a.stack_gamma.unwrap_or(o.gamma),
        })
    } else {
        for (flag, given) in [
            ("stack-age", a.stack_age.is_some()),
            ("stack-gamma", a.stack_gamma.is_some()),
        ] {
            if given {
                return Err(Error::invalid(flag, "given", "--overflow-stacks with it"));
            }
        }
        None
    };
    let params = GrowingRank {
        m: a.rank_step.unwrap_or(tm),
        k: a.rank_offsets.unwrap_or(tk),
        overflow,
    };
    let w = window(&a.common, 10 * u64::from(d), d, 1)?;
    let mut protocol = GrowingRankNet::new(params, net.data_links(), a.common.seed)?;
    say!(
        "growing-rank store-and-forward ([SV] §2), m = {}, K = {}",
        params.m,
        params.k
    );
    if let Some(o) = overflow {
        say!(
            "overflow stacks ([SV] §4.1): T = {}, γ = {:.3}, suspension m·T = {} cycles",
            o.t,
            o.gamma,
            u64::from(params.m) * o.t
        );
    }
    say!("{}", describe(&net, &traffic));
    let o = run_protocol(&a.common, &net, &traffic, w, &mut protocol)?;
    report(&o);
    if overflow.is_some() {
        say!("packets moved to an overflow stack: {}", protocol.stacked);
    }
    if let Some(j) = &a.common.json {
        let v = serde_json::json!({
            "protocol": "growing-rank", "stacked": protocol.stacked, "topology": net.kind, "inputs": net.terminals,
            "dilation": d, "generators_per_terminal": traffic.generators,
            "params": params, "window": w, "seed": a.common.seed, "outcome": o,
        });
        write(j, &format!("{v:#}\n"))?;
    }
    Ok(())
}

fn trial(a: &TrialArgs) -> Result<()> {
    let (net, traffic) = prepare(&a.common, a.flits)?;
    let d = net.dilation();
    let generators = u64::from(net.terminals) * u64::from(traffic.generators);
    let overflow = if a.overflow_stacks {
        let o = TrialOverflow::defaults(generators, d, a.flits, traffic.load);
        Some(TrialOverflow {
            t: a.stack_trials.unwrap_or(o.t),
            pop: o.pop,
        })
    } else {
        if a.stack_trials.is_some() {
            return Err(Error::invalid(
                "stack-trials",
                "given",
                "--overflow-stacks with it",
            ));
        }
        None
    };
    let params = TrialParams {
        bandwidth: a.bandwidth,
        flits: a.flits,
        dilation: d,
        overflow,
    };
    params.check()?;
    if let Some(o) = overflow {
        say!(
            "overflow stacks ([SV] §4.2): T = {} trials, pop λ/(6N) = {:.3e}, suspension T·R = {} cycles",
            o.t,
            o.pop,
            u64::from(o.t) * params.period()
        );
    }
    let w = window(&a.common, 10 * params.period(), d, a.flits)?;
    let mut protocol = TrialNet::new(params, &net, a.common.seed)?;
    let bound = f64::from(a.bandwidth)
        / (12.0
            * std::f64::consts::E
            * f64::from(a.flits)
            * (2.0 * f64::from(d)).powf(1.0 / f64::from(a.bandwidth)));
    say!(
        "wormhole trials ([SV] §3), B = {}, L = {}, R = 2D + L - 1 = {}; Theorem 3.1's load B/(12e·L·(2D)^(1/B)) = {:.5}, the cap B/L = {:.4}",
        a.bandwidth,
        a.flits,
        params.period(),
        bound,
        f64::from(a.bandwidth) / f64::from(a.flits)
    );
    say!("{}", describe(&net, &traffic));
    let o = run_protocol(&a.common, &net, &traffic, w, &mut protocol)?;
    report(&o);
    let c = protocol.counters;
    say!(
        "trials {}, successes {}, flits cut {}, acknowledgements cut {}, worms stacked {}; failed trials per measured worm: mean {:.3}, most {} (Theorem 3.1: at most 3/(2^B - 1) = {:.3} below its load)",
        c.trials,
        c.successes,
        c.cuts,
        c.acks_lost,
        c.stacked,
        o.failed_trials_mean,
        o.failed_trials_max,
        3.0 / (2f64.powi(a.bandwidth.min(64) as i32) - 1.0)
    );
    if let Some(j) = &a.common.json {
        let v = serde_json::json!({
            "protocol": "trial", "topology": net.kind, "inputs": net.terminals,
            "dilation": d, "generators_per_terminal": traffic.generators,
            "params": params, "theorem_load": bound, "window": w, "seed": a.common.seed,
            "counters": c, "outcome": o,
        });
        write(j, &format!("{v:#}\n"))?;
    }
    Ok(())
}

/// Most link-message incidences Algorithm 1's per-round conflict measure walks
/// (messages × D × C).
const MAX_CONFLICT_WORK: u64 = 1 << 34;

fn collection(c: &BatchCommon, flits: u32) -> Result<(Net, Collection)> {
    if c.json.is_some() {
        outputs_apart(&[("json", c.json.as_deref())], &[])?;
    }
    let net = Net::new(c.topology.into(), c.inputs, c.degree, c.seed)?;
    if !(1..=1024).contains(&c.q) {
        return Err(Error::invalid("q", c.q, "1..=1024 messages per terminal"));
    }
    // paths, the link users of the conflict measure and one flight per message
    let messages = u64::from(net.terminals) * u64::from(c.q);
    let d = u64::from(net.dilation());
    flitforge::limits::Estimate::new()
        .with("paths", messages * (8 * d + 48))
        .with("link users", messages * 4 * d)
        .with("flights", messages * (4 * u64::from(flits) + 48))
        .check_memory("q", c.q)?;
    let coll = Collection::random(&net, c.q, c.seed)?;
    say!(
        "{} of {} terminals: {} messages, congestion C = {}, dilation D = {}",
        net.kind.name(),
        net.terminals,
        coll.messages(),
        coll.congestion,
        coll.dilation
    );
    Ok((net, coll))
}

fn algorithm1(a: &Alg1Args) -> Result<()> {
    let (_, coll) = collection(&a.common, 1)?;
    let work = coll.messages() as u64 * u64::from(coll.dilation) * u64::from(coll.congestion);
    if work > MAX_CONFLICT_WORK {
        return Err(Error::invalid(
            "q",
            a.common.q,
            format!(
                "a collection whose messages x D x C ({work}) is at most {MAX_CONFLICT_WORK} (each round measures every packet's conflicts)"
            ),
        ));
    }
    let run = batch::algorithm1(&coll, a.bandwidth, a.common.alpha, a.common.seed)?;
    say!(
        "Algorithm 1 ([CMSV] §2): B = {} (prescribed {}), m = {}, k = {}; planned rounds 0..={}",
        run.bandwidth,
        run.prescribed_bandwidth,
        run.m,
        run.k,
        run.k
    );
    say!(
        "round  delays C_r  copies each  active  delivered  most conflicting  bound B·m/2^r  cycles"
    );
    for (r, x) in run.rounds.iter().enumerate() {
        say!(
            "{r:>5}  {:>10}  {:>11}  {:>6}  {:>9}  {:>16}  {:>13.2}  {:>6}",
            x.delays,
            x.copies_each,
            x.active,
            x.delivered,
            x.max_conflicting,
            x.bound,
            x.cycles
        );
    }
    say!(
        "all delivered in {} rounds ({} beyond round k); makespan {} cycles, planned 2(C + D) + 2k(C_1 + D) = {}",
        run.rounds.len(),
        run.extra_rounds,
        run.makespan,
        run.planned
    );
    if let Some(j) = &a.common.json {
        let v = serde_json::json!({"algorithm": "algorithm1", "seed": a.common.seed, "run": run});
        write(j, &format!("{v:#}\n"))?;
    }
    Ok(())
}

fn algorithm2(a: &Alg2Args) -> Result<()> {
    let (net, coll) = collection(&a.common, a.flits)?;
    let run = if a.deterministic {
        if net.kind != NetKind::Butterfly {
            return Err(Error::invalid(
                "deterministic",
                net.kind.name(),
                "--topology butterfly (Theorem 1.14(a) is a butterfly algorithm)",
            ));
        }
        batch::butterfly_deterministic(&coll, net.terminals, a.common.q, a.bandwidth, a.flits)?
    } else {
        batch::algorithm2(
            &coll,
            a.bandwidth,
            a.flits,
            a.common.alpha,
            a.redraw,
            a.common.seed,
        )?
    };
    say!(
        "{}: B = {}, L = {}; rounds {} of {} cycles (budget {}), makespan {} cycles",
        if a.deterministic {
            "deterministic butterfly algorithm ([CMSV] Theorem 1.14(a))"
        } else {
            "Algorithm 2 ([CMSV] §3)"
        },
        run.bandwidth,
        run.flits,
        run.delivered.len(),
        run.round_cycles,
        run.budget,
        run.makespan
    );
    say!(
        "delivered per round {:?}; Main Theorem 2's shape (L·C·D^(1/B) + (D + L) lg n)/B = {:.1}, lower bound L·C/B + D + L = {:.1}",
        run.delivered,
        run.shape,
        run.lower
    );
    if let Some(j) = &a.common.json {
        let name = if a.deterministic {
            "butterfly-deterministic"
        } else {
            "algorithm2"
        };
        let v = serde_json::json!({"algorithm": name, "seed": a.common.seed, "run": run});
        write(j, &format!("{v:#}\n"))?;
    }
    Ok(())
}

fn rtl(a: &RtlArgs) -> Result<()> {
    use flitforge::universal::hw::algorithm1 as hw;
    use rand::RngExt;
    if !a.inputs.is_power_of_two() || !(4..=64).contains(&a.inputs) {
        return Err(Error::invalid(
            "inputs",
            a.inputs,
            "a power of two in 4..=64",
        ));
    }
    if a.protocol == "growing-rank" {
        return rank_rtl(a);
    }
    if !(1..=64).contains(&a.q) {
        return Err(Error::invalid("q", a.q, "1..=64"));
    }
    if !(1..=1024).contains(&a.delays) {
        return Err(Error::invalid("delays", a.delays, "1..=1024"));
    }
    let mut rng = flitforge::rng::stream(a.seed, flitforge::rng::Stream::Traffic);
    let mut sources = Vec::new();
    let mut copies = Vec::new();
    for x in 0..a.inputs {
        for _ in 0..a.q {
            sources.push(x);
            copies.push((rng.random_range(0..a.inputs), rng.random_range(0..a.delays)));
        }
    }
    let pass = hw::pass(
        a.inputs,
        a.bandwidth,
        &sources,
        &copies,
        &super::command_line(),
    )?;
    say!(
        "{} copies on a {}-input butterfly, B = {}: {} delivered in {} cycles",
        copies.len(),
        a.inputs,
        a.bandwidth,
        pass.delivered.len(),
        pass.bundle.cycles
    );
    write_and_cosim(a, "cmsv-rtl", &pass.bundle)
}

fn rank_rtl(a: &RtlArgs) -> Result<()> {
    use flitforge::universal::hw::growing_rank as rank;
    if !(a.rate > 0.0 && a.rate <= 1.0) {
        return Err(Error::invalid("rate", a.rate, "(0, 1]"));
    }
    if !(1..=4096).contains(&a.cycles) {
        return Err(Error::invalid("cycles", a.cycles, "1..=4096"));
    }
    if !(2..=64).contains(&a.rank_step) {
        return Err(Error::invalid("rank-step", a.rank_step, "2..=64"));
    }
    if !(1..=256).contains(&a.rank_offsets) {
        return Err(Error::invalid("rank-offsets", a.rank_offsets, "1..=256"));
    }
    let expected = f64::from(a.inputs) * a.cycles as f64 * a.rate;
    if expected > 16384.0 {
        return Err(Error::invalid(
            "cycles",
            a.cycles,
            format!(
                "a run of at most 16384 packets expected (inputs x cycles x rate = {expected:.0}): the hardware is for waveforms and co-simulation"
            ),
        ));
    }
    let packets = rank::random_injections(a.inputs, a.rate, a.cycles, a.rank_offsets, a.seed);
    let step = u64::from(a.rank_step) * u64::from(a.rank_offsets);
    let run = rank::run(
        a.inputs,
        step,
        &packets,
        2 * a.cycles,
        &super::command_line(),
    )?;
    say!(
        "{} packets on a {}-input butterfly, m = {}, K = {}: {} delivered in {} cycles; queues of {} slots",
        packets.len(),
        a.inputs,
        a.rank_step,
        a.rank_offsets,
        run.delivered.len(),
        run.bundle.cycles,
        run.slots
    );
    write_and_cosim(a, "rank-rtl", &run.bundle)
}

fn write_and_cosim(a: &RtlArgs, name: &str, bundle: &flitforge::cosim::Bundle) -> Result<()> {
    use flitforge::cosim::Simulator;
    let dir = a.out.dir(name)?;
    for (file, text) in &bundle.design.files {
        write(dir.join(file), text)?;
    }
    write(
        dir.join(flitforge::rtl::STIMULUS_FILE),
        &bundle.stimulus_hex,
    )?;
    let vcd = String::from_utf8_lossy(&bundle.model_vcd).into_owned();
    write(dir.join("model.vcd"), &vcd)?;
    let simulators: &[Simulator] = match a.simulator.as_deref() {
        Some("iverilog") => &[Simulator::Icarus],
        Some("verilator") => &[Simulator::Verilator],
        Some(_) => &[Simulator::Icarus, Simulator::Verilator],
        None => &[],
    };
    for &sim in simulators {
        let verdict = bundle.run(sim, &dir.join(sim.name()))?;
        say!("{verdict}");
        if verdict.divergence.is_some() {
            return Err(Error::Diverged);
        }
    }
    Ok(())
}
