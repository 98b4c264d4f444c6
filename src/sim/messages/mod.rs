//! The records of released messages, indexed by message id, in a ring. Ids are issued in release
//! order; a finished message (delivered or dropped, every flit gone) leaves the ring from its
//! front and folds into a [`Tally`], so memory follows the messages alive at once, not the
//! length of the run. With [`MessageTable::keep`] every record stays (per-message reports).
//!
//! A message waiting at its source holds only its header and its release (24 bytes, a quarter
//! of a record); its record is written when its worm starts. A saturated network's source
//! queues grow without bound, and much of what they hold never needs a record within the run.
//! There the oldest waiting message holds back the front for long, and the worms that started
//! after it would keep their records (and the memory of every chunk they were written in)
//! until it leaves: so where many messages wait, a message that finishes folds in at once,
//! whatever its place, and a chunk of records whose last one leaves is put aside for others.

use crate::flit::FlitSlot;
use crate::stats::{MessageRecord, Status, Tally};
use crate::switch::{Header, HeaderChunk, Headers, Transfer, TransferKind};
use chunks::{
    CHUNK, CHUNK_BITS, Chunk, Released, ReleasedChunk, WORDS, at, chunk, chunk_mut, double,
    prefetch, take_chunk,
};
use std::borrow::Cow;

mod chunks;

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

    /// Its worm's header entered the network in `cycle`: an attempt starts (drop mode's
    /// retries start again). Returns whether it is a retry.
    #[inline]
    pub(crate) fn start(&mut self, cycle: u64) -> bool {
        let r = &mut self.record;
        r.attempts += 1;
        r.status = Status::InFlight;
        r.injected.get_or_insert(cycle);
        r.hops = 0;
        self.sent = 1;
        self.gone = 0;
        r.attempts > 1
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
    #[inline]
    pub(crate) fn finished(&self) -> bool {
        matches!(self.record.status, Status::Delivered | Status::Dropped) && self.sent == self.gone
    }
}

// A record is overwritten or forgotten without being dropped.
const _: () = assert!(!std::mem::needs_drop::<Message>());

/// What the table keeps of the messages waiting at their sources, of which their records are
/// made: their headers (whose ids name their sources in the bits `source_mask`) and releases.
#[derive(Clone, Copy)]
struct Waiting<'a> {
    headers: &'a [Option<HeaderChunk>],
    released: &'a [Option<ReleasedChunk>],
    source_mask: u32,
}

impl<'a> Waiting<'a> {
    /// The rings of headers and releases, and the mask of a source in a header's id.
    #[inline(always)]
    fn of(
        headers: &'a [Option<HeaderChunk>],
        released: &'a [Option<ReleasedChunk>],
        source_mask: u32,
    ) -> Self {
        Waiting {
            headers,
            released,
            source_mask,
        }
    }

    /// The record of held message `id` (index `i` of chunk `c`), whose worm has not started.
    #[inline(always)]
    fn record(self, id: u32, c: usize, i: usize) -> Message {
        let header = &chunk(self.headers, c)[i];
        let release = chunk(self.released, c)[i].release();
        let source = header.id & self.source_mask;
        Message {
            record: MessageRecord::waiting(id, source, header.destination, header.middle, release),
            sent: 0,
            gone: 0,
        }
    }
}

/// Live message records and the tally of finished ones.
///
/// The records, the headers and the releases lie in chunks of 1024 ids (`CHUNK`), in three
/// rings of chunks side by side: chunk number `c` (ids `c · CHUNK..`) in
/// `chunks[c & (len − 1)]`, `headers[c & (len − 1)]` and `released[c & (len − 1)]`. A chunk of
/// headers and releases is allocated where the first id of its number arrives and is reused,
/// not freed, when the ring comes round to it again; when the held ids span every chunk the
/// rings double by moving chunks, not records. So a run whose held messages keep growing (a
/// saturated network's source queues) writes each header once and touches its memory once,
/// where a flat ring doubling would copy every held one and fault in twice the memory
/// (measured: 17 % of such a run's time for the headers). A chunk of records goes with its
/// slot in the ring in the same way, except where many messages wait at their sources
/// ([`MessageTable::retire`]): then it is put aside for reuse when its last record leaves and
/// taken again where a worm of its ids starts, so that the records in use are those of the
/// worms in flight, spread over ids as far apart as the sources' queues make them, and the
/// memory of their chunks is touched once and used again.
pub struct MessageTable {
    /// The ring of records' chunks; its length is a power of two. `None`: a slot that holds
    /// no id, or whose chunk was put aside ([`MessageTable::parking`]).
    chunks: Vec<Option<Chunk>>,
    /// Chunks of records put aside with no record written, for reuse.
    spare: Vec<Chunk>,
    /// Whether a chunk of records is put aside when its last record leaves, ids of it
    /// waiting or not (then a held id's slot may hold none).
    parking: bool,
    /// The headers' ring, `chunks`'s twin (read apart from the records: where a header is
    /// injected). `None`: a chunk not allocated yet.
    headers: Vec<Option<HeaderChunk>>,
    /// The releases' ring, read where a worm starts (its record is written then).
    released: Vec<Option<ReleasedChunk>>,
    /// Held ids: `base..end`.
    base: u32,
    end: u32,
    /// Records ever written (messages whose worm started).
    written: u32,
    /// The low bits of a header's id that name its source ([`MessageTable::new`]).
    source_mask: u32,
    keep: bool,
    /// The records that left the table.
    pub tally: Tally,
}

