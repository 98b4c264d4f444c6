//! Sources ([CMS] §1.1): per input an unbounded injection queue outside the network, feeding
//! the B virtual channels of its injection port at a level-0 switch. A source starts its queued
//! messages in order, one per free injection VC, and sends each worm's flits contiguously, one
//! per cycle. In drop mode a worm whose header was discarded is queued again after the
//! negative acknowledgement and a back-off, until it has used its attempts.

use crate::config::LinkBandwidth;
use crate::flit::FlitSlot;
use crate::switch::{Fabric, NONE, Transfer, TransferKind};
use std::collections::{BTreeSet, VecDeque};

/// The injection side of a network.
#[derive(Clone, Debug)]
pub struct Sources {
    vcs: u32,
    flits: u16,
    bandwidth: LinkBandwidth,
    /// Released messages waiting to start, per input.
    queues: Vec<VecDeque<u32>>,
    /// The most messages that ever waited at any input, counted right after a release (an
    /// upper bound of the queue length at the end of every cycle): sizes the pending
    /// counter of a hardware generator.
    peak_waiting: usize,
    /// Per injection VC (`input * B + vc`): the message being sent, or `NONE`.
    worm: Vec<u32>,
    /// Per injection VC: index of the next flit to send.
    next_seq: Vec<u16>,
    /// Per input: round-robin pointer over its VCs (one-flit-per-link bandwidth).
    rr: Vec<u16>,
    /// Proposed sends of the cycle being evaluated, per injection VC.
    send: Vec<Option<FlitSlot>>,
    /// Retries not yet due: (cycle, message).
    retries: BTreeSet<(u64, u32)>,
    /// Worms partly sent (injection VCs whose `worm` is not `NONE`).
    sending: usize,
    /// One bit per input with a message queued or a worm partly sent (set on release, cleared
    /// by the commit that leaves the input idle): the others propose nothing, and the cycle
    /// passes them by.
    active: Vec<u64>,
}

