//! The records of released messages, indexed by message id, in a ring. Ids are issued in release
//! order; a finished message (delivered or dropped, every flit gone) leaves the ring from its
//! front and folds into a [`Tally`], so memory follows the messages alive at once, not the
//! length of the run. With [`MessageTable::keep`] every record stays (per-message reports).
//!
//! A message waiting at its source holds only its header and its release (32 bytes, a third
//! of a record); its record is written when its worm starts. A saturated network's source
//! queues grow without bound, and much of what they hold never needs a record within the run.
//! There the oldest waiting message holds back the front for long, and the worms that started
//! after it would keep their records (and the memory of every chunk they were written in)
//! until it leaves: so where many messages wait, a message that finishes folds in at once,
//! whatever its place, and a chunk of records whose last one leaves is put aside for others.

use crate::flit::FlitSlot;
use crate::stats::{MessageRecord, Status, Tally};
use crate::switch::{HEADER_CHUNK_BITS, Header, HeaderChunk, Headers, Transfer, TransferKind};
use std::borrow::Cow;
use std::mem::MaybeUninit;

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

/// Records a chunk of [`MessageTable`] holds: ids `c · CHUNK..(c + 1) · CHUNK` for chunk
/// number `c` (the headers' chunks hold the same ids).
const CHUNK_BITS: u32 = HEADER_CHUNK_BITS;
const CHUNK: usize = 1 << CHUNK_BITS;

/// Words of a chunk's bitmap of written records.
const WORDS: usize = CHUNK / 64;

// A record is overwritten or forgotten without being dropped.
const _: () = assert!(!std::mem::needs_drop::<Message>());

/// A chunk of records (a fixed length: an index masked to it needs no bounds check): those of
/// the messages whose worm has started and that have not finished, marked in `written`; the
/// others' memory is not touched (a fresh chunk's pages are not faulted in until a record is
/// written there).
struct RecordChunk {
    written: [u64; WORDS],
    records: [MaybeUninit<Message>; CHUNK],
}

type Chunk = Box<RecordChunk>;

impl RecordChunk {
    /// A chunk with no record written, its records' memory left as the allocator gives it.
    fn new() -> Chunk {
        let mut chunk = Box::<RecordChunk>::new_uninit();
        // SAFETY: `written` is initialized here, and `records`, an array of `MaybeUninit`,
        // needs no initialization.
        unsafe {
            std::ptr::addr_of_mut!((*chunk.as_mut_ptr()).written).write([0; WORDS]);
            chunk.assume_init()
        }
    }