impl MessageTable {
    /// An empty table for a network whose terminal addresses have `address_bits` bits
    /// ([`crate::config::SimConfig::address_bits`], at most 32): the low bits of a header's id
    /// name its source, which a waiting message keeps nowhere else.
    pub fn new(address_bits: u32) -> Self {
        MessageTable {
            chunks: vec![None, None],
            spare: Vec::new(),
            parking: false,
            headers: vec![None, None],
            released: vec![None, None],
            base: 0,
            end: 0,
            written: 0,
            source_mask: crate::flit::mask(address_bits.min(32)) as u32,
            keep: false,
            tally: Tally::default(),
        }
    }

    /// Keep every record (for a per-message report) instead of folding finished ones away.
    pub fn keep(&mut self, on: bool) {
        self.keep = on;
    }

    /// The chunk and the index in it of id `id`'s record.
    #[inline(always)]
    fn at(&self, id: u32) -> (usize, usize) {
        at(self.chunks.len(), id)
    }

    /// Ids held: from the first not finished (every one with [`MessageTable::keep`]) to the
    /// last issued.
    pub fn held(&self) -> u32 {
        self.end - self.base
    }

    /// Ids issued so far.
    pub fn issued(&self) -> u32 {
        self.end
    }

    /// Messages waiting at their sources for their first attempt (no record written).
    pub fn never_started(&self) -> u32 {
        self.end - self.written
    }

    /// Adds a message that joined the queue of its source in cycle `release`, waiting there;
    /// returns its id ([`MessageTable::issued`] before the call). Its record is written when its
    /// worm starts ([`MessageTable::start`]); until then its source is read from the low bits
    /// of `header.id` ([`Header::id`]).
    #[inline]
    pub fn push(&mut self, release: u64, header: Header) -> u32 {
        let id = self.end;
        if id as usize & (CHUNK - 1) == 0 {
            self.open_chunk(id);
        }
        let (c, i) = self.at(id);
        chunk_mut(&mut self.headers, c)[i] = header;
        chunk_mut(&mut self.released, c)[i] = Released::new(release);
        self.end += 1;
        id
    }

    /// Makes room for the chunk whose first id is `id`: the rings double if the held ids'
    /// chunks fill them, and the chunk of headers and releases is allocated if its slot never
    /// held one.
    #[cold]
    fn open_chunk(&mut self, id: u32) {
        let number = id >> CHUNK_BITS;
        let oldest = self.base >> CHUNK_BITS;
        if (number - oldest) as usize == self.chunks.len() {
            double(&mut self.chunks, oldest..number);
            double(&mut self.headers, oldest..number);
            double(&mut self.released, oldest..number);
        }
        let (c, _) = self.at(id);
        // The slot's chunk of records: reused (every record of it left); while chunks are
        // put aside, taken where the first worm of its ids starts; else one put aside or new.
        match &self.chunks[c] {
            Some(records) => {
                debug_assert!(records.written == [0; WORDS], "a reused chunk is empty")
            }
            None if self.parking => {}
            None => take_chunk(&mut self.chunks[c], &mut self.spare),
        }
        if self.headers[c].is_none() {
            let headers = vec![Header::default(); CHUNK].into_boxed_slice();
            self.headers[c] = Some(headers.try_into().expect("a chunk's length"));
            let released = vec![Released::default(); CHUNK].into_boxed_slice();
            self.released[c] = Some(released.try_into().expect("a chunk's length"));
        }
    }

