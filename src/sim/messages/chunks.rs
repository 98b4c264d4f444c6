//! The chunks the message table's rings hold ([`super::MessageTable`]): records, and the
//! releases of the ids beside their headers; the ring arithmetic they share.

use super::Message;
use crate::switch::{HEADER_CHUNK_BITS, HeaderChunk};
use std::mem::MaybeUninit;

/// Records a chunk of [`super::MessageTable`] holds: ids `c · CHUNK..(c + 1) · CHUNK` for chunk
/// number `c` (the headers' chunks hold the same ids).
pub(super) const CHUNK_BITS: u32 = HEADER_CHUNK_BITS;
pub(super) const CHUNK: usize = 1 << CHUNK_BITS;

/// Words of a chunk's bitmap of written records.
pub(super) const WORDS: usize = CHUNK / 64;

/// A chunk of records (a fixed length: an index masked to it needs no bounds check): those of
/// the messages whose worm has started and that have not finished, marked in `written`; the
/// others' memory is not touched (a fresh chunk's pages are not faulted in until a record is
/// written there).
pub(super) struct RecordChunk {
    pub(super) written: [u64; WORDS],
    records: [MaybeUninit<Message>; CHUNK],
}

pub(super) type Chunk = Box<RecordChunk>;

impl RecordChunk {
    /// A chunk with no record written, its records' memory left as the allocator gives it.
    pub(super) fn new() -> Chunk {
        let mut chunk = Box::<RecordChunk>::new_uninit();
        // SAFETY: `written` is initialized here, and `records`, an array of `MaybeUninit`,
        // needs no initialization.
        unsafe {
            std::ptr::addr_of_mut!((*chunk.as_mut_ptr()).written).write([0; WORDS]);
            chunk.assume_init()
        }
    }

    #[inline(always)]
    pub(super) fn is_written(&self, i: usize) -> bool {
        self.written[i / 64] >> (i % 64) & 1 != 0
    }

    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> Option<&Message> {
        // SAFETY: a record marked written was written ([`RecordChunk::write`]).
        self.is_written(i)
            .then(|| unsafe { self.records[i].assume_init_ref() })
    }

    #[inline(always)]
    pub(super) fn get_mut(&mut self, i: usize) -> Option<&mut Message> {
        // SAFETY: as for `get`.
        self.is_written(i)
            .then(|| unsafe { self.records[i].assume_init_mut() })
    }

    /// Writes record `i`, not written.
    #[inline(always)]
    pub(super) fn write(&mut self, i: usize, message: Message) -> &mut Message {
        debug_assert!(!self.is_written(i));
        self.written[i / 64] |= 1 << (i % 64);
        self.records[i].write(message)
    }

    /// Forgets record `i`, written (it left the table).
    #[inline(always)]
    pub(super) fn clear(&mut self, i: usize) {
        debug_assert!(self.is_written(i));
        self.written[i / 64] &= !(1 << (i % 64));
    }

    /// Whether no record is written, word `w` of the bitmap having none.
    #[inline(always)]
    pub(super) fn empty_after(&self, w: usize) -> bool {
        self.written[w] == 0 && self.written.iter().fold(0, |any, &x| any | x) == 0
    }
}

/// What a waiting message's record is made of besides its header (which names its source in
/// the low bits of its id): the cycle it joined its source's queue, and whether it finished
/// ahead of the front of the ids (its record folded into the tally,
/// [`MessageTable::retire`]), in one word: the cycle in bits 0 to 62, the flag in bit 63.
#[derive(Clone, Copy, Default)]
pub(super) struct Released(u64);

impl std::fmt::Debug for Released {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Released")
            .field("release", &self.release())
            .field("finished", &self.finished())
            .finish()
    }
}

// Every release (at most `MAX_CYCLE`, the traffic's and the run's bound) leaves the flag's bit.
const _: () = assert!(crate::traffic::MAX_CYCLE < Released::FINISHED);

impl Released {
    const FINISHED: u64 = 1 << 63;

    /// Released in cycle `release` (below 2^63), not finished.
    #[inline(always)]
    pub(super) fn new(release: u64) -> Self {
        debug_assert!(release < Self::FINISHED, "a release cycle below 2^63");
        Released(release)
    }

    #[inline(always)]
    pub(super) fn release(self) -> u64 {
        self.0 & !Self::FINISHED
    }

    #[inline(always)]
    pub(super) fn finished(self) -> bool {
        self.0 & Self::FINISHED != 0
    }

    #[inline(always)]
    pub(super) fn set_finished(&mut self) {
        self.0 |= Self::FINISHED;
    }
}

pub(super) type ReleasedChunk = Box<[Released; CHUNK]>;

/// Puts a chunk of records in the empty `slot`: one put aside, or a new one.
#[cold]
#[inline(never)]
pub(super) fn take_chunk(slot: &mut Option<Chunk>, spare: &mut Vec<Chunk>) {
    *slot = Some(spare.pop().unwrap_or_else(RecordChunk::new));
}

/// Asks for the header and release of held message `id` ([`MessageTable::prefetch`]).
#[inline]
pub(super) fn prefetch(
    headers: &[Option<HeaderChunk>],
    released: &[Option<ReleasedChunk>],
    id: u32,
) {
    let (c, i) = at(headers.len(), id);
    crate::lines::prefetch(&chunk(headers, c)[i]);
    crate::lines::prefetch(&chunk(released, c)[i]);
}

/// The chunk and the index in it of id `id`'s record and header, in rings of `len` chunks.
#[inline(always)]
pub(super) fn at(len: usize, id: u32) -> (usize, usize) {
    (
        (id >> CHUNK_BITS) as usize & (len - 1),
        id as usize & (CHUNK - 1),
    )
}

/// `ring` (of chunks, number `c` at `c & (len − 1)`) twice as long, the chunks of numbers
/// `live` moved to their new slots and the others kept where they were (reused).
pub(super) fn double<T>(ring: &mut Vec<Option<T>>, live: std::ops::Range<u32>) {
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
pub(super) fn chunk<T>(ring: &[Option<Box<T>>], c: usize) -> &T {
    ring[c].as_deref().expect("a held id's chunk is allocated")
}

#[inline(always)]
pub(super) fn chunk_mut<T>(ring: &mut [Option<Box<T>>], c: usize) -> &mut T {
    ring[c]
        .as_deref_mut()
        .expect("a held id's chunk is allocated")
}
