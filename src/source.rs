//! Sources ([CMS] §1.1): per input an unbounded injection queue outside the network, feeding
//! the B virtual channels of its injection port at a level-0 switch. A source starts its queued
//! messages in order, one per free injection VC, and sends each worm's flits contiguously, one
//! per cycle. In drop mode a worm whose header was discarded is queued again after the
//! negative acknowledgement and a back-off, until it has used its attempts.

use crate::config::LinkBandwidth;
use crate::flit::FlitSlot;
use crate::lines::Lines;
use crate::switch::{Fabric, NONE, Transfer};
use std::collections::{BTreeSet, VecDeque};

mod registers;

pub(crate) use registers::InjectionRegisters;

/// The injection side of a network.
#[derive(Clone, Debug)]
pub struct Sources {
    vcs: u32,
    flits: u16,
    bandwidth: LinkBandwidth,
    /// Released messages waiting to start, per input.
    queues: Vec<VecDeque<u32>>,
    /// The most messages that ever waited at any input, counted right after a release (with
    /// a cut, when the owning thread queues it, before any starts: the same count) (an
    /// upper bound of the queue length at the end of every cycle): sizes the pending
    /// counter of a hardware generator.
    peak_waiting: usize,
    /// Per injection VC (`input * B + vc`): the message being sent, or `NONE` (kept by the
    /// input-by-input paths; the bit-plane kernel's word path keeps `mid_worm` and `left`).
    worm: Vec<u32>,
    /// The same as bits: word `w * B + vc` has bit `i` set where input `64 w + i`'s worm on
    /// VC `vc` is partly sent.
    mid_worm: Lines<u64>,
    /// Per injection VC: index of the next flit to send (kept as `worm` is).
    next_seq: Vec<u16>,
    /// The word path's count of the flits a partly sent worm has left to send after the one
    /// sent last, in bit planes: [`left_bits`] planes per word of `mid_worm`, bit `k` of
    /// the count in plane `(w * B + vc) * left_bits + k`.
    left: Lines<u64>,
    /// Per input: round-robin pointer over its VCs (one-flit-per-link bandwidth).
    rr: Vec<u16>,
    /// Proposed sends of the cycle being evaluated, per injection VC.
    send: Vec<Option<FlitSlot>>,
    /// Retries not yet due: (cycle, message).
    retries: BTreeSet<(u64, u32)>,
    /// Worms partly sent (injection VCs whose `worm` is not `NONE`).
    sending: usize,
    /// One bit per input with a message queued or a worm partly sent (set when a message is
    /// queued, cleared by the commit that leaves the input idle): the others propose nothing,
    /// and the cycle passes them by.
    active: Lines<u64>,
    /// One bit per input whose queue holds a message (of `active`, those that may start a
    /// worm).
    queued: Lines<u64>,
    /// Where the inputs are cut into parts that threads own ([`Sources::set_cut`]), and per
    /// part the messages released there and not yet queued, in release order: the thread
    /// that owns a part queues them before its sources decide, so that the queues stay in
    /// its core's cache.
    cut: Option<std::sync::Arc<[usize]>>,
    pending: Vec<Vec<(u32, u32)>>,
}

/// Queue length from which [`Sources::next_after_long_wait`] names the next message: shorter
/// queues' records are still in the cache (a request for them would cost more than it
/// saves); a saturated network's grow without bound.
const LONG_QUEUE: usize = 8;

/// The message `ahead` places from the front of `queue`, where at least [`LONG_QUEUE`] wait
/// from it on (one that long has left the cache since it was released: worth asking for
/// before it starts).
fn waiting_long(queue: &VecDeque<u32>, ahead: usize) -> Option<u32> {
    (queue.len() >= LONG_QUEUE + ahead).then(|| queue[ahead])
}