    /// What the table keeps of the waiting messages.
    fn waiting(&self) -> Waiting<'_> {
        Waiting::of(&self.headers, &self.released, self.source_mask)
    }

    /// The message `id`, if it is held and has not finished (a waiting message's record made
    /// for the asking).
    pub fn get(&self, id: u32) -> Option<Cow<'_, Message>> {
        if !(self.base..self.end).contains(&id) {
            return None;
        }
        let (c, i) = self.at(id);
        let released = chunk(&self.released, c)[i];
        if released.finished() {
            return None;
        }
        Some(match self.chunks[c].as_deref().and_then(|r| r.get(i)) {
            Some(m) => Cow::Borrowed(m),
            None => Cow::Owned(self.waiting().record(id, c, i)),
        })
    }

    /// The message `id`, whose worm has started. Panics if it has not, or has finished:
    /// flits only name live messages.
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut Message {
        debug_assert!((self.base..self.end).contains(&id), "message {id} not held");
        let (c, i) = self.at(id);
        self.chunks[c]
            .as_deref_mut()
            .and_then(|r| r.get_mut(i))
            .unwrap_or_else(|| panic!("message {id} has no record (not started, or finished)"))
    }

    /// Message `id`'s worm starts in `cycle` (`Message::start`; its record is written if
    /// this is its first attempt); returns its record and whether it is a retry.
    #[inline]
    pub fn start(&mut self, id: u32, cycle: u64) -> (&mut Message, bool) {
        debug_assert!((self.base..self.end).contains(&id), "message {id} not held");
        let (chunks, spare, written) = (&mut self.chunks, &mut self.spare, &mut self.written);
        let waiting = Waiting::of(&self.headers, &self.released, self.source_mask);
        match self.parking {
            true => starting::<true>(chunks, spare, written, waiting, id, cycle),
            false => starting::<false>(chunks, spare, written, waiting, id, cycle),
        }
    }

    /// Whether chunks of records are put aside while ids of theirs wait (a saturated run's,
    /// [`MessageTable::retire`]): a worm that starts then may have to take one
    /// ([`Starts::start`] with `PARKING`).
    #[inline]
    pub(crate) fn parking(&self) -> bool {
        self.parking
    }

    /// The header of live message `id`.
    pub fn header(&self, id: u32) -> Header {
        let (c, i) = self.at(id);
        chunk(&self.headers, c)[i]
    }

    /// Every live header, for the switches.
    pub fn headers(&self) -> Headers<'_> {
        Headers::chunked(&self.headers, self.headers.len() as u32 - 1)
    }

    /// The live headers, read where the sources inject, beside the records of the worms
    /// they start.
    pub(crate) fn injection(&mut self) -> (Headers<'_>, Starts<'_>) {
        let mask = self.headers.len() as u32 - 1;
        (
            Headers::chunked(&self.headers, mask),
            Starts {
                chunks: &mut self.chunks,
                spare: &mut self.spare,
                written: &mut self.written,
                waiting: Waiting::of(&self.headers, &self.released, self.source_mask),
                held: self.base..self.end,
            },
        )
    }

    /// Brings what starting held message `id` reads (its header and release) towards the
    /// cache, to be read some cycles from now.
    #[inline]
    pub fn prefetch(&self, id: u32) {
        if (self.base..self.end).contains(&id) {
            prefetch(&self.headers, &self.released, id);
        }
    }

    /// The held messages that have not finished, in id order (a waiting message's record
    /// made for the asking).
    pub fn live(&self) -> impl Iterator<Item = Cow<'_, Message>> {
        (self.base..self.end).filter_map(|id| self.get(id))
    }

    /// The messages whose worm has started and that have not finished, in id order (the
    /// others wait at their sources: their records hold nothing a report sums).
    pub fn started(&self) -> impl Iterator<Item = &Message> {
        (self.base..self.end).filter_map(|id| {
            let (c, i) = self.at(id);
            self.chunks[c].as_deref().and_then(|r| r.get(i))
        })
    }

    /// Ends a cycle (unless every record is kept) whose `edge` is listed: the finished
    /// messages at the front fold into the tally in id order, and leave the ring with their
    /// ids. Where many messages wait at their sources (more than 4 096, `OUT_OF_ORDER_AFTER`: a
    /// saturated network, whose oldest waiting message holds back the front for long), those
    /// that finished in the edge (a flit of theirs arrived, left or was discarded) fold in
    /// first, whatever their place, and a chunk of records whose last one leaves is put
    /// aside: the records in use are then only those of the worms in flight. (Below it, id
    /// order is cheaper: the front is seldom held back for long.)
    pub fn retire<'t>(&mut self, edge: impl Iterator<Item = &'t Transfer>) {
        if self.keep {
            return;
        }
        let parking = self.never_started() > OUT_OF_ORDER_AFTER;
        if self.parking && !parking {
            self.unpark();
        }
        self.parking = parking;
        if parking {
            for t in edge {
                if let TransferKind::Arrived | TransferKind::Delivered | TransferKind::Discarded =
                    t.kind
                {
                    let (c, i) = self.at(t.flit.msg);
                    self.fold_ahead(c, i);
                }
            }
        }
        while self.base < self.end {
            let (c, i) = self.at(self.base);
            let records = self.chunks[c].as_deref_mut();
            match records.as_ref().and_then(|r| r.get(i)) {
                Some(m) if m.finished() => {
                    self.tally.add(&m.record);
                    records.expect("a record's chunk").clear(i);
                }
                Some(_) => break,
                // No record: waiting, or folded in already.
                None if chunk(&self.released, c)[i].finished() => {}
                None => break,
            }
            self.base += 1;
        }
    }

    /// Gives every held id's slot a chunk of records again (the sources' queues have come
    /// down below [`OUT_OF_ORDER_AFTER`]), so that a worm that starts finds one.
    #[cold]
    fn unpark(&mut self) {
        if self.base == self.end {
            return;
        }
        for number in self.base >> CHUNK_BITS..=(self.end - 1) >> CHUNK_BITS {
            let (c, _) = self.at(number << CHUNK_BITS);
            if self.chunks[c].is_none() {
                take_chunk(&mut self.chunks[c], &mut self.spare);
            }
        }
    }

    /// Folds record `i` of chunk `c` into the tally if it is written and its message has
    /// finished, marks its release finished (for the front to pass it) and forgets the
    /// record, its chunk put aside if it was the last there.
    #[inline(always)]
    fn fold_ahead(&mut self, c: usize, i: usize) {
        let slot = &mut self.chunks[c];
        // (An id whose flits left or were discarded together has folded in already.)
        let Some(records) = slot.as_deref_mut() else {
            return;
        };
        match records.get(i) {
            Some(m) if m.finished() => self.tally.add(&m.record),
            _ => return,
        }
        records.clear(i);
        chunk_mut(&mut self.released, c)[i].set_finished();
        if records.empty_after(i / 64)
            && let Some(chunk) = slot.take()
        {
            self.spare.push(chunk);
        }
    }
}

