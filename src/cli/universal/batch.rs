//! `flitforge universal algorithm1|algorithm2`: [CMSV]'s batch algorithms on random path
//! collections.

use super::NetArgs;
use crate::cli::files::{outputs_apart, write};
use clap::Args;
use flitforge::universal::batch::{self, Collection};
use flitforge::universal::buffered;
use flitforge::universal::pass_wave::{self, PassWave, Signals};
use flitforge::universal::{Net, NetKind};
use flitforge::{Error, Result};

#[derive(Args)]
pub struct BatchCommon {
    #[command(flatten)]
    net: NetArgs,
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
    /// Theorem 1.8: store-and-forward on links of one packet per cycle. Round 0 runs at
    /// bandwidth B' (--bandwidth, or the prescribed one) with every step a stage of B'
    /// cycles and buffers of B'; later rounds send one copy per packet with delays in
    /// [240e²(α + 2) lg n] and stages of one cycle. [default: off]
    #[arg(long)]
    store_and_forward: bool,
    /// Write the forward passes as a VCD waveform: per link and cycle (step, with
    /// --store-and-forward) the packets whose copies crossed it, lane by lane (id + 1; 0
    /// idle), and the copies discarded there; the round and the pass cycle under tb.net.
    /// `universal rtl` has the register-level hardware with its acknowledgements. [default:
    /// not written]
    #[arg(long, value_name = "FILE")]
    vcd: Option<String>,
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
    /// Theorem 1.13's mesh algorithm (--topology mesh): start delays in [2m] on the m x m mesh
    /// and the array congestion q·m in place of C in the round budget. [default: off]
    #[arg(long, conflicts_with = "deterministic")]
    mesh_tailored: bool,
    /// Corollary 1.4: store-and-forward packets (L = 1) on links of one packet per cycle with
    /// buffers of A packets, 1..=64: Algorithm 2 at bandwidth A, each step a stage of A
    /// cycles. [default: off]
    #[arg(long, value_name = "A", conflicts_with_all = ["deterministic", "mesh_tailored", "bandwidth", "flits", "redraw"])]
    buffers: Option<u32>,
    /// Write the forward passes as a VCD waveform: per link and cycle the winning worms' ids
    /// (+ 1; 0 idle) and ranks, lane by lane, and the flits cut there; the round and the
    /// pass cycle under tb.net (with --buffers, one sample per stage of A cycles). [default:
    /// not written]
    #[arg(long, value_name = "FILE")]
    vcd: Option<String>,
}

#[derive(Args)]
pub struct BufferedArgs {
    #[command(flatten)]
    common: BatchCommon,
    /// Buffer size A: packets a link's buffer holds, 1..=64.
    #[arg(long, default_value_t = 2)]
    buffers: u32,
    /// Write the forward passes as a VCD waveform: per link and cycle the packet sent (id +
    /// 1; 0 idle) and its growing rank, the packets its buffer discarded and the packets the
    /// buffer holds; the round and the pass cycle under tb.net. [default: not written]
    #[arg(long, value_name = "FILE")]
    vcd: Option<String>,
}

/// Most link-message incidences Algorithm 1's per-round conflict measure walks
/// (messages × D × C).
const MAX_CONFLICT_WORK: u64 = 1 << 34;

