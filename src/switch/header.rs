//! The routing fields of the messages in flight, as the switches read them.

/// The fields a header carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub destination: u32,
    pub middle: u32,
    /// The index of the message's path, on a network whose messages carry given paths.
    pub path: u32,
    /// The id field before the flit's truncation: `k · 2^a + source` (in 32 bits) for the
    /// `k`-th message (in release order) of its source, `a` the bits of a terminal address:
    /// the number a hardware source gives its messages without knowing any other source's.
    /// Its low `a` bits name the source (the simulator's message table reads it from there).
    pub id: u32,
}

/// Ids a chunk of headers holds ([`Headers::chunked`]): `c · 2^HEADER_CHUNK_BITS..` in chunk
/// number `c`.
pub const HEADER_CHUNK_BITS: u32 = 10;

/// The headers of `2^HEADER_CHUNK_BITS` consecutive ids.
pub type HeaderChunk = Box<[Header; 1 << HEADER_CHUNK_BITS]>;

/// The headers of the messages in flight, by message id: a plain slice, or a ring of chunks
/// whose length is a power of two, chunk number `c` at `c & mask` (the simulator frees
/// finished messages).
#[derive(Clone, Copy, Debug)]
pub struct Headers<'a>(Store<'a>);

#[derive(Clone, Copy, Debug)]
enum Store<'a> {
    All(&'a [Header]),
    Chunked {
        chunks: &'a [Option<HeaderChunk>],
        mask: u32,
    },
}

impl<'a> Headers<'a> {
    /// `all[id]` for every id.
    pub fn all(all: &'a [Header]) -> Self {
        Headers(Store::All(all))
    }

    /// Entry `id mod 2^HEADER_CHUNK_BITS` of chunk `chunks[(id >> HEADER_CHUNK_BITS) & mask]`,
    /// allocated for every id asked for; `chunks.len()` must be `mask + 1`.
    pub fn chunked(chunks: &'a [Option<HeaderChunk>], mask: u32) -> Self {
        debug_assert_eq!(chunks.len() as u64, u64::from(mask) + 1);
        Headers(Store::Chunked { chunks, mask })
    }

    /// The header of message `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Header {
        match self.0 {
            Store::All(all) => all[id as usize],
            Store::Chunked { chunks, mask } => {
                let chunk = chunks[((id >> HEADER_CHUNK_BITS) & mask) as usize]
                    .as_deref()
                    .expect("a live id's chunk is allocated");
                chunk[id as usize & ((1 << HEADER_CHUNK_BITS) - 1)]
            }
        }
    }
}
