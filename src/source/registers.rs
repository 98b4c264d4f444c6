//! The sources writing the injection VCs they decide for (the bit-plane kernel's level 0):
//! one pass over the inputs, or with a flit per VC a word of 64 inputs at a time.

use super::{InjectionPort, SourcePart, Sources, waiting_long};
use crate::config::LinkBandwidth;

/// Injection VCs that their sources write as they decide (the bit-plane kernel's level 0, 64
/// inputs a word): an input reads and writes only its own, so one pass over the inputs
/// decides and writes.
pub(crate) trait InjectionRegisters: InjectionPort {
    /// Input `input` writes flit `seq` of message `msg` into its injection VC `vc`.
    fn write(&mut self, input: u32, vc: u32, msg: u32, seq: u16);
    /// The inputs `64 w + i` (bit `i`) whose injection VC `vc` can take a flit.
    fn ready_word(&self, vc: usize, w: usize) -> u64;
    /// The inputs of word `w` whose injection VC `vc` can take a new worm's header.
    fn accepts_word(&self, vc: usize, w: usize) -> u64;
    /// The inputs of word `w` set in `rows` write a body flit into their injection VC `vc`,
    /// the tail of its worm for those set in `tails`.
    fn write_bodies(&mut self, vc: usize, w: usize, rows: u64, tails: u64);
}

/// A worm that a source starts: its header written into an injection VC (the bit-plane
/// kernel's books count the worm by it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Start {
    pub msg: u32,
    /// The message the input starts next, where at least
    /// [`LONG_QUEUE`](super::LONG_QUEUE) wait after this one (its header and release,
    /// written long ago, are read then to write its record: worth asking for now).
    pub next: Option<u32>,
}

impl Sources {
    /// What [`Sources::evaluate_all`] then [`Sources::commit`] decide and send, in
    /// one pass that writes the flits into `registers` ([`InjectionRegisters`]): input by
    /// input, or with a flit per VC (or one VC) a word of 64 inputs at a time, VC by VC
    /// ([`SourcePart::send_into`]). `on_start` is told of every worm started (not in input
    /// order).
    pub(crate) fn send_into(
        &mut self,
        registers: &mut impl InjectionRegisters,
        on_start: impl FnMut(Start),
    ) {
        self.queue_pending();
        let sent = {
            let mut part = self.whole();
            part.send_into(registers, on_start);
            part.sending
        };
        self.add_sending(sent);
    }
}

impl SourcePart<'_> {
    /// [`SourcePart::evaluate`] and [`SourcePart::commit`] in one pass: each input decides
    /// from its injection VCs and writes its flits into them; `on_start` is told of every
    /// worm started.
    pub fn send_into(
        &mut self,
        registers: &mut impl InjectionRegisters,
        mut on_start: impl FnMut(Start),
    ) {
        self.queue_pending();
        // With one VC, one flit per link is one per VC.
        if self.bandwidth == LinkBandwidth::PerVc || self.vcs == 1 {
            return self.send_words(registers, on_start);
        }
        for w in 0..self.active.len() {
            let mut bits = self.active[w];
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.decide(self.first + i, &*registers);
                // One flit per link: an input starts one worm a cycle at most, the front of
                // its queue, and the message behind it is next.
                let next = waiting_long(&self.queues[i], 1);
                self.commit_input(i, |input, vc, flit| {
                    registers.write(input, vc, flit.msg, flit.seq);
                    if flit.seq == 0 {
                        on_start(Start {
                            msg: flit.msg,
                            next,
                        });
                    }
                });
            }
        }
    }

    /// [`SourcePart::send_into`] with a flit per VC and cycle (or one VC), 64 inputs a word,
    /// VC by VC: a worm partly sent sends its next flit where its VC is ready; a VC without
    /// one starts the input's next queued message where it accepts a new worm (VC 0 the
    /// first).
    fn send_words(
        &mut self,
        registers: &mut impl InjectionRegisters,
        mut on_start: impl FnMut(Start),
    ) {
        let b = self.vcs as usize;
        // The registers' words count from input 0, the part's from its first (a multiple of
        // 64).
        let (first, w0) = (self.first, self.first / 64);
        let bits = super::left_bits(self.flits);
        // A new worm's count: its flits after the header.
        let after_header = self.flits - 1;
        for w in 0..self.active.len() {
            let active = self.active[w];
            if active == 0 {
                continue;
            }
            let mut busy = 0;
            for v in 0..b {
                let mid = self.mid_worm[w * b + v];
                let rows = mid & registers.ready_word(v, w0 + w);
                // `commit_send` a word at a time, less the round-robin pointer, which no VC of
                // this path reads: a body flit counts its worm's flits left down, in bit planes
                // (rows that subtract 1, borrowing through the planes), and the rows left with
                // none sent their tail.
                let left = &mut self.left[(w * b + v) * bits..][..bits];
                let mut tails = 0;
                if rows != 0 {
                    let (mut borrow, mut some) = (rows, 0);
                    for plane in left.iter_mut() {
                        let was = *plane;
                        *plane = was ^ borrow;
                        borrow &= !was;
                        some |= *plane;
                    }
                    tails = rows & !some;
                }
                if tails != 0 {
                    self.mid_worm[w * b + v] &= !tails;
                    self.sending -= tails.count_ones() as isize;
                }
                if rows != 0 {
                    registers.write_bodies(v, w0 + w, rows, tails);
                }
                // A header starts the next queued message's worm (a one-flit worm ends with
                // it).
                let mut starts = self.queued[w] & !mid & registers.accepts_word(v, w0 + w);
                let (mut started, mut emptied) = (0, 0);
                while starts != 0 {
                    let bit = starts.trailing_zeros() as usize;
                    starts &= starts - 1;
                    let i = w * 64 + bit;
                    let queue = &mut self.queues[i];
                    let msg = queue.pop_front().expect("a queued input's message");
                    emptied |= u64::from(queue.is_empty()) << bit;
                    let next = waiting_long(queue, 0);
                    let input = (first + i) as u32;
                    registers.write(input, v as u32, msg, 0);
                    on_start(Start { msg, next });
                    started |= 1 << bit;
                }
                // A one-flit worm ends with its header.
                if after_header == 0 {
                    started = 0;
                }
                if started != 0 {
                    for (k, plane) in left.iter_mut().enumerate() {
                        let one = 0u64.wrapping_sub(u64::from(after_header >> k & 1));
                        *plane = (*plane & !started) | (started & one);
                    }
                    self.mid_worm[w * b + v] |= started;
                    self.sending += started.count_ones() as isize;
                }
                // (Written once a word, and only if it changes: in a run on two threads the
                // other thread's sources write the words beside it.)
                if emptied != 0 {
                    self.queued[w] &= !emptied;
                }
                busy |= self.mid_worm[w * b + v];
            }
            // An input with no worm partly sent and none queued is idle.
            let idle = self.active[w] & !(busy | self.queued[w]);
            if idle != 0 {
                self.active[w] &= !idle;
            }
        }
    }
}