/// Bits of a count of the flits a worm of `flits` has left after its header (0 to
/// `flits − 1`).
fn left_bits(flits: u16) -> usize {
    (u16::BITS - flits.saturating_sub(1).leading_zeros()) as usize
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
            mid_worm: Lines::filled((inputs as usize).div_ceil(64) * vcs as usize, 0),
            next_seq: vec![0; slots],
            left: Lines::filled(
                (inputs as usize).div_ceil(64) * vcs as usize * left_bits(flits as u16),
                0,
            ),
            rr: vec![0; inputs as usize],
            send: vec![None; slots],
            retries: BTreeSet::new(),
            sending: 0,
            active: Lines::filled((inputs as usize).div_ceil(64), 0),
            queued: Lines::filled((inputs as usize).div_ceil(64), 0),
            cut: None,
            pending: Vec::new(),
        }
    }

    /// Queues message `msg` at input `source` (with a cut, the thread that owns the input
    /// queues it before its sources next decide).
    #[inline]
    pub fn release(&mut self, source: u32, msg: u32) {
        if let Some(cut) = &self.cut {
            let part = cut.partition_point(|&b| b <= source as usize) - 1;
            return self.pending[part].push((source, msg));
        }
        let queue = &mut self.queues[source as usize];
        queue.push_back(msg);
        self.peak_waiting = self.peak_waiting.max(queue.len());
        self.active[source as usize / 64] |= 1 << (source % 64);
        self.queued[source as usize / 64] |= 1 << (source % 64);
    }

    /// The message that input `source` starts next, where at least [`LONG_QUEUE`] wait
    /// there: a queue that long has held it for as many worms, long enough for its record to
    /// have left the cache. None where threads own the inputs ([`Sources::set_cut`]): their
    /// queues are in those threads' caches, and reading one here would cost more than the
    /// record.
    #[inline]
    pub(crate) fn next_after_long_wait(&self, source: u32) -> Option<u32> {
        if self.cut.is_some() {
            return None;
        }
        waiting_long(&self.queues[source as usize], 0)
    }

    /// Cuts the inputs into the parts `bounds[k]..bounds[k + 1]` ([`Sources::parts`]), or
    /// (`None`) keeps them whole.
    pub(crate) fn set_cut(&mut self, bounds: Option<Vec<usize>>) {
        self.queue_pending();
        self.pending = bounds
            .as_ref()
            .map_or(Vec::new(), |b| vec![Vec::new(); b.len() - 1]);
        self.cut = bounds.map(Into::into);
    }

    /// Whether the inputs are cut into parts that threads own ([`Sources::set_cut`]): each
    /// thread's sources decide with its run of level 0 and commit with its departures.
    pub(crate) fn is_cut(&self) -> bool {
        self.cut.is_some()
    }

    /// Queues every message released and not yet queued.
    fn queue_pending(&mut self) {
        if self.pending.iter().all(Vec::is_empty) {
            return;
        }
        let mut parts = self.parts();
        for part in &mut parts {
            part.queue_pending();
        }
        let peak = parts.iter().map(|p| p.peak).max().unwrap_or(0);
        self.add_peak(peak);
    }

    /// Notes the longest queue the parts saw right after their releases.
    pub(crate) fn add_peak(&mut self, peak: usize) {
        self.peak_waiting = self.peak_waiting.max(peak);
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
        self.pending.iter().all(Vec::is_empty) && self.queued.iter().all(|&w| w == 0)
    }

    /// Messages waiting in queues or for a retry.
    pub fn waiting(&self) -> usize {
        let mut queued: usize = self.pending.iter().map(Vec::len).sum();
        for_active(&self.queued, |input| queued += self.queues[input].len());
        queued + self.retries.len()
    }

    /// Worms partly sent.
    pub fn sending(&self) -> usize {
        self.sending
    }

    /// Decides which flits input `input` sends this cycle, from the injection VCs' `ready` and
    /// `accepts_new_worm` signals.
    pub fn evaluate(&mut self, input: u32, fabric: &Fabric) {
        self.queue_pending();
        self.whole().decide(input as usize, fabric);
    }

    /// [`Sources::evaluate`] for every input with something to send (the others' proposals
    /// stay empty).
    pub fn evaluate_all(&mut self, fabric: &Fabric) {
        self.queue_pending();
        self.whole().evaluate(fabric);
    }

    /// Commits the cycle's sends as `Injected` transfers (in input and VC order).
    pub fn commit(&mut self, transfers: &mut Vec<Transfer>, fabric: &Fabric) {
        let sent = {
            let mut part = self.whole();
            part.commit(transfers, |input, vc| fabric.injection_vc(input, vc));
            part.sending
        };
        self.add_sending(sent);
    }

    /// The sources of the parts of the cut ([`Sources::set_cut`]), which a thread each
    /// evaluates and commits ([`SourcePart`]). Give their [`SourcePart::sending`] to
    /// [`Sources::add_sending`] and their [`SourcePart::peak`] to [`Sources::add_peak`] when
    /// done.
    pub(crate) fn parts(&mut self) -> Vec<SourcePart<'_>> {
        let cut = std::sync::Arc::clone(self.cut.as_ref().expect("a cut"));
        self.cut_into(&cut)
    }

    /// The sources of the inputs `bounds[k]..bounds[k + 1]` for every `k` (the cut's: every
    /// bound but the last a multiple of 64), as parts ([`SourcePart`]) with the cut's lists
    /// of pending releases.
    fn cut_into(&mut self, bounds: &[usize]) -> Vec<SourcePart<'_>> {
        let b = self.vcs as usize;
        let mut lists = self.pending.iter_mut();
        let (vcs, flits, bandwidth) = (self.vcs, self.flits, self.bandwidth);
        let mut queues = &mut self.queues[bounds[0]..];
        let mut worm = &mut self.worm[bounds[0] * b..];
        let mut mid_worm = &mut self.mid_worm[bounds[0] / 64 * b..];
        let mut next_seq = &mut self.next_seq[bounds[0] * b..];
        let per_word = b * left_bits(flits);
        let mut left = &mut self.left[bounds[0] / 64 * per_word..];
        let mut send = &mut self.send[bounds[0] * b..];
        let mut rr = &mut self.rr[bounds[0]..];
        let mut active = &mut self.active[bounds[0] / 64..];
        let mut queued = &mut self.queued[bounds[0] / 64..];
        let mut parts = Vec::with_capacity(bounds.len() - 1);
        for w in bounds.windows(2) {
            debug_assert!(w[0].is_multiple_of(64), "a part's bitmap starts a word");
            let n = w[1] - w[0];
            let (q, rest) = std::mem::take(&mut queues).split_at_mut(n);
            queues = rest;
            let (wo, rest) = std::mem::take(&mut worm).split_at_mut(n * b);
            worm = rest;
            let (ns, rest) = std::mem::take(&mut next_seq).split_at_mut(n * b);
            next_seq = rest;
            let (se, rest) = std::mem::take(&mut send).split_at_mut(n * b);
            send = rest;
            let (r, rest) = std::mem::take(&mut rr).split_at_mut(n);
            rr = rest;
            let words = n.div_ceil(64).min(active.len());
            let (a, rest) = std::mem::take(&mut active).split_at_mut(words);
            active = rest;
            let (qd, rest) = std::mem::take(&mut queued).split_at_mut(words);
            queued = rest;
            let (mw, rest) = std::mem::take(&mut mid_worm).split_at_mut(words * b);
            mid_worm = rest;
            let (l, rest) = std::mem::take(&mut left).split_at_mut(words * per_word);
            left = rest;
            parts.push(SourcePart {
                first: w[0],
                vcs,
                flits,
                bandwidth,
                queues: q,
                worm: wo,
                mid_worm: mw,
                next_seq: ns,
                left: l,
                send: se,
                rr: r,
                active: a,
                queued: qd,
                pending: lists.next(),
                sending: 0,
                peak: 0,
            });
        }
        parts
    }

    /// Every input as one part (with no pending releases).
    #[inline(always)]
    fn whole(&mut self) -> SourcePart<'_> {
        SourcePart {
            first: 0,
            vcs: self.vcs,
            flits: self.flits,
            bandwidth: self.bandwidth,
            queues: &mut self.queues,
            worm: &mut self.worm,
            mid_worm: &mut self.mid_worm,
            next_seq: &mut self.next_seq,
            left: &mut self.left,
            send: &mut self.send,
            rr: &mut self.rr,
            active: &mut self.active,
            queued: &mut self.queued,
            pending: None,
            sending: 0,
            peak: 0,
        }
    }

    /// Counts the worms the parts started less those they finished.
    pub(crate) fn add_sending(&mut self, started: isize) {
        self.sending = self
            .sending
            .checked_add_signed(started)
            .expect("worms sent");
    }
}