/// Held message `msg`'s worm starts in `cycle` ([`Message::start`]): returns its record and
/// whether this is a retry. On its first attempt the record is made from its header and
/// release and written once, started (counted in `written`). With `PARKING` (chunks of
/// records may be put aside), its slot takes a chunk if it has none.
#[inline(always)]
fn starting<'r, const PARKING: bool>(
    chunks: &'r mut [Option<Chunk>],
    spare: &mut Vec<Chunk>,
    written: &mut u32,
    waiting: Waiting<'_>,
    msg: u32,
    cycle: u64,
) -> (&'r mut Message, bool) {
    let (c, i) = at(chunks.len(), msg);
    if PARKING && chunks[c].is_none() {
        take_chunk(&mut chunks[c], spare);
    }
    let records = chunk_mut(chunks, c);
    if records.is_written(i) {
        let m = records.get_mut(i).expect("a written record");
        let retry = m.start(cycle);
        return (m, retry);
    }
    *written += 1;
    let mut m = waiting.record(msg, c, i);
    let retry = m.start(cycle);
    debug_assert!(!retry, "a first attempt");
    (records.write(i, m), false)
}

/// Messages waiting at their sources past which those that finish fold into the tally at
/// once rather than when the front of the ids reaches them ([`MessageTable::retire`]).
const OUT_OF_ORDER_AFTER: u32 = 4 * CHUNK as u32;

/// The records of the worms the sources start, beside the headers they read
/// ([`MessageTable::injection`]).
pub(crate) struct Starts<'a> {
    chunks: &'a mut [Option<Chunk>],
    spare: &'a mut Vec<Chunk>,
    written: &'a mut u32,
    waiting: Waiting<'a>,
    held: std::ops::Range<u32>,
}

impl Starts<'_> {
    /// Message `msg`'s worm starts in `cycle` ([`Message::start`]; its record is written
    /// from its header and release on its first attempt); returns whether it is a retry.
    /// `PARKING`: chunks of records may be put aside ([`MessageTable::parking`]), and its
    /// slot may have to take one.
    #[inline]
    pub(crate) fn start<const PARKING: bool>(&mut self, msg: u32, cycle: u64) -> bool {
        debug_assert!(self.held.contains(&msg), "message {msg} not held");
        starting::<PARKING>(
            self.chunks,
            self.spare,
            self.written,
            self.waiting,
            msg,
            cycle,
        )
        .1
    }

    /// [`MessageTable::prefetch`].
    #[inline]
    pub(crate) fn prefetch(&self, id: u32) {
        if self.held.contains(&id) {
            prefetch(self.waiting.headers, self.waiting.released, id);
        }
    }
}

#[cfg(test)]
mod tests;
