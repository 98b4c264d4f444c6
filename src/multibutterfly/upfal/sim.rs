//! Upfal's algorithm stepping on a built network ([LM] §II-A): moves and swaps, deliveries,
//! the Lemma 2.5 check and the potential of §II-B.

use super::network::Network;
use super::{NAMED_STUCK, NONE, UpfalConfig};
use crate::error::{Error, Result};

/// Routing state.
pub(super) struct Sim<'a> {
    pub(super) net: &'a Network,
    /// Packet in each switch, or [`NONE`].
    pub(super) occ: Vec<u32>,
    pub(super) wave: Vec<u32>,
    pub(super) dest: Vec<u32>,
    pub(super) remaining: u32,
    /// Per output row: the earliest wave delivered there during the current phase.
    pub(super) best: Vec<u32>,
    /// Steps run so far.
    pub(super) step: u64,
    pub(super) last_delivery: u64,
    pub(super) deliveries: Vec<(u32, u32)>,
    pub(super) checks: u64,
    /// `ν^wave` per wave.
    pub(super) weight: Vec<f64>,
    /// `w^k` (k odd) or `w^(k+1)` (k even) per internal level.
    pub(super) level_factor: Vec<f64>,
}

impl<'a> Sim<'a> {
    /// Packet `k·N + i` starts at row `i` of level `−k`, in wave `k·Lw + (dest mod Lw)`.
    pub(super) fn new(net: &'a Network, config: &UpfalConfig, permutations: &[Vec<u32>]) -> Self {
        let n = net.n;
        let lw = config.wave_modulus;
        let packets = (net.perms * n) as usize;
        let mut occ = vec![NONE; (net.levels * n) as usize];
        let mut wave = Vec::with_capacity(packets);
        let mut dest = Vec::with_capacity(packets);
        for (k, dests) in permutations.iter().enumerate() {
            let j = net.perms - 1 - k as u32;
            for (i, &d) in dests.iter().enumerate() {
                occ[(j * n) as usize + i] = wave.len() as u32;
                wave.push(k as u32 * lw + d % lw);
                dest.push(d);
            }
        }
        let weight = (0..net.perms * lw)
            .map(|i| config.nu.powi(i as i32))
            .collect();
        let level_factor = (0..net.levels)
            .map(|j| {
                let k = net.paper_level(j);
                let e = if k.rem_euclid(2) == 1 { k } else { k + 1 };
                config.w.powi(e as i32)
            })
            .collect();
        Sim {
            net,
            occ,
            wave,
            dest,
            remaining: packets as u32,
            best: vec![NONE; n as usize],
            step: 0,
            last_delivery: 0,
            deliveries: Vec::with_capacity(packets),
            checks: 0,
            weight,
            level_factor,
        }
    }

    /// One step: every link of `class` at once (conflict-free, see
    /// [`Network::check_colouring`], so a sequential pass is simultaneous). Returns the moves.
    pub(super) fn step(&mut self, class: usize) -> Result<u64> {
        self.step += 1;
        let net = self.net;
        let mut moves = 0;
        for a in &net.classes[class] {
            let p = self.occ[a.tail as usize];
            if p == NONE || !a.usable(self.dest[p as usize]) {
                continue;
            }
            if a.output {
                // Outputs are emptied at the end of every step and touched once per step:
                // delivering at once is the same.
                self.occ[a.tail as usize] = NONE;
                self.deliver(p, a.head % net.n)?;
                moves += 1;
                continue;
            }
            let q = self.occ[a.head as usize];
            // Move into an empty head, or swap with a later-wave packet (which goes back to the
            // tail; it stays on its logical path, the tail being in its path's block).
            if q == NONE || self.wave[q as usize] > self.wave[p as usize] {
                self.occ[a.head as usize] = p;
                self.occ[a.tail as usize] = q;
                moves += 1;
            }
        }
        Ok(moves)
    }

    pub(super) fn deliver(&mut self, p: u32, row: u32) -> Result<()> {
        if self.dest[p as usize] != row {
            return Err(Error::Invariant {
                cycle: self.step,
                message: format!(
                    "packet {p} delivered to output {row}, but its destination is {}",
                    self.dest[p as usize]
                ),
            });
        }
        let w = self.wave[p as usize];
        let best = &mut self.best[row as usize];
        *best = (*best).min(w);
        self.deliveries.push((p, row));
        self.remaining -= 1;
        self.last_delivery = self.step;
        Ok(())
    }

    /// Lemma 2.5 after a phase of `parity`: for every link of the phase whose tail packet could
    /// use it, the head holds a packet at least as heavy (for an output head: the heaviest
    /// packet delivered there during the phase); an empty head weighs 0.
    pub(super) fn check_lemma_2_5(&mut self, parity: u32) -> Result<()> {
        let net = self.net;
        let c = net.colours as usize;
        let first = parity as usize * c;
        for a in net.classes[first..first + c].iter().flatten() {
            let p = self.occ[a.tail as usize];
            if p == NONE || !a.usable(self.dest[p as usize]) {
                continue;
            }
            self.checks += 1;
            let head_wave = if a.output {
                self.best[(a.head % net.n) as usize]
            } else {
                match self.occ[a.head as usize] {
                    NONE => NONE,
                    q => self.wave[q as usize],
                }
            };
            let tail_wave = self.wave[p as usize];
            if head_wave == NONE || head_wave > tail_wave {
                let head = if head_wave == NONE {
                    "no packet".to_string()
                } else {
                    format!("a packet of wave {head_wave}")
                };
                return Err(Error::Invariant {
                    cycle: self.step,
                    message: format!(
                        "Lemma 2.5: after a {} phase, packet {p} (wave {tail_wave}) at {} could \
                         use the link to {}, which holds {head}",
                        if parity == 0 { "even" } else { "odd" },
                        net.describe(a.tail),
                        net.describe(a.head),
                    ),
                });
            }
        }
        Ok(())
    }

    /// Total potential (§II-B): `ν^wave · w^k` (k odd) or `ν^wave · w^(k+1)` (k even).
    pub(super) fn potential(&self) -> f64 {
        let n = self.net.n as usize;
        self.occ
            .iter()
            .enumerate()
            .filter(|&(_, &p)| p != NONE)
            .map(|(node, &p)| {
                self.weight[self.wave[p as usize] as usize] * self.level_factor[node / n]
            })
            // Not `sum()`: an empty f64 sum is −0.0.
            .fold(0.0, |a, b| a + b)
    }

    /// Deadlock message naming a few stuck packets.
    pub(super) fn stuck_message(&self, idle: u32) -> String {
        let stuck: Vec<String> = self
            .occ
            .iter()
            .enumerate()
            .filter(|&(_, &p)| p != NONE)
            .take(NAMED_STUCK)
            .map(|(node, &p)| {
                format!(
                    "packet {p} at {} wave {} destination {}",
                    self.net.describe(node as u32),
                    self.wave[p as usize],
                    self.dest[p as usize]
                )
            })
            .collect();
        format!(
            "Upfal routing: no packet moved for {idle} stages (step {}) with {} packets left: {}",
            self.step,
            self.remaining,
            stuck.join("; ")
        )
    }
}
