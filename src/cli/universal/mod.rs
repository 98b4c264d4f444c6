//! `flitforge universal`: the universal continuous-routing protocols of [SV], one run at a time.

mod batch;
mod rtl;

use self::batch::{Alg1Args, Alg2Args, BufferedArgs};
use self::rtl::RtlArgs;
use super::files::{outputs_apart, write};
use clap::{Args, Subcommand, ValueEnum};
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
    /// --store-and-forward runs Theorem 1.8's variant on links of one packet per cycle.
    ///
    /// Examples:
    ///   flitforge universal algorithm1 --topology butterfly --inputs 256 --q 4
    ///   flitforge universal algorithm1 --topology mesh --inputs 64 --q 2 --bandwidth 2 --json -
    ///   flitforge universal algorithm1 --topology torus --inputs 256 --store-and-forward
    #[command(verbatim_doc_comment)]
    Algorithm1(Alg1Args),
    /// [CMSV] Routing Algorithm 2: q worms per terminal, each with a rank and a delay drawn
    /// once; in every round's forward pass the B lowest ranks win a link and the rest are cut.
    /// --deterministic (butterfly only) runs Theorem 1.14(a)'s algorithm instead: ranks from
    /// the input's bit-reversed address, no random delay, concurrent passes.
    /// --mesh-tailored (mesh only) runs Theorem 1.13's variant; --buffers A runs Corollary
    /// 1.4's store-and-forward emulation of bandwidth A by buffers of A.
    ///
    /// Examples:
    ///   flitforge universal algorithm2 --topology torus --inputs 64 --q 2 --bandwidth 2 --flits 8
    ///   flitforge universal algorithm2 --inputs 256 --q 8 --deterministic
    ///   flitforge universal algorithm2 --topology mesh --inputs 256 --mesh-tailored
    ///   flitforge universal algorithm2 --topology torus --inputs 256 --buffers 2
    #[command(verbatim_doc_comment)]
    Algorithm2(Alg2Args),
    /// [CMSV] Theorem 1.7: q packets per terminal, store-and-forward on shortest paths with
    /// buffers of A packets per link, in rounds. A forward pass is [SV]'s growing-rank
    /// protocol with every packet born at the round's start: each link sends the packet
    /// with the fewest links behind it, ties to a random key drawn once, then the id; where
    /// arrivals would overflow a buffer, the A lowest discard ranks (drawn once, as in
    /// Algorithm 2) stay and the others are discarded and try again next round.
    ///
    /// Examples:
    ///   flitforge universal buffered --topology torus --inputs 256 --q 4 --buffers 2
    ///   flitforge universal buffered --topology butterfly --inputs 1024 --buffers 1 --json -
    #[command(verbatim_doc_comment)]
    Buffered(BufferedArgs),
    /// The protocols' switches as hardware on an n-input butterfly, register by register:
    /// [CMSV] Algorithm 1's switch (round after round until every packet is acknowledged:
    /// a forward pass of random copies, where a link more than B want discards them all,
    /// then a backward pass whose acknowledgements retrace it in mirrored cycles; the same
    /// rounds as `universal algorithm1 --topology butterfly` with the same --inputs, --q,
    /// --bandwidth, --alpha and --seed) or [SV]'s
    /// growing-rank store-and-forward switch (random
    /// packets for --cycles, queues of the slots the run needs). Writes the Verilog, the
    /// stimulus and the model's waveform (model.vcd) into --out, and with --simulator
    /// co-simulates: the RTL's waveform must equal the model's, bit for bit.
    ///
    /// Examples:
    ///   flitforge universal rtl --inputs 8 --bandwidth 1 --q 4 --simulator both --out build/cmsv
    ///   flitforge universal rtl --protocol growing-rank --inputs 8 --simulator both --out build/rank
    #[command(verbatim_doc_comment)]
    Rtl(RtlArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum Topology {
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

/// The network a universal protocol runs on (every `universal` run but `rtl`).
#[derive(Args)]
pub struct NetArgs {
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
}

impl NetArgs {
    /// The network, a random graph wired from `seed`.
    fn build(&self, seed: u64) -> Result<Net> {
        Net::new(self.topology.into(), self.inputs, self.degree, seed)
    }
}

#[derive(Args)]
struct Common {
    #[command(flatten)]
    net: NetArgs,
    /// Link load λ: messages per cycle the busiest link is offered (every terminal's
    /// generators together; [SV] §1). Per-generator rates follow from it. [default: none,
    /// required]
    #[arg(long)]
    load: f64,
    /// Cycles before the measured window, 0..=10^9. [default: 10·D (store-and-forward) or
    /// 10·R (wormhole), at least 1000]
    #[arg(long)]
    warmup: Option<u64>,
    /// Cycles of the measured window: messages born in it are measured, and the stability
    /// verdict is taken over it. 100..=100000000.
    #[arg(long, default_value_t = 10_000)]
    window: u64,
    /// Most cycles after the window for the measured messages to arrive before the run is
    /// reported not drained (unstable), 0..=10^9. [default: the window]
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
    /// Rank step multiplier m, 2..=65536. [default: the smallest m of Theorem 2.4 for λ
    /// (ε ≤ 0.9), or 20 where λ is beyond the theorem]
    #[arg(long)]
    rank_step: Option<u32>,
    /// K: random rank offsets k ∈ 1..=K, K in 1..=1048576. [default: Theorem 2.4's K for
    /// λ, or 128]
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
    /// [SV] §3's variable-length worms: each worm's length is uniform in 1..=2L − 1, so L
    /// (--flits) is only its expectation; the load, R and the bound use L, and a worm longer
    /// than L retries every 2D + its length − 1 cycles. [default: off]
    #[arg(long)]
    variable_lengths: bool,
}

pub fn run(command: &UniversalCommand) -> Result<()> {
    match command {
        UniversalCommand::GrowingRank(a) => growing(a),
        UniversalCommand::Trial(a) => trial(a),
        UniversalCommand::Algorithm1(a) => batch::algorithm1(a),
        UniversalCommand::Algorithm2(a) => batch::algorithm2(a),
        UniversalCommand::Buffered(a) => batch::buffered(a),
        UniversalCommand::Rtl(a) => rtl::rtl(a),
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
    let net = c.net.build(c.seed)?;
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
    // (No message measured: the window never began, and has no recovery to show.)
    if let Some(r) = o.recovery.as_ref().filter(|_| o.measured > 0) {
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
    } else if o.measured == 0 {
        // Stopped (an overflow) before the window began: it has no quarters.
        say!(
            "UNSTABLE ({}) at cycle {}, before the measured window began: most {} messages in the system",
            s.reason,
            o.cycles,
            s.max_buffered
        );
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
    let (net, mut traffic) = prepare(&a.common, a.flits)?;
    traffic.variable_lengths = a.variable_lengths;
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
        variable_lengths: a.variable_lengths,
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
