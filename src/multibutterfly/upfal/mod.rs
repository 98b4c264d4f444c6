//! Upfal's greedy wave algorithm on a multibutterfly ([LM] §II-A).
//!
//! The network is a randomly-wired splitter network of multiplicity `d` (levels `0..=lg N`,
//! [`crate::topology::random_splitter`]) with, for `P > 1` permutations, front levels
//! `−1 … −(P−1)` (§II-A): each front level is a copy of the first splitter level as a graph
//! (or, [`FrontLevels::Matchings`], `2d` random perfect matchings), the whole row one block, so
//! a packet may take any out link. Every splitter is a `2d`-regular bipartite
//! multigraph and gets a proper `2d`-edge-colouring (König, [`crate::topology::colouring::colour`]);
//! a copied front level keeps level 0's colours, a matching's index is its colour.
//!
//! The packet of permutation `k` from input `i` starts in row `i` of level `−k`, in wave
//! `k·Lw + (dest mod Lw)`; smaller waves are heavier (weight `ν^wave`). A switch holds at most
//! one packet. A stage is an even and an odd phase; a phase is one step per colour; in a step
//! every link of that colour whose tail level has the phase's parity moves the tail's packet
//! forward if it needs the link (up/down by the destination's bit, any link on a front level)
//! and the head is empty, or swaps it with a later-wave packet in the head. Packets reaching
//! level `lg N` are delivered. After every phase the Lemma 2.5 invariant is checked, and the
//! potential of §II-B (Claim 2.4) is logged after every stage.
//!
//! Levels are numbered internally `j = k + P − 1` (`0 ..= P − 1 + lg N`), node `j·N + row`.

use crate::error::{Error, Result};
use crate::rng::{Stream, stream};
use crate::topology::{SplitterWiring, check_inputs};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

/// Largest multiplicity the topology builder supports.
const MAX_MULTIPLICITY: u32 = 8;
/// Largest number of permutations (front levels `P − 1`).
const MAX_PERMUTATIONS: u32 = 64;
/// Largest number of links of the whole network (front levels included), to bound memory.
const MAX_LINKS: u64 = 1 << 25;
/// Largest wave modulus.
const MAX_WAVE_MODULUS: u32 = 1 << 16;
/// No packet / no wave.
const NONE: u32 = u32::MAX;
/// [`Active::want`] of a front-level link: any packet may take it.
const ANY: u8 = 2;
/// Stuck packets named in a deadlock message.
const NAMED_STUCK: usize = 5;

/// Parameters of a run. The example of [LM] §II-B has `d = 11`, `Lw = 16`, `ν = 1/2`,
/// `w = 1/√2`, `β = 4`; the topology builder stops at `d = 8`, so the default here is `d = 4`
/// and `N = 256`. `β` is not measured: it only enters `σ` and `ρ` (Claim 2.4) and the
/// Theorem 2.1 bound, and is *assumed* (a random splitter of multiplicity `d` expands by about
/// `d − 1` for small `α`, so `β = 4` with `d = 4` is optimistic).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UpfalConfig {
    /// `N`: inputs (= outputs = rows), a power of two.
    pub inputs: u32,
    /// `d`: up (and down) links per splitter input; the colouring uses `2d` colours. The
    /// analysis needs `d ≥ 3`; `1..=8` is accepted.
    pub multiplicity: u32,
    /// `P`: permutations routed at once (front levels `−1 … −(P−1)`).
    pub permutations: u32,
    /// `Lw` (the paper's `L`): wave modulus, a power of two (the analysis wants `Lw ≥ 1/(2α)`).
    pub wave_modulus: u32,
    /// `ν`: weight ratio of consecutive waves, in `(0, 1)`.
    pub nu: f64,
    /// `w`: potential ratio of consecutive level pairs, in `(0, 1)`.
    pub w: f64,
    /// `β`: assumed splitter expansion (`0 < β ≤ d`), only for `σ`, `ρ` and the bound.
    pub beta: f64,
    /// How the splitter levels are wired.
    pub wiring: SplitterWiring,
    /// What the front levels are.
    pub front: FrontLevels,
    /// Seed of the splitter wiring (`Wiring` stream) and the front matchings (`Routing` stream).
    pub seed: u64,
    /// [`Error::Deadlock`] once this many consecutive stages moved no packet while packets
    /// remained.
    pub watchdog_stages: u32,
}