    #[inline(always)]
    fn is_written(&self, i: usize) -> bool {
        self.written[i / 64] >> (i % 64) & 1 != 0
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Option<&Message> {
        // SAFETY: a record marked written was written ([`RecordChunk::write`]).
        self.is_written(i)
            .then(|| unsafe { self.records[i].assume_init_ref() })
    }

    #[inline(always)]
    fn get_mut(&mut self, i: usize) -> Option<&mut Message> {
        // SAFETY: as for `get`.
        self.is_written(i)
            .then(|| unsafe { self.records[i].assume_init_mut() })
    }

    /// Writes record `i`, not written.
    #[inline(always)]
    fn write(&mut self, i: usize, message: Message) -> &mut Message {
        debug_assert!(!self.is_written(i));
        self.written[i / 64] |= 1 << (i % 64);
        self.records[i].write(message)
    }

    /// Forgets record `i`, written (it left the table).
    #[inline(always)]
    fn clear(&mut self, i: usize) {
        debug_assert!(self.is_written(i));
        self.written[i / 64] &= !(1 << (i % 64));
    }

    /// Whether no record is written, word `w` of the bitmap having none.
    #[inline(always)]
    fn empty_after(&self, w: usize) -> bool {
        self.written[w] == 0 && self.written.iter().fold(0, |any, &x| any | x) == 0
    }
}

/// What a waiting message's record is made of besides its header: its source and the cycle
/// it joined the source's queue; and whether it finished ahead of the front of the ids (its
/// record folded into the tally, [`MessageTable::retire`]).
#[derive(Clone, Copy, Debug, Default)]
struct Released {
    release: u64,
    source: u32,
    finished: bool,
}

type ReleasedChunk = Box<[Released; CHUNK]>;

/// The record of message `id`, released by `r` with `header`, whose worm has not started.
fn waiting(id: u32, r: Released, header: &Header) -> Message {
    Message {
        record: MessageRecord::waiting(id, r.source, header.destination, header.middle, r.release),
        sent: 0,
        gone: 0,
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
    keep: bool,
    /// The records that left the table.
    pub tally: Tally,
}

impl MessageTable {
    pub fn new() -> Self {
        MessageTable {
            chunks: vec![None, None],
            spare: Vec::new(),
            parking: false,
            headers: vec![None, None],
            released: vec![None, None],
            base: 0,
            end: 0,
            written: 0,
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

    /// Adds a message that joined the queue of input `source` in cycle `release`, waiting
    /// there; returns its id ([`MessageTable::issued`] before the call). Its record is written
    /// when its worm starts ([`MessageTable::start`]).
    #[inline]
    pub fn push(&mut self, source: u32, release: u64, header: Header) -> u32 {
        let id = self.end;
        if id as usize & (CHUNK - 1) == 0 {
            self.open_chunk(id);
        }
        let (c, i) = self.at(id);
        chunk_mut(&mut self.headers, c)[i] = header;
        chunk_mut(&mut self.released, c)[i] = Released {
            release,
            source,
            finished: false,
        };
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
            None => self.chunks[c] = Some(self.spare.pop().unwrap_or_else(RecordChunk::new)),
        }
        if self.headers[c].is_none() {
            let headers = vec![Header::default(); CHUNK].into_boxed_slice();
            self.headers[c] = Some(headers.try_into().expect("a chunk's length"));
            let released = vec![Released::default(); CHUNK].into_boxed_slice();
            self.released[c] = Some(released.try_into().expect("a chunk's length"));
        }
    }

    /// The message `id`, if it is held and has not finished (a waiting message's record made
    /// for the asking).
    pub fn get(&self, id: u32) -> Option<Cow<'_, Message>> {
        if !(self.base..self.end).contains(&id) {
            return None;
        }
        let (c, i) = self.at(id);
        let released = chunk(&self.released, c)[i];
        if released.finished {
            return None;
        }
        Some(match self.chunks[c].as_deref().and_then(|r| r.get(i)) {
            Some(m) => Cow::Borrowed(m),
            None => Cow::Owned(waiting(id, released, &chunk(&self.headers, c)[i])),
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

    /// Message `id`'s worm starts in `cycle` ([`Message::start`]; its record is written if
    /// this is its first attempt); returns whether it is a retry.
    #[inline]
    pub fn start(&mut self, id: u32, cycle: u64) -> bool {
        let parking = self.parking;
        let (mut starts, ..) = self.starts();
        match parking {
            true => starts.start::<true>(id, cycle),
            false => starts.start::<false>(id, cycle),
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
        let (starts, headers) = self.starts();
        (headers, starts)
    }

    fn starts(&mut self) -> (Starts<'_>, Headers<'_>) {
        let mask = self.headers.len() as u32 - 1;
        (
            Starts {
                chunks: &mut self.chunks,
                spare: &mut self.spare,
                written: &mut self.written,
                headers: &self.headers,
                released: &self.released,
                held: self.base..self.end,
            },
            Headers::chunked(&self.headers, mask),
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
    /// ids. Where many messages wait at their sources (more than [`OUT_OF_ORDER_AFTER`]: a
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
                    if self.fold_ahead(c, i) {
                        chunk_mut(&mut self.released, c)[i].finished = true;
                    }
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
                None if chunk(&self.released, c)[i].finished => {}
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
    /// finished, and forgets it, its chunk put aside if it was the last there; returns whether
    /// it did.
    #[inline(always)]
    fn fold_ahead(&mut self, c: usize, i: usize) -> bool {
        let slot = &mut self.chunks[c];
        // (An id whose flits left or were discarded together has folded in already.)
        let Some(records) = slot.as_deref_mut() else {
            return false;
        };
        match records.get(i) {
            Some(m) if m.finished() => self.tally.add(&m.record),
            _ => return false,
        }
        records.clear(i);
        if records.empty_after(i / 64)
            && let Some(chunk) = slot.take()
        {
            self.spare.push(chunk);
        }
        true
    }
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
    headers: &'a [Option<HeaderChunk>],
    released: &'a [Option<ReleasedChunk>],
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
        let (c, i) = at(self.chunks.len(), msg);
        if PARKING && self.chunks[c].is_none() {
            take_chunk(&mut self.chunks[c], self.spare);
        }
        let records = chunk_mut(self.chunks, c);
        let m = match records.get_mut(i) {
            Some(m) => m,
            None => {
                let m = waiting(msg, chunk(self.released, c)[i], &chunk(self.headers, c)[i]);
                *self.written += 1;
                records.write(i, m)
            }
        };
        m.start(cycle)
    }

    /// [`MessageTable::prefetch`].
    #[inline]
    pub(crate) fn prefetch(&self, id: u32) {
        if self.held.contains(&id) {
            prefetch(self.headers, self.released, id);
        }
    }
}

/// Puts a chunk of records in the empty `slot`: one put aside, or a new one.
#[cold]
#[inline(never)]
fn take_chunk(slot: &mut Option<Chunk>, spare: &mut Vec<Chunk>) {
    *slot = Some(spare.pop().unwrap_or_else(RecordChunk::new));
}

/// Asks for the header and release of held message `id` ([`MessageTable::prefetch`]).
#[inline]
fn prefetch(headers: &[Option<HeaderChunk>], released: &[Option<ReleasedChunk>], id: u32) {
    let (c, i) = at(headers.len(), id);
    crate::lines::prefetch(&chunk(headers, c)[i]);
    crate::lines::prefetch(&chunk(released, c)[i]);
}

/// The chunk and the index in it of id `id`'s record and header, in rings of `len` chunks.
#[inline(always)]
fn at(len: usize, id: u32) -> (usize, usize) {
    (
        (id >> CHUNK_BITS) as usize & (len - 1),
        id as usize & (CHUNK - 1),
    )
}

/// `ring` (of chunks, number `c` at `c & (len − 1)`) twice as long, the chunks of numbers
/// `live` moved to their new slots and the others kept where they were (reused).
fn double<T>(ring: &mut Vec<Option<T>>, live: std::ops::Range<u32>) {
    let len = ring.len() * 2;
    let mut doubled: Vec<Option<T>> = (0..len).map(|_| None).collect();
    for c in live {
        doubled[c as usize & (len - 1)] = ring[c as usize & (len / 2 - 1)].take();
    }
    for (k, spare) in ring.iter_mut().enumerate() {
        if doubled[k].is_none() {
            doubled[k] = spare.take();
        }
    }
    *ring = doubled;
}

/// Chunk `c` of `ring` (records or headers), allocated (it holds a held id).
#[inline(always)]
fn chunk<T>(ring: &[Option<Box<T>>], c: usize) -> &T {
    ring[c].as_deref().expect("a held id's chunk is allocated")
}

#[inline(always)]
fn chunk_mut<T>(ring: &mut [Option<Box<T>>], c: usize) -> &mut T {
    ring[c]
        .as_deref_mut()
        .expect("a held id's chunk is allocated")
}

impl Default for MessageTable {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record of message `id` while it waits.
    fn waiting(id: u32) -> MessageRecord {
        MessageRecord::waiting(id, id % 7, id % 5, 0, u64::from(id))
    }

    fn header(id: u32) -> Header {
        Header {
            destination: id % 5,
            middle: 0,
            path: 0,
            id,
        }
    }

    /// A waiting message holds its header and release, a third of what a record takes (as
    /// the module's documentation says).
    #[test]
    fn a_waiting_message_costs_a_third_of_a_record() {
        assert_eq!(size_of::<Header>() + size_of::<Released>(), 32);
        assert_eq!(size_of::<Message>(), 96);
    }

    /// Across chunks, the ring's doubling (live ids spanning every chunk) and its reuse of
    /// retired chunks, every held record and header is the one pushed with its id (a waiting
    /// message's record made from its header and release, a started one's written when it
    /// started), and the live records are exactly those not retired, in id order.
    #[test]
    fn records_survive_growth_and_reuse_of_chunks() {
        for keep in [false, true] {
            let mut table = MessageTable::new();
            table.keep(keep);
            let mut finished = std::collections::BTreeSet::new();
            let mut next = 0u32;
            // Waves of arrivals larger, then smaller, than what finishes: the live span
            // grows over several chunks, then shrinks and wraps.
            for (wave, (arrive, finish)) in [(5000, 1000), (3000, 6000), (4000, 500), (100, 9000)]
                .into_iter()
                .enumerate()
            {
                for _ in 0..arrive {
                    let id = table.push(next % 7, u64::from(next), header(next));
                    assert_eq!(id, next);
                    next += 1;
                }
                // Finish messages from the oldest (in even waves every third stays live, so
                // that the oldest live id holds back the ring while it grows; odd waves
                // finish them all, and the next pushes wrap round onto retired chunks).
                let mut done = 0;
                for id in table.base..table.end {
                    if done == finish {
                        break;
                    }
                    if id % 3 != 0 || wave % 2 == 1 {
                        // (One finished in an earlier wave counts again, as it stays held.)
                        if finished.insert(id) {
                            assert!(!table.start(id, u64::from(id)), "a first attempt");
                            let m = table.get_mut(id);
                            m.gone = 1;
                            m.record.status = Status::Delivered;
                            m.record.tail_arrival = Some(u64::from(id) + 1);
                        }
                        done += 1;
                    }
                }
                table.retire(std::iter::empty());
                // A request ahead for any id, held or not, is only a hint.
                for id in table.base.saturating_sub(3)..table.end + 3 {
                    table.prefetch(id);
                }
                for id in table.base..table.end {
                    let m = table.get(id).expect("a held id has its record");
                    let mut expected = waiting(id);
                    if finished.contains(&id) {
                        expected.status = Status::Delivered;
                        expected.attempts = 1;
                        expected.injected = Some(u64::from(id));
                        expected.tail_arrival = Some(u64::from(id) + 1);
                    }
                    assert_eq!(m.record, expected, "wave {wave}");
                    assert_eq!(table.header(id).id, id, "wave {wave}");
                }
                let live: Vec<u32> = table.live().map(|m| m.record.id).collect();
                let expected: Vec<u32> = (table.base..table.end).collect();
                assert_eq!(live, expected, "wave {wave}");
                assert_eq!(table.held() as usize, live.len());
                if keep {
                    assert_eq!(table.base, 0, "every record is kept");
                } else {
                    if wave == 1 {
                        assert_eq!(table.base, 6000, "wave 1 retires every id below 6000");
                    }
                    // Retired: a prefix of finished ids, and the first held one is not.
                    assert!((0..table.base).all(|id| finished.contains(&id)));
                    assert!(table.base == table.end || !finished.contains(&table.base));
                }
            }
            assert_eq!(table.issued(), 12_100);
        }
    }

    /// Where many messages wait at their sources (the first of them holding back the
    /// front), those that finish after them fold into the tally at once: their records leave
    /// (their chunks put aside once empty, and taken again where a worm of their ids
    /// starts), the waiting ones keep theirs, and the front passes the folded ids when the
    /// first ones finish. The tally counts every message once.
    #[test]
    fn finished_messages_behind_a_waiting_front_fold_in_at_once() {
        const WAITING: u32 = OUT_OF_ORDER_AFTER + CHUNK as u32;
        let mut table = MessageTable::new();
        let mut next = 0;
        let mut push = |table: &mut MessageTable, count: u32| {
            let ids = next..next + count;
            for id in ids.clone() {
                assert_eq!(table.push(id % 7, u64::from(id), header(id)), id);
            }
            next += count;
            ids
        };
        let finish = |table: &mut MessageTable, id: u32| {
            let m = table.get_mut(id);
            m.gone = 1;
            m.record.status = Status::Delivered;
            m.record.tail_arrival = Some(u64::from(id) + 100);
            Transfer {
                flit: FlitSlot {
                    msg: id,
                    seq: 0,
                    hop: 0,
                },
                from: 0,
                to: 0,
                kind: TransferKind::Arrived,
            }
        };
        let first = push(&mut table, WAITING);
        // Chunk after chunk of later messages start and finish, one a cycle.
        for cycle in 0..4 {
            let ids = push(&mut table, CHUNK as u32);
            for id in ids.clone() {
                table.start(id, cycle);
            }
            table.retire(std::iter::empty());
            assert!(table.parking(), "{} wait", table.never_started());
            assert_eq!(table.started().count(), CHUNK);
            let edge: Vec<Transfer> = ids.clone().map(|id| finish(&mut table, id)).collect();
            table.retire(edge.iter());
            assert_eq!(table.base, 0, "the waiting messages hold back the front");
            assert!(ids.clone().all(|id| table.get(id).is_none()), "folded in");
            assert_eq!(table.started().count(), 0, "no record left");
            assert_eq!(table.spare.len(), 1, "the chunk put aside is taken again");
        }
        assert_eq!(table.tally.delivered, 4 * CHUNK as u64);
        for id in first.clone() {
            assert_eq!(table.get(id).expect("waiting").record, waiting(id));
        }
        // The waiting ones start and finish: the front passes every id, and the tally
        // holds each message once.
        for id in first.clone() {
            table.start(id, 9);
        }
        let edge: Vec<Transfer> = first.map(|id| finish(&mut table, id)).collect();
        table.retire(edge.iter());
        assert!(!table.parking(), "the queues are empty");
        assert_eq!((table.held(), table.never_started()), (0, 0));
        assert_eq!(table.tally.delivered, u64::from(WAITING) + 4 * CHUNK as u64);
        // The slots have chunks again: a new message's worm starts where it would.
        let ids = push(&mut table, 1);
        assert!(!table.start(ids.start, 10));
    }
}
