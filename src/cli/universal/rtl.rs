//! `flitforge universal rtl`: the protocols' switches as Verilog, co-simulated against their
//! register models.

use crate::cli::files::write;
use clap::Args;
use flitforge::{Error, Result};

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
    /// algorithm1: packets per input, each to a random output, 1..=64.
    #[arg(long, default_value_t = 4)]
    q: u32,
    /// algorithm1: α of Algorithm 1's prescription (m = ⌈(α + 2) ln n/(2 ln(CD))⌉, n the
    /// number of packets, sets the later rounds' delays 2Bm and their number), 0..=16.
    #[arg(long, default_value_t = 1.0)]
    alpha: f64,
    /// Seed of the destinations and the draws (algorithm1: as `universal algorithm1
    /// --topology butterfly` draws them, so with the same --inputs, --q, --bandwidth and
    /// --alpha the two runs agree round by round).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Co-simulate under this simulator (or both). [default: none, write only]
    #[arg(long, value_parser = ["iverilog", "verilator", "both"])]
    simulator: Option<String>,
    #[command(flatten)]
    out: crate::cli::experiment::OutDir,
}

pub fn rtl(a: &RtlArgs) -> Result<()> {
    use flitforge::universal::hw::algorithm1 as hw;
    use flitforge::universal::{Net, NetKind, batch::Collection};
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
    if !(1..=8).contains(&a.bandwidth) {
        return Err(Error::invalid(
            "bandwidth",
            a.bandwidth,
            "1..=8 lanes per link",
        ));
    }
    let net = Net::new(NetKind::Butterfly, a.inputs, 2, a.seed)?;
    let coll = Collection::random(&net, a.q, a.seed)?;
    let run = hw::run(
        &coll,
        a.inputs,
        Some(a.bandwidth),
        a.alpha,
        a.seed,
        &crate::cli::command_line(),
    )?;
    let p = &run.plan;
    say!(
        "{} packets on a {}-input butterfly, C = {}, B = {}, m = {}, k = {}: passes of {} (round 0) and {} cycles",
        coll.messages(),
        a.inputs,
        coll.congestion,
        p.bandwidth,
        p.m,
        p.k,
        p.delays(0) + u64::from(coll.dilation),
        p.delays(1) + u64::from(coll.dilation)
    );
    for (r, round) in run.rounds.iter().enumerate() {
        say!(
            "round {r}: {} active, {} copies, {} delivered, {} packets acknowledged ({} cycles)",
            round.active,
            round.copies,
            round.delivered,
            round.acknowledged,
            round.cycles
        );
    }
    say!(
        "every packet acknowledged after {} rounds, {} cycles",
        run.rounds.len(),
        run.bundle.cycles
    );
    write_and_cosim(a, "cmsv-rtl", &run.bundle)
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
        &crate::cli::command_line(),
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