impl Default for UpfalConfig {
    fn default() -> Self {
        UpfalConfig {
            inputs: 256,
            multiplicity: 4,
            permutations: 1,
            wave_modulus: 16,
            nu: 0.5,
            w: std::f64::consts::FRAC_1_SQRT_2,
            beta: 4.0,
            wiring: SplitterWiring::default(),
            front: FrontLevels::Copies,
            seed: 1,
            watchdog_stages: 64,
        }
    }
}

impl UpfalConfig {
    /// Checks every parameter against its allowed range.
    pub fn validate(&self) -> Result<()> {
        let log_n = check_inputs(self.inputs)?;
        if !(1..=MAX_MULTIPLICITY).contains(&self.multiplicity) {
            return Err(Error::invalid("d", self.multiplicity, "1 to 8"));
        }
        if !(1..=MAX_PERMUTATIONS).contains(&self.permutations) {
            return Err(Error::invalid(
                "permutations",
                self.permutations,
                format!("1 to {MAX_PERMUTATIONS}"),
            ));
        }
        let links = u64::from(self.permutations - 1 + log_n)
            * u64::from(self.inputs)
            * 2
            * u64::from(self.multiplicity);
        if links > MAX_LINKS {
            return Err(Error::invalid(
                "permutations",
                self.permutations,
                format!(
                    "small enough that (permutations - 1 + lg inputs) * inputs * 2 * multiplicity \
                     <= {MAX_LINKS} links (here {links})"
                ),
            ));
        }
        // Lw > N is allowed (every packet of a permutation is then its own wave).
        if !self.wave_modulus.is_power_of_two() || self.wave_modulus > MAX_WAVE_MODULUS {
            return Err(Error::invalid(
                "wave-modulus",
                self.wave_modulus,
                "a power of two from 1 to 65536",
            ));
        }
        let open_unit = |x: f64| x > 0.0 && x < 1.0;
        if !open_unit(self.nu) {
            return Err(Error::invalid("nu", self.nu, "a number in (0, 1)"));
        }
        if !open_unit(self.w) {
            return Err(Error::invalid("w", self.w, "a number in (0, 1)"));
        }
        if !(self.beta > 0.0 && self.beta <= f64::from(self.multiplicity)) {
            return Err(Error::invalid(
                "beta",
                self.beta,
                format!(
                    "0 < beta <= d = {} (no splitter expands by more than d; Claim 2.4 needs beta (1 - nu) > 1)",
                    self.multiplicity
                ),
            ));
        }
        // The lightest packet's potential must stay a normal f64.
        let waves = f64::from(self.permutations) * f64::from(self.wave_modulus);
        let lightest = (waves - 1.0) * self.nu.log2() + f64::from(log_n + 1) * self.w.log2();
        if lightest < f64::MIN_POSITIVE.log2() {
            return Err(Error::invalid(
                "(nu, permutations, wave_modulus)",
                format!(
                    "({}, {}, {})",
                    self.nu, self.permutations, self.wave_modulus
                ),
                "values for which nu^(permutations * wave_modulus) * w^(lg inputs + 1) is a \
                 normal f64 (> 2.2e-308)",
            ));
        }
        if self.watchdog_stages == 0 {
            return Err(Error::invalid("watchdog_stages", 0, "at least 1"));
        }
        Ok(())
    }
}

