//! The waveform of [CMSV]'s forward passes (Algorithm 2, its variants and Theorem 1.14(a)'s
//! deterministic algorithm): per data link and cycle, the worms that won it, each lane with
//! the worm's id + 1 (0: idle) and the rank it won with, and how many flits were cut there;
//! under `tb.net`, the round and the cycle within its forward pass. Forward passes follow one
//! another on the time axis; the backward passes (acknowledgements, counted but not
//! simulated) are left out.

use super::Net;
use super::continuous::link_scope;
use crate::error::Result;
use crate::wave::{ScopedVcd, SignalDecl};
use std::io::Write;

/// Most signals a pass waveform declares (links × (2B + 1)).
pub const MAX_SIGNALS: u64 = 1 << 18;

/// A forward-pass waveform being written.
pub struct PassWave<'a> {
    vcd: ScopedVcd<&'a mut dyn Write>,
    values: Vec<u64>,
    lanes: u32,
    links: u32,
    time: u64,
}

/// One link's outcome in one cycle: a winner (worm, rank) or a cut flit.
pub enum LinkEvent {
    Won { link: u32, worm: u32, rank: u64 },
    Cut { link: u32, flits: u64 },
}

impl<'a> PassWave<'a> {
    /// Declares `lanes` (B) lanes on every data link of `net`, for worms below `worms` and
    /// ranks below `ranks`, with `header` in the VCD's comment.
    pub fn new(
        writer: &'a mut dyn Write,
        header: &str,
        net: &Net,
        lanes: u32,
        worms: u64,
        ranks: u64,
    ) -> Result<Self> {
        let bits = |n: u64| (64 - n.leading_zeros()).max(1);
        let (wb, rb) = (bits(worms + 1), bits(ranks));
        let mut scopes = vec![(
            String::new(),
            vec![
                SignalDecl {
                    name: "round".into(),
                    width: 32,
                    encoding: None,
                },
                SignalDecl {
                    name: "pass_cycle".into(),
                    width: 32,
                    encoding: None,
                },
            ],
        )];
        for l in 0..net.data_links() {
            let mut decls = Vec::new();
            for k in 0..lanes {
                decls.push(SignalDecl {
                    name: format!("lane{k}_worm"),
                    width: wb,
                    encoding: None,
                });
                decls.push(SignalDecl {
                    name: format!("lane{k}_rank"),
                    width: rb,
                    encoding: None,
                });
            }
            decls.push(SignalDecl {
                name: "cut".into(),
                width: 16,
                encoding: None,
            });
            scopes.push((link_scope(net, l), decls));
        }
        let per = 2 * lanes as usize + 1;
        let values = vec![0; 2 + net.data_links() as usize * per];
        let vcd = ScopedVcd::new(writer, header, &[], &scopes, &values)?;
        Ok(PassWave {
            vcd,
            values,
            lanes,
            links: net.data_links(),
            time: 0,
        })
    }

    /// Signals that [`PassWave::new`] declares for `links` data links and `lanes` lanes.
    pub fn signals(links: u32, lanes: u32) -> u64 {
        2 + u64::from(links) * (2 * u64::from(lanes) + 1)
    }

    /// Writes one cycle of round `round`'s forward pass.
    pub fn sample(&mut self, round: u32, cycle: u64, events: &[LinkEvent]) -> Result<()> {
        let per = 2 * self.lanes as usize + 1;
        self.values.fill(0);
        self.values[0] = u64::from(round);
        self.values[1] = cycle;
        for e in events {
            match *e {
                LinkEvent::Won { link, worm, rank } if link < self.links => {
                    let base = 2 + link as usize * per;
                    // the next idle lane of the link
                    if let Some(k) =
                        (0..self.lanes as usize).find(|&k| self.values[base + 2 * k] == 0)
                    {
                        self.values[base + 2 * k] = u64::from(worm) + 1;
                        self.values[base + 2 * k + 1] = rank;
                    }
                }
                LinkEvent::Cut { link, flits } if link < self.links => {
                    let at = 2 + link as usize * per + per - 1;
                    self.values[at] = (self.values[at] + flits).min(0xFFFF);
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
