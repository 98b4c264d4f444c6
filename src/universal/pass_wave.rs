//! The waveform of [CMSV]'s forward passes (Algorithms 1 and 2, their variants, Theorem
//! 1.14(a)'s deterministic algorithm and Theorem 1.7's buffered routing): per data link and
//! cycle (or step), the messages that crossed it, each lane with the message's id + 1 (0:
//! idle) and, where the algorithm ranks them, the rank it crossed with; the flits cut (or
//! copies discarded) there; with buffers, the packets the link's buffer holds. Under
//! `tb.net`, the round and the cycle within its forward pass. Forward passes follow one
//! another on the time axis; the backward passes (acknowledgements, counted but not
//! simulated) are left out.

use super::Net;
use super::continuous::link_scope;
use crate::error::Result;
use crate::wave::{ScopedVcd, SignalDecl};
use std::io::Write;

/// Most signals a pass waveform declares.
pub const MAX_SIGNALS: u64 = 1 << 18;

/// What a pass waveform shows on every link.
#[derive(Clone, Copy, Debug)]
pub struct Signals {
    /// Lanes (messages crossing per cycle), B.
    pub lanes: u32,
    /// Messages (ids below this).
    pub messages: u64,
    /// Ranks below this, or `None` where the algorithm has none.
    pub ranks: Option<u64>,
    /// Buffer size A, where links have buffers.
    pub buffers: Option<u32>,
}

impl Signals {
    /// Signals per link.
    fn per_link(&self) -> usize {
        let lane = 1 + usize::from(self.ranks.is_some());
        self.lanes as usize * lane + 1 + usize::from(self.buffers.is_some())
    }

    /// Signals declared for `links` data links.
    pub fn count(&self, links: u32) -> u64 {
        2 + u64::from(links) * self.per_link() as u64
    }
}

/// A forward-pass waveform being written.
pub struct PassWave<'a> {
    vcd: ScopedVcd<&'a mut dyn Write>,
    values: Vec<u64>,
    signals: Signals,
    links: u32,
    time: u64,
}

/// One link's outcome in one cycle: a winner (worm, rank), cut flits (discarded copies) or
/// its buffer's occupancy after the cycle. Algorithm 1 and Theorem 1.7 route packets: their
/// `worm` is the packet, and Algorithm 1's `flits` count discarded copies.
pub enum LinkEvent {
    Won { link: u32, worm: u32, rank: u64 },
    Cut { link: u32, flits: u64 },
    Held { link: u32, packets: u32 },
}

impl<'a> PassWave<'a> {
    /// Declares `signals` on every data link of `net`, with `header` in the VCD's comment.
    pub fn new(
        writer: &'a mut dyn Write,
        header: &str,
        net: &Net,
        signals: Signals,
    ) -> Result<Self> {
        let bits = |n: u64| (64 - n.leading_zeros()).max(1);
        let decl = |name: String, width: u32| SignalDecl {
            name,
            width,
            encoding: None,
        };
        let mut scopes = vec![(
            String::new(),
            vec![decl("round".into(), 32), decl("pass_cycle".into(), 32)],
        )];
        for l in 0..net.data_links() {
            let mut decls = Vec::new();
            for k in 0..signals.lanes {
                decls.push(decl(format!("lane{k}_worm"), bits(signals.messages + 1)));
                if let Some(ranks) = signals.ranks {
                    decls.push(decl(format!("lane{k}_rank"), bits(ranks)));
                }
            }
            decls.push(decl("cut".into(), 16));
            if let Some(a) = signals.buffers {
                decls.push(decl("held".into(), bits(u64::from(a) + 1)));
            }
            scopes.push((link_scope(net, l), decls));
        }
        let values = vec![0; signals.count(net.data_links()) as usize];
        let vcd = ScopedVcd::new(writer, header, &[], &scopes, &values)?;
        Ok(PassWave {
            vcd,
            values,
            signals,
            links: net.data_links(),
            time: 0,
        })
    }

    /// Writes one cycle of round `round`'s forward pass. A buffer's occupancy holds until an
    /// event changes it; everything else shows this cycle's events only.
    pub fn sample(&mut self, round: u32, cycle: u64, events: &[LinkEvent]) -> Result<()> {
        let per = self.signals.per_link();
        let lane = 1 + usize::from(self.signals.ranks.is_some());
        let lanes = self.signals.lanes as usize;
        let buffered = self.signals.buffers.is_some();
        for l in 0..self.links as usize {
            let base = 2 + l * per;
            self.values[base..base + lanes * lane + 1].fill(0);
        }
        self.values[0] = u64::from(round);
        self.values[1] = cycle;
        for e in events {
            match *e {
                LinkEvent::Won { link, worm, rank } if link < self.links => {
                    let base = 2 + link as usize * per;
                    // the next idle lane of the link
                    if let Some(k) = (0..lanes).find(|&k| self.values[base + lane * k] == 0) {
                        self.values[base + lane * k] = u64::from(worm) + 1;
                        if lane == 2 {
                            self.values[base + lane * k + 1] = rank;
                        }
                    }
                }
                LinkEvent::Cut { link, flits } if link < self.links => {
                    let at = 2 + link as usize * per + lanes * lane;
                    self.values[at] = (self.values[at] + flits).min(0xFFFF);
                }
                LinkEvent::Held { link, packets } if link < self.links && buffered => {
                    self.values[2 + link as usize * per + per - 1] = u64::from(packets);
                }
                _ => {}
            }
        }
        self.vcd.sample(self.time, &[], &self.values)?;
        self.time += 1;
        Ok(())
    }

    /// Flushes the waveform.
    pub fn finish(self) -> Result<()> {
        self.vcd.finish()
    }
}