/// The front levels −1 … −(P − 1) that hold the extra permutations (§II-A).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FrontLevels {
    /// Copies of the first splitter level as a graph, the whole row one block (the paper's
    /// "copies of the first level": docs/interpretations.md, 'Upfal's algorithm'); colours as
    /// level 0.
    #[default]
    Copies,
    /// `2d` independent uniformly random perfect matchings per level (matching `c` = colour
    /// `c`).
    Matchings,
}

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct UpfalReport {
    /// Step in which the last packet was delivered (steps count from 1; a stage is `4d` steps).
    pub steps: u64,
    /// Stages run (the last one completed even after the last delivery).
    pub stages: u64,
    /// Packets delivered (`P·N`).
    pub delivered: u32,
    /// Total potential (§II-B) at the start and after every stage.
    pub potential: Vec<f64>,
    /// Claim 2.4's per-stage factor `ρ = [σw + (1−σ)/w]²` for the configured `β`, `ν`, `w`.
    pub rho: f64,
    /// Lemma 2.8's `σ = β(1−ν) / (1 + β(1−ν))`.
    pub sigma: f64,
    /// Largest measured `potential[s + 1] / potential[s]` (Claim 2.4 promises `≤ ρ` on true
    /// `(α, β)`-expanders; not enforced). 0 if no stage started with positive potential.
    pub worst_stage_ratio: f64,
    /// Lemma 2.5 checks made: (phase, link) pairs whose tail held a packet that could use it.
    pub lemma_2_5_checks: u64,
    /// Theorem 2.1's step bound for this configuration ([`theorem_2_1_bound`]).
    pub bound_steps: f64,
}

impl UpfalReport {
    /// Measured potential ratio of every stage (`potential[s + 1] / potential[s]`, stages that
    /// start with positive potential only).
    pub fn stage_ratios(&self) -> Vec<f64> {
        self.potential
            .windows(2)
            .filter(|p| p[0] > 0.0)
            .map(|p| p[1] / p[0])
            .collect()
    }
}

/// Claim 2.4 / Lemma 2.8: `(ρ, σ)` with `σ = β(1−ν)/(1+β(1−ν))` and `ρ = [σw + (1−σ)/w]²`.
/// `ρ < 1` needs `σ > 1/2`, i.e. `β(1−ν) > 1`.
pub fn claim_2_4_rho(beta: f64, nu: f64, w: f64) -> (f64, f64) {
    let b = beta * (1.0 - nu);
    let sigma = b / (1.0 + b);
    let rho = (sigma * w + (1.0 - sigma) / w).powi(2);
    (rho, sigma)
}

/// Theorem 2.1: Upfal's algorithm routes `p` permutations on an `n`-input multibutterfly of
/// multiplicity `d` in at most
/// `4d [lg(2/w)·lg N + lg(1/ν)·P·Lw + lg(ν / (Lw(1−ν)(1 − ν^Lw/w)))] / lg(1/ρ)` steps
/// (lg base 2). Infinite when the analysis gives no bound (`ρ ∉ (0, 1)` or `ν^Lw ≥ w`).
pub fn theorem_2_1_bound(d: u32, n: u32, p: u32, lw: u32, nu: f64, w: f64, rho: f64) -> f64 {
    let lw_f = f64::from(lw);
    let tail = 1.0 - nu.powf(lw_f) / w;
    if !(rho > 0.0 && rho < 1.0) || tail <= 0.0 {
        return f64::INFINITY;
    }
    let log_n = f64::from(n).log2();
    let stages = ((2.0 / w).log2() * log_n
        + (1.0 / nu).log2() * f64::from(p) * lw_f
        + (nu / (lw_f * (1.0 - nu) * tail)).log2())
        / (1.0 / rho).log2();
    4.0 * f64::from(d) * stages
}

/// `p` independent uniformly random permutations of `0..n` (the `Traffic` stream of `seed`), in
/// the form [`route`] takes.
pub fn random_permutations(n: u32, p: u32, seed: u64) -> Vec<Vec<u32>> {
    let mut rng = stream(seed, Stream::Traffic);
    (0..p)
        .map(|_| {
            let mut v: Vec<u32> = (0..n).collect();
            v.shuffle(&mut rng);
            v
        })
        .collect()
}