/// What a source reads of its injection VCs in the cycle being evaluated: the network's
/// switches, or the run of level-0 switches a thread has just evaluated.
pub(crate) trait InjectionPort {
    /// Injection VC `vc` of input `input` can take a flit this cycle.
    fn ready(&self, input: u32, vc: u32) -> bool;
    /// Injection VC `vc` of input `input` can take the header of a new worm this cycle.
    fn accepts_new_worm(&self, input: u32, vc: u32) -> bool;
}

impl InjectionPort for Fabric {
    fn ready(&self, input: u32, vc: u32) -> bool {
        Fabric::ready(self, self.injection_vc(input, vc))
    }

    fn accepts_new_worm(&self, input: u32, vc: u32) -> bool {
        Fabric::accepts_new_worm(self, self.injection_vc(input, vc))
    }
}

/// The sources of a run of inputs from `first` (their queues, worms, pointers, proposals and
/// active bits), which one thread evaluates and commits.
pub(crate) struct SourcePart<'a> {
    first: usize,
    vcs: u32,
    flits: u16,
    bandwidth: LinkBandwidth,
    queues: &'a mut [VecDeque<u32>],
    worm: &'a mut [u32],
    mid_worm: &'a mut [u64],
    next_seq: &'a mut [u16],
    left: &'a mut [u64],
    send: &'a mut [Option<FlitSlot>],
    rr: &'a mut [u16],
    active: &'a mut [u64],
    queued: &'a mut [u64],
    /// Messages released to the part's inputs and not yet queued.
    pending: Option<&'a mut Vec<(u32, u32)>>,
    /// Worms started less worms finished by [`SourcePart::commit`] or
    /// [`SourcePart::send_into`].
    pub sending: isize,
    /// The longest queue right after [`SourcePart::queue_pending`].
    pub peak: usize,
}

