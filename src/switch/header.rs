//! The routing fields of the messages in flight, as the switches read them.

/// The fields a header carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub destination: u32,
    pub middle: u32,
    /// The index of the message's path, on a network whose messages carry given paths.
    pub path: u32,
    /// The id field before truncation: `k · n + source` for the `k`-th message (in release
    /// order) of its source, the number a hardware source gives its messages without knowing
    /// any other source's.
    pub id: u32,
}

/// The headers of the messages in flight, by message id: a plain slice, or a ring whose
/// length is a power of two, indexed by `id & mask` (the simulator frees finished messages).
#[derive(Clone, Copy, Debug)]
pub struct Headers<'a> {
    ring: &'a [Header],
    mask: u32,
}

impl<'a> Headers<'a> {
    /// `all[id]` for every id.
    pub fn all(all: &'a [Header]) -> Self {
        Headers {
            ring: all,
            mask: u32::MAX,
        }
    }

    /// `ring[id & mask]`; `ring.len()` must be `mask + 1`.
    pub fn ring(ring: &'a [Header], mask: u32) -> Self {
        debug_assert_eq!(ring.len() as u64, u64::from(mask) + 1);
        Headers { ring, mask }
    }

    /// The header of message `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Header {
        self.ring[(id & self.mask) as usize]
    }
}