/// Routes `permutations` (`permutations[k][i]` = destination of input `i`'s packet of
/// permutation `k`, each a permutation of `0..N`) with Upfal's algorithm (§II-A) on the network
/// of `config`. Checks every delivery and Lemma 2.5 after every phase ([`Error::Invariant`]);
/// [`Error::Deadlock`] if nothing moves for `watchdog_stages` stages.
pub fn route(config: &UpfalConfig, permutations: &[Vec<u32>]) -> Result<UpfalReport> {
    route_traced(config, permutations).map(|(report, _)| report)
}

/// [`route`], also returning every delivery as `(packet, output row)` in delivery order
/// (packet `k·N + i` = input `i`'s packet of permutation `k`).
fn route_traced(
    config: &UpfalConfig,
    permutations: &[Vec<u32>],
) -> Result<(UpfalReport, Vec<(u32, u32)>)> {
    config.validate()?;
    check_permutations(config, permutations)?;
    let net = Network::build(config)?;
    run(&net, config, permutations)
}

/// The stage loop of [`route_traced`] on a built network.
fn run(
    net: &Network,
    config: &UpfalConfig,
    permutations: &[Vec<u32>],
) -> Result<(UpfalReport, Vec<(u32, u32)>)> {
    let mut sim = Sim::new(net, config, permutations);
    let (rho, sigma) = claim_2_4_rho(config.beta, config.nu, config.w);
    let mut potential = vec![sim.potential()];
    let mut idle = 0u32;
    let mut stages = 0u64;
    while sim.remaining > 0 {
        crate::interrupt::check()?;
        stages += 1;
        let mut moves = 0u64;
        for parity in 0..2 {
            sim.best.fill(NONE);
            for c in 0..net.colours {
                moves += sim.step((parity * net.colours + c) as usize)?;
            }
            sim.check_lemma_2_5(parity)?;
        }
        potential.push(sim.potential());
        // A stage without moves leaves the state unchanged, so all later ones are still too.
        // Moves cannot go on forever without deliveries: every odd-phase move lowers the
        // potential strictly, and if an odd phase is still, Lemma 2.5 after the even phase
        // before it forbids any move in the next even phase. Nor can a correct network stall:
        // the foremost packet of the earliest wave always finds its head empty or lighter.
        if moves == 0 && sim.remaining > 0 {
            idle += 1;
            if idle >= config.watchdog_stages {
                return Err(Error::Deadlock(sim.stuck_message(idle)));
            }
        } else {
            idle = 0;
        }
    }
    let mut report = UpfalReport {
        steps: sim.last_delivery,
        stages,
        delivered: sim.deliveries.len() as u32,
        potential,
        rho,
        sigma,
        worst_stage_ratio: 0.0,
        lemma_2_5_checks: sim.checks,
        bound_steps: theorem_2_1_bound(
            config.multiplicity,
            config.inputs,
            config.permutations,
            config.wave_modulus,
            config.nu,
            config.w,
            rho,
        ),
    };
    report.worst_stage_ratio = report.stage_ratios().into_iter().fold(0.0, f64::max);
    Ok((report, sim.deliveries))
}

/// Checks the destination lists: `P` lists, each a permutation of `0..N`.
fn check_permutations(config: &UpfalConfig, permutations: &[Vec<u32>]) -> Result<()> {
    let n = config.inputs;
    if permutations.len() != config.permutations as usize {
        return Err(Error::invalid(
            "permutations (destination lists)",
            permutations.len(),
            format!("{} lists, one per permutation", config.permutations),
        ));
    }
    let mut seen = vec![NONE; n as usize];
    for (k, dests) in permutations.iter().enumerate() {
        let name = format!("permutations[{k}]");
        if dests.len() != n as usize {
            return Err(Error::invalid(
                &name,
                format!("{} destinations", dests.len()),
                format!("{n} destinations (one per input)"),
            ));
        }
        for &d in dests {
            if d >= n || seen[d as usize] == k as u32 {
                return Err(Error::invalid(
                    &name,
                    format!("destination {d}"),
                    format!("a permutation of 0..{n} (every output exactly once)"),
                ));
            }
            seen[d as usize] = k as u32;
        }
    }
    Ok(())
}

mod network;
mod sim;

use network::Network;
use sim::Sim;

#[cfg(test)]
mod tests;