impl SourcePart<'_> {
    /// Whether input `first + i` has nothing to send: no message queued, no worm partly sent.
    fn idle(&self, i: usize) -> bool {
        let b = self.vcs as usize;
        self.queues[i].is_empty() && self.worm[i * b..(i + 1) * b].iter().all(|&w| w == NONE)
    }

    /// Queues the messages released to the part's inputs since the last cycle.
    fn queue_pending(&mut self) {
        let Some(pending) = self.pending.as_deref_mut() else {
            return;
        };
        for (input, msg) in pending.drain(..) {
            let i = input as usize - self.first;
            self.queues[i].push_back(msg);
            self.peak = self.peak.max(self.queues[i].len());
            self.active[i / 64] |= 1 << (i % 64);
            self.queued[i / 64] |= 1 << (i % 64);
        }
    }

    /// [`Sources::evaluate`] for every input of the part with something to send (after
    /// queueing its pending releases).
    pub fn evaluate(&mut self, port: &impl InjectionPort) {
        self.queue_pending();
        for w in 0..self.active.len() {
            let mut bits = self.active[w];
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.decide(self.first + i, port);
            }
        }
    }

    /// The flits input `input` (one of the part's) proposes to send, one per injection VC.
    fn decide(&mut self, input: usize, port: &impl InjectionPort) {
        let b = self.vcs;
        let i = input - self.first;
        let send = i * b as usize..(i + 1) * b as usize;
        // An idle input (nothing queued, no worm mid-injection) sends nothing: most inputs at
        // low load.
        if self.idle(i) {
            self.send[send].fill(None);
            return;
        }
        let mut queued = self.queues[i].iter();
        let start = u32::from(self.rr[i]);
        let mut sent_one = false;
        for k in 0..b {
            let v = match self.bandwidth {
                LinkBandwidth::PerVc => k,
                LinkBandwidth::One if start + k >= b => start + k - b,
                LinkBandwidth::One => start + k,
            };
            let slot = i * b as usize + v as usize;
            self.send[slot] = None;
            if self.bandwidth == LinkBandwidth::One && sent_one {
                continue;
            }
            let flit = if self.worm[slot] != NONE {
                port.ready(input as u32, v).then(|| FlitSlot {
                    msg: self.worm[slot],
                    seq: self.next_seq[slot],
                    hop: 0,
                })
            } else if port.accepts_new_worm(input as u32, v) {
                queued.next().map(|&msg| FlitSlot {
                    msg,
                    seq: 0,
                    hop: 0,
                })
            } else {
                None
            };
            sent_one |= flit.is_some();
            self.send[slot] = flit;
        }
    }

    /// [`Sources::commit`] for the part's inputs, `injection_vc(input, vc)` naming their
    /// injection VCs.
    pub fn commit(
        &mut self,
        transfers: &mut Vec<Transfer>,
        injection_vc: impl Fn(u32, u32) -> u32,
    ) {
        for w in 0..self.active.len() {
            let mut bits = self.active[w];
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.commit_input(w * 64 + bit, |input, vc, flit| {
                    transfers.push(Transfer::injected(flit, injection_vc(input, vc)))
                });
            }
        }
    }

    /// Commits the sends input `first + i` proposed, giving each to `sent(input, vc, flit)`;
    /// an input left idle leaves the active bitmap.
    #[inline(always)]
    fn commit_input(&mut self, i: usize, mut sent: impl FnMut(u32, u32, FlitSlot)) {
        let b = self.vcs as usize;
        for v in 0..b {
            if let Some(flit) = self.send[i * b + v].take() {
                self.commit_send(i, v, flit);
                sent((self.first + i) as u32, v as u32, flit);
            }
        }
        if self.idle(i) {
            self.active[i / 64] &= !(1 << (i % 64));
        }
    }

    /// Injection VC `v` of the part's input `i` sends `flit`.
    fn commit_send(&mut self, i: usize, v: usize, flit: FlitSlot) {
        let b = self.vcs as usize;
        let bit = 1 << (i % 64);
        if flit.seq == 0 {
            self.queues[i].pop_front();
            if self.queues[i].is_empty() {
                self.queued[i / 64] &= !bit;
            }
        }
        let ended = self.sent(i * b + v, flit.msg, flit.seq);
        // The worm is mid-injection from its header to its tail.
        let mid = &mut self.mid_worm[i / 64 * b + v];
        match (flit.seq == 0, ended) {
            (true, false) => {
                *mid |= bit;
                self.sending += 1;
            }
            (false, true) => {
                *mid &= !bit;
                self.sending -= 1;
            }
            _ => {}
        }
        // The VC after it (no division: this runs for every flit sent).
        self.rr[i] = if v + 1 == b { 0 } else { (v + 1) as u16 };
    }

    /// Injection VC `slot` sends flit `seq` of worm `msg`: the VC counts on to the next, or
    /// (returns `true`) that was the tail and the VC is free.
    #[inline(always)]
    fn sent(&mut self, slot: usize, msg: u32, seq: u16) -> bool {
        self.next_seq[slot] = seq + 1;
        let tail = seq + 1 == self.flits;
        if tail {
            self.worm[slot] = NONE;
        } else if seq == 0 {
            self.worm[slot] = msg;
        }
        tail
    }
}