/// Calls `f` on every input whose bit is set in `words`.
fn for_active(words: &[u64], mut f: impl FnMut(usize)) {
    for (w, &word) in words.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            f(w * 64 + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
}

impl Sources {
    /// Idle sources for `inputs` inputs.
    pub fn new(inputs: u32, vcs: u32, flits: u32, bandwidth: LinkBandwidth) -> Self {
        let slots = (inputs * vcs) as usize;
        Sources {
            vcs,
            flits: flits as u16,
            bandwidth,
            queues: vec![VecDeque::new(); inputs as usize],
            peak_waiting: 0,
            worm: vec![NONE; slots],
            next_seq: vec![0; slots],
            rr: vec![0; inputs as usize],
            send: vec![None; slots],
            retries: BTreeSet::new(),
            sending: 0,
            active: vec![0; (inputs as usize).div_ceil(64)],
        }
    }

    /// Queues message `msg` at input `source`.
    pub fn release(&mut self, source: u32, msg: u32) {
        let queue = &mut self.queues[source as usize];
        queue.push_back(msg);
        self.peak_waiting = self.peak_waiting.max(queue.len());
        self.active[source as usize / 64] |= 1 << (source % 64);
    }

    /// The most messages that ever waited to start at one input so far (counted right after
    /// their release, before any started in that cycle).
    pub fn peak_waiting(&self) -> usize {
        self.peak_waiting
    }

    /// Schedules a retry of `msg` (from input `source`) for cycle `at`.
    pub fn retry_at(&mut self, at: u64, msg: u32) {
        self.retries.insert((at, msg));
    }

    /// Retries due at `cycle`, in (cycle, message) order.
    pub fn due_retries(&mut self, cycle: u64) -> Vec<u32> {
        let mut due = Vec::new();
        while let Some(&(at, msg)) = self.retries.first() {
            if at > cycle {
                break;
            }
            self.retries.pop_first();
            due.push(msg);
        }
        due
    }

    /// The cycle of the earliest retry not yet due.
    pub fn next_retry(&self) -> Option<u64> {
        self.retries.first().map(|&(at, _)| at)
    }

    /// Whether no message waits in a source queue (retries not yet due aside).
    pub fn queues_empty(&self) -> bool {
        let mut empty = true;
        for_active(&self.active, |input| empty &= self.queues[input].is_empty());
        empty
    }

    /// Messages waiting in queues or for a retry.
    pub fn waiting(&self) -> usize {
        let mut queued = 0;
        for_active(&self.active, |input| queued += self.queues[input].len());
        queued + self.retries.len()
    }

    /// Whether `input` has nothing to send: no message queued, no worm partly sent.
    fn idle(&self, input: usize) -> bool {
        let b = self.vcs as usize;
        self.queues[input].is_empty()
            && self.worm[input * b..(input + 1) * b]
                .iter()
                .all(|&w| w == NONE)
    }

    /// Worms partly sent.
    pub fn sending(&self) -> usize {
        self.sending
    }

    /// Decides which flits input `input` sends this cycle, from the injection VCs' `ready` and
    /// `accepts_new_worm` signals.
    pub fn evaluate(&mut self, input: u32, fabric: &Fabric) {
        let b = self.vcs as usize;
        let mut send = std::mem::take(&mut self.send);
        let i = input as usize;
        self.decide(input, fabric, &mut send[i * b..(i + 1) * b]);
        self.send = send;
    }

    /// [`Sources::evaluate`] for every input with something to send (the others' proposals
    /// stay empty). On this thread even when the switches evaluate on several: the sources'
    /// state then stays on the core that admits messages and commits their injections.
    pub fn evaluate_all(&mut self, fabric: &Fabric) {
        let b = self.vcs as usize;
        let mut send = std::mem::take(&mut self.send);
        for_active(&self.active, |input| {
            self.decide(input as u32, fabric, &mut send[input * b..(input + 1) * b]);
        });
        self.send = send;
    }

    /// The flits input `input` proposes to send, one per injection VC, into `send`.
    fn decide(&self, input: u32, fabric: &Fabric, send: &mut [Option<FlitSlot>]) {
        let b = self.vcs;
        // An idle input (nothing queued, no worm mid-injection) sends nothing: most inputs at
        // low load.
        if self.idle(input as usize) {
            send.fill(None);
            return;
        }
        let mut queued = self.queues[input as usize].iter();
        let start = u32::from(self.rr[input as usize]);
        let mut sent_one = false;
        for k in 0..b {
            let v = match self.bandwidth {
                LinkBandwidth::PerVc => k,
                LinkBandwidth::One => (start + k) % b,
            };
            let slot = (input * b + v) as usize;
            let ivc = fabric.injection_vc(input, v);
            send[v as usize] = None;
            if self.bandwidth == LinkBandwidth::One && sent_one {
                continue;
            }
            let flit = if self.worm[slot] != NONE {
                fabric.ready(ivc).then(|| FlitSlot {
                    msg: self.worm[slot],
                    seq: self.next_seq[slot],
                    hop: 0,
                })
            } else if fabric.accepts_new_worm(ivc) {
                queued.next().map(|&msg| FlitSlot {
                    msg,
                    seq: 0,
                    hop: 0,
                })
            } else {
                None
            };
            sent_one |= flit.is_some();
            send[v as usize] = flit;
        }
    }

    /// Commits the cycle's sends as `Injected` transfers (in input and VC order).
    pub fn commit(&mut self, transfers: &mut Vec<Transfer>, fabric: &Fabric) {
        let b = self.vcs as usize;
        for w in 0..self.active.len() {
            let mut bits = self.active[w];
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let input = w * 64 + bit as usize;
                for slot in input * b..(input + 1) * b {
                    if let Some(flit) = self.send[slot].take() {
                        self.commit_send(slot, flit, transfers, fabric);
                    }
                }
                if self.idle(input) {
                    self.active[w] &= !(1 << bit);
                }
            }
        }
    }

    /// Injection VC `slot` sends `flit`.
    fn commit_send(
        &mut self,
        slot: usize,
        flit: FlitSlot,
        transfers: &mut Vec<Transfer>,
        fabric: &Fabric,
    ) {
        let b = self.vcs;
        let input = slot as u32 / b;
        if flit.seq == 0 {
            self.queues[input as usize].pop_front();
            self.worm[slot] = flit.msg;
            self.sending += 1;
        }
        self.next_seq[slot] = flit.seq + 1;
        if flit.seq + 1 == self.flits {
            self.worm[slot] = NONE;
            self.sending -= 1;
        }
        self.rr[input as usize] = ((slot as u32 % b + 1) % b) as u16;
        let to = fabric.injection_vc(input, slot as u32 % b);
        transfers.push(Transfer {
            flit,
            from: NONE,
            to,
            kind: TransferKind::Injected,
        });
    }
}
