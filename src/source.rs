//! Sources ([CMS] §1.1): per input an unbounded injection queue outside the network, feeding
//! the B virtual channels of its injection port at a level-0 switch. A source starts its queued
//! messages in order, one per free injection VC, and sends each worm's flits contiguously, one
//! per cycle. In drop mode a worm whose header was discarded is queued again after the
//! negative acknowledgement and a back-off, until it has used its attempts.

use crate::config::LinkBandwidth;
use crate::flit::FlitSlot;
use crate::gang::Gang;
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
        }
    }

    /// Queues message `msg` at input `source`.
    pub fn release(&mut self, source: u32, msg: u32) {
        let queue = &mut self.queues[source as usize];
        queue.push_back(msg);
        self.peak_waiting = self.peak_waiting.max(queue.len());
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
        self.queues.iter().all(VecDeque::is_empty)
    }

    /// Messages waiting in queues or for a retry.
    pub fn waiting(&self) -> usize {
        self.queues.iter().map(VecDeque::len).sum::<usize>() + self.retries.len()
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

    /// [`Sources::evaluate`] for every input, the inputs cut into one run per thread of `gang`
    /// if there is one (an input writes only its own proposed sends).
    pub fn evaluate_all(&mut self, fabric: &Fabric, gang: Option<&mut Gang>) {
        let b = self.vcs as usize;
        let inputs = self.queues.len();
        let mut send = std::mem::take(&mut self.send);
        match gang.filter(|g| g.threads() > 1 && inputs >= g.threads()) {
            None => {
                for (input, send) in send.chunks_mut(b).enumerate() {
                    self.decide(input as u32, fabric, send);
                }
            }
            Some(gang) => {
                let per = inputs.div_ceil(gang.threads());
                let runs: Vec<_> = send.chunks_mut(per * b).enumerate().collect();
                let this = &*self;
                gang.map(runs, |(k, run)| {
                    for (j, send) in run.chunks_mut(b).enumerate() {
                        this.decide((k * per + j) as u32, fabric, send);
                    }
                });
            }
        }
        self.send = send;
    }

    /// The flits input `input` proposes to send, one per injection VC, into `send`.
    fn decide(&self, input: u32, fabric: &Fabric, send: &mut [Option<FlitSlot>]) {
        let b = self.vcs;
        // An idle input (nothing queued, no worm mid-injection) sends nothing: most inputs at
        // low load.
        let slots = (input * b) as usize..((input + 1) * b) as usize;
        if self.queues[input as usize].is_empty() && self.worm[slots].iter().all(|&w| w == NONE) {
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

    /// Commits the cycle's sends as `Injected` transfers.
    pub fn commit(&mut self, transfers: &mut Vec<Transfer>, fabric: &Fabric) {
        let b = self.vcs;
        for slot in 0..self.send.len() {
            let Some(flit) = self.send[slot].take() else {
                continue;
            };
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
}