fn collection(c: &BatchCommon, flits: u32) -> Result<(Net, Collection)> {
    if c.json.is_some() {
        outputs_apart(&[("json", c.json.as_deref())], &[])?;
    }
    let net = c.net.build(c.seed)?;
    if !(1..=1024).contains(&c.q) {
        return Err(Error::invalid("q", c.q, "1..=1024 messages per terminal"));
    }
    // paths, the link users of the conflict measure and one flight per message
    let messages = u64::from(net.terminals) * u64::from(c.q);
    let d = u64::from(net.dilation());
    flitforge::limits::Estimate::new()
        .with("paths", messages * (8 * d + 52))
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

/// Refuses, before any run, a waveform at `vcd` that would have more than
/// [`pass_wave::MAX_SIGNALS`] signals or that collides with the other outputs.
fn check_wave(common: &BatchCommon, vcd: Option<&str>, net: &Net, signals: Signals) -> Result<()> {
    let Some(path) = vcd else { return Ok(()) };
    outputs_apart(&[("json", common.json.as_deref()), ("vcd", vcd)], &[])?;
    let count = signals.count(net.data_links());
    if count > pass_wave::MAX_SIGNALS {
        return Err(Error::invalid(
            "inputs",
            net.terminals,
            format!(
                "a network whose waveform ({path}) has at most {} signals (this one has {count} with {} lanes per link: fewer inputs or a smaller bandwidth)",
                pass_wave::MAX_SIGNALS,
                signals.lanes
            ),
        ));
    }
    Ok(())
}

/// Runs `again` (the same run: every draw comes from the seed) with its waveform written to
/// `path`, once its size, estimated from the first run's `samples` and `events`, is checked.
fn write_wave<T>(
    path: &str,
    net: &Net,
    signals: Signals,
    (samples, events): (u64, u64),
    again: impl FnOnce(&mut PassWave) -> Result<T>,
) -> Result<()> {
    flitforge::limits::Estimate::new()
        .with("waveform", samples * 64 + events * 96)
        .check_output("vcd", std::path::Path::new(path))?;
    let mut file = crate::cli::files::AtomicFile::create(path)?;
    let header = super::super::command_line();
    let mut wave = PassWave::new(file.writer(), &header, net, signals)?;
    again(&mut wave)?;
    wave.finish()?;
    file.commit()
}

pub fn algorithm1(a: &Alg1Args) -> Result<()> {
    let (net, coll) = collection(&a.common, 1)?;
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
    let run_with = |wave: Option<&mut PassWave>| {
        let (c, b, alpha, seed) = (&coll, a.bandwidth, a.common.alpha, a.common.seed);
        if a.store_and_forward {
            batch::algorithm1_store_and_forward(c, b, alpha, seed, wave)
        } else {
            batch::algorithm1(c, b, alpha, seed, wave)
        }
    };
    // the lanes: B, known once the plan is made
    let lanes = batch::Alg1Plan::new(&coll, a.bandwidth, a.common.alpha)?.bandwidth;
    let signals = Signals {
        lanes,
        messages: coll.messages() as u64,
        ranks: None,
        buffers: None,
    };
    check_wave(&a.common, a.vcd.as_deref(), &net, signals)?;
    let run = run_with(None)?;
    if let Some(path) = &a.vcd {
        let samples: u64 = run
            .rounds
            .iter()
            .map(|r| r.delays + u64::from(run.dilation))
            .sum();
        let copies: u64 = run.rounds.iter().map(|r| r.active * r.copies_each).sum();
        let events = copies * (u64::from(run.dilation) + 1);
        write_wave(path, &net, signals, (samples, events), |w| {
            run_with(Some(w))
        })?;
    }
    say!(
        "{}: B = {} (prescribed {}), m = {}, k = {}; planned rounds 0..={}",
        if a.store_and_forward {
            "Algorithm 1 as store-and-forward ([CMSV] Theorem 1.8)"
        } else {
            "Algorithm 1 ([CMSV] §2)"
        },
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
        "all delivered in {} rounds ({} beyond round k); makespan {} cycles, planned {} = {}",
        run.rounds.len(),
        run.extra_rounds,
        run.makespan,
        if a.store_and_forward {
            "2(C + D)·B' + 2k(C_1 + D)"
        } else {
            "2(C + D) + 2k(C_1 + D)"
        },
        run.planned
    );
    if let Some(j) = &a.common.json {
        let name = if a.store_and_forward {
            "algorithm1-store-and-forward"
        } else {
            "algorithm1"
        };
        let v = serde_json::json!({"algorithm": name, "seed": a.common.seed, "run": run});
        write(j, &format!("{v:#}\n"))?;
    }
    Ok(())
}

pub fn algorithm2(a: &Alg2Args) -> Result<()> {
    if let Some(buffers) = a.buffers
        && !(1..=64).contains(&buffers)
    {
        return Err(Error::invalid("buffers", buffers, "1..=64 packets"));
    }
    let (net, coll) = collection(&a.common, a.flits)?;
    let signals = Signals {
        lanes: a.buffers.unwrap_or(a.bandwidth),
        messages: coll.messages() as u64,
        ranks: Some(u64::from(u32::MAX)),
        buffers: None,
    };
    check_wave(&a.common, a.vcd.as_deref(), &net, signals)?;
    if a.deterministic && net.kind != NetKind::Butterfly {
        return Err(Error::invalid(
            "deterministic",
            net.kind.name(),
            "--topology butterfly (Theorem 1.14(a) is a butterfly algorithm)",
        ));
    }
    if a.mesh_tailored && net.kind != NetKind::Mesh {
        return Err(Error::invalid(
            "mesh-tailored",
            net.kind.name(),
            "--topology mesh (Theorem 1.13 is a mesh algorithm)",
        ));
    }
    let run_with = |wave: Option<&mut PassWave>| -> Result<batch::Alg2Run> {
        if a.deterministic {
            batch::butterfly_deterministic(
                &coll,
                net.terminals,
                a.common.q,
                a.bandwidth,
                a.flits,
                wave,
            )
        } else if let Some(buffers) = a.buffers {
            batch::algorithm2_buffers(&coll, buffers, a.common.alpha, a.common.seed, wave)
        } else if a.mesh_tailored {
            batch::algorithm2_mesh(
                &coll,
                net.terminals.isqrt(),
                a.common.q,
                a.bandwidth,
                a.flits,
                a.common.alpha,
                a.redraw,
                a.common.seed,
                wave,
            )
        } else {
            batch::algorithm2(
                &coll,
                a.bandwidth,
                a.flits,
                a.common.alpha,
                a.redraw,
                a.common.seed,
                wave,
            )
        }
    };
    let run = run_with(None)?;
    if let Some(path) = &a.vcd {
        // a change per winner and cut flit, both ways
        let rounds = run.delivered.len() as u64;
        let hops = run.messages * (u64::from(run.dilation) + u64::from(run.flits)) * rounds;
        write_wave(path, &net, signals, (run.makespan / 2, hops), |w| {
            run_with(Some(w))
        })?;
    }
    say!(
        "{}: B = {}, L = {}; rounds {} of {} cycles (budget {}), makespan {} cycles",
        if a.deterministic {
            "deterministic butterfly algorithm ([CMSV] Theorem 1.14(a))"
        } else if a.mesh_tailored {
            "Algorithm 2 tailored to the mesh ([CMSV] Theorem 1.13)"
        } else if a.buffers.is_some() {
            "store-and-forward with buffers ([CMSV] Corollary 1.4)"
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
    if a.buffers.is_some() {
        say!(
            "delivered per round {:?}; Corollary 1.4's shape C·D^(1/A) + D lg n = {:.1}, lower bound max(C, D) = {:.1}",
            run.delivered,
            run.shape,
            run.lower
        );
    } else if a.mesh_tailored {
        say!(
            "delivered per round {:?}; Theorem 1.13's shape (q·L·m·d^(1/B) + (m·d + L) d lg m)/B = {:.1}, lower bound L·C/B + D + L = {:.1}",
            run.delivered,
            run.shape,
            run.lower
        );
    } else {
        say!(
            "delivered per round {:?}; Main Theorem 2's shape (L·C·D^(1/B) + (D + L) lg n)/B = {:.1}, lower bound L·C/B + D + L = {:.1}",
            run.delivered,
            run.shape,
            run.lower
        );
    }
    if let Some(j) = &a.common.json {
        let name = if a.deterministic {
            "butterfly-deterministic"
        } else if a.mesh_tailored {
            "mesh-tailored"
        } else if a.buffers.is_some() {
            "store-and-forward-buffers"
        } else {
            "algorithm2"
        };
        let v = serde_json::json!({"algorithm": name, "seed": a.common.seed, "run": run});
        write(j, &format!("{v:#}\n"))?;
    }
    Ok(())
}

pub fn buffered(a: &BufferedArgs) -> Result<()> {
    if !(1..=64).contains(&a.buffers) {
        return Err(Error::invalid("buffers", a.buffers, "1..=64 packets"));
    }
    let (net, coll) = collection(&a.common, 1)?;
    let signals = buffered::wave_signals(&coll, a.buffers);
    check_wave(&a.common, a.vcd.as_deref(), &net, signals)?;
    let run_with = |wave: Option<&mut PassWave>| {
        buffered::theorem_1_7(&coll, a.buffers, a.common.alpha, a.common.seed, wave)
    };
    let run = run_with(None)?;
    if let Some(path) = &a.vcd {
        // a send, and two buffers' occupancies, per packet and link crossed
        let samples: u64 = run.pass_cycles.iter().sum();
        let events = run.messages * u64::from(run.dilation) * run.pass_cycles.len() as u64 * 3;
        write_wave(path, &net, signals, (samples, events), |w| {
            run_with(Some(w))
        })?;
    }
    say!(
        "store-and-forward with buffers of {} ([CMSV] Theorem 1.7): discard ranks in [{}]; growing ranks born together: fewest links crossed first, then a key in 1..={}",
        run.buffers,
        run.discard_ranks,
        buffered::GROWING_K
    );
    say!("round  delivered  discarded  forward cycles");
    for (r, ((d, x), c)) in run
        .delivered
        .iter()
        .zip(&run.discarded)
        .zip(&run.pass_cycles)
        .enumerate()
    {
        say!("{r:>5}  {d:>9}  {x:>9}  {c:>14}");
    }
    say!(
        "all delivered in {} rounds (shape (C·D^(1/A) + lg n)/A = {:.1}); makespan {} cycles, shape (C·D^(1/A) + lg n)(C + D + lg n)/A = {:.1}, or (C·D^(1/A)/A + lg n)(C + D + lg n) = {:.1}",
        run.delivered.len(),
        run.rounds_shape,
        run.makespan,
        run.shape,
        run.shape_alt
    );
    if let Some(j) = &a.common.json {
        let v = serde_json::json!({"algorithm": "theorem-1.7", "seed": a.common.seed, "run": run});
        write(j, &format!("{v:#}\n"))?;
    }
    Ok(())
}
