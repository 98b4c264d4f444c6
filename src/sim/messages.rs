//! The records of released messages, indexed by message id, in a ring. Ids are issued in release
//! order; a finished message (delivered or dropped, every flit gone) leaves the ring from its
//! front and folds into a [`Tally`], so memory follows the messages alive at once, not the
//! length of the run. With [`MessageTable::keep`] every record stays (per-message reports).

use crate::flit::FlitSlot;
use crate::stats::{MessageRecord, Status, Tally};
use crate::switch::{Header, Headers};

/// A message and its per-attempt flit accounting.
#[derive(Clone, Debug)]
pub struct Message {
    pub record: MessageRecord,
    /// Flits of the current attempt written into the network (on the bit-plane kernel, which
    /// books a worm's head's injection and its head's and tail's arrivals, 1: the worm).
    pub sent: u16,
    /// Flits of the current attempt that left it (delivered or discarded; on the bit-plane
    /// kernel, 1 once its tail has arrived).
    pub gone: u16,
}

impl Message {
    /// `flit` of the current attempt entered its destination's register in `cycle`: a header
    /// (with the links it crossed) is the head's arrival, the tail delivers the message. By
    /// selects rather than branches: whether an arriving flit is a head or a tail is as
    /// random as the traffic.
    #[inline]
    pub(crate) fn arrive(&mut self, flit: FlitSlot, tail: u16, cycle: u64) {
        use std::hint::select_unpredictable as select;
        // `Some(cycle)` where `now`, else as it was (an option chosen by its parts: a
        // select of whole options is compiled as a branch).
        let at = |now: bool, was: Option<u64>| {
            (now || was.is_some()).then_some(select(now, cycle, was.unwrap_or(0)))
        };
        let (head, last) = (flit.seq == 0, flit.seq == tail);
        let r = &mut self.record;
        r.hops = select(head, u32::from(flit.hop), r.hops);
        r.head_arrival = at(head, r.head_arrival);
        r.tail_arrival = at(last, r.tail_arrival);
        r.status = select(last, Status::Delivered, r.status);
    }

    /// The cycles up to `cycle` in which its header, injected and having crossed `hops`
    /// links since, waited in a register: those from its injection on in which it crossed
    /// none (the bit-plane kernel's count of the general kernel's `Stalled` cycles: its
    /// registers are one flit deep, so a header that does not move waits).
    #[inline]
    pub(crate) fn header_waits(&self, cycle: u64, hops: u16) -> u32 {
        let injected = self.record.injected.unwrap_or(cycle);
        (cycle - injected).saturating_sub(u64::from(hops)) as u32
    }

    /// Delivered or dropped, with no flit left in the network.
    fn finished(&self) -> bool {
        matches!(self.record.status, Status::Delivered | Status::Dropped) && self.sent == self.gone
    }
}

/// Live message records and the tally of finished ones.
pub struct MessageTable {
    /// `slots[id & mask]`, for ids `base..end`; the length is a power of two.
    slots: Vec<Option<Message>>,
    /// The headers, indexed like `slots` (read where a header arrives).
    headers: Vec<Header>,
    base: u32,
    end: u32,
    keep: bool,
    /// The records that left the ring.
    pub tally: Tally,
}

impl MessageTable {
    pub fn new() -> Self {
        MessageTable {
            slots: vec![None; 64],
            headers: vec![Header::default(); 64],
            base: 0,
            end: 0,
            keep: false,
            tally: Tally::default(),
        }
    }

    /// Keep every record (for a per-message report) instead of folding finished ones away.
    pub fn keep(&mut self, on: bool) {
        self.keep = on;
    }

    fn mask(&self) -> u32 {
        self.slots.len() as u32 - 1
    }

    /// Records held (alive, or every one when kept).
    pub fn held(&self) -> u32 {
        self.end - self.base
    }

    /// Ids issued so far.
    pub fn issued(&self) -> u32 {
        self.end
    }

    /// Adds a message; its id is [`MessageTable::issued`] before the call.
    #[inline]
    pub fn push(&mut self, message: Message, header: Header) {
        if (self.end - self.base) as usize == self.slots.len() {
            self.grow();
        }
        let i = (self.end & self.mask()) as usize;
        self.slots[i] = Some(message);
        self.headers[i] = header;
        self.end += 1;
    }

    fn grow(&mut self) {
        let cap = self.slots.len() * 2;
        let mut slots = vec![None; cap];
        let mut headers = vec![Header::default(); cap];
        let (old, new) = (self.mask(), cap as u32 - 1);
        for id in self.base..self.end {
            slots[(id & new) as usize] = self.slots[(id & old) as usize].take();
            headers[(id & new) as usize] = self.headers[(id & old) as usize];
        }
        self.slots = slots;
        self.headers = headers;
    }

    /// The message `id`, if it is still held.
    pub fn get(&self, id: u32) -> Option<&Message> {
        if !(self.base..self.end).contains(&id) {
            return None;
        }
        self.slots[(id & self.mask()) as usize].as_ref()
    }

    /// The message `id`. Panics if it is not held: flits only name live messages.
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut Message {
        let mask = self.mask();
        debug_assert!((self.base..self.end).contains(&id), "message {id} not held");
        self.slots[(id & mask) as usize]
            .as_mut()
            .unwrap_or_else(|| panic!("message {id} is not held"))
    }

    /// The header of live message `id`.
    pub fn header(&self, id: u32) -> Header {
        self.headers[(id & self.mask()) as usize]
    }

    /// Every live header, for the switches.
    pub fn headers(&self) -> Headers<'_> {
        Headers::ring(&self.headers, self.mask())
    }

    /// The held messages in id order.
    pub fn live(&self) -> impl Iterator<Item = &Message> {
        (self.base..self.end).filter_map(|id| self.get(id))
    }

    /// Folds finished messages at the front into the tally (unless every record is kept).
    pub fn retire(&mut self) {
        if self.keep {
            return;
        }
        let mask = self.mask();
        while self.base < self.end {
            let slot = &mut self.slots[(self.base & mask) as usize];
            match slot {
                Some(m) if m.finished() => {
                    self.tally.add(&m.record);
                    *slot = None;
                    self.base += 1;
                }
                _ => break,
            }
        }
    }
}

impl Default for MessageTable {
    fn default() -> Self {
        Self::new()
    }
}
