//! Vectors that own whole cache lines: their first element starts a line pair and their last
//! ends one, so that no line holds elements of two of them. A run on two threads gives each
//! thread registers and bitmaps it writes every cycle; were two threads' vectors to share a
//! line (as the allocator may place them), every write would take the line from the other
//! core. And [`prefetch`]: a request to bring a line in ahead of its use.

use crate::error::Result;
use crate::limits::vec_of;

/// Bytes the layout keeps apart: two 64-byte lines, as the processor's adjacent-line
/// prefetcher fetches them in pairs.
pub const LINE: usize = 128;

/// `len` elements on lines of their own (dereferences to the slice of them).
#[derive(Debug)]
pub struct Lines<T> {
    buf: Vec<T>,
    /// The elements are the `len` from `first`, a pointer into `buf` at the first element
    /// that starts a line pair, with `len` elements of `buf` from there ([`Lines::laid_out`]).
    /// (A pointer, not an offset: a dereference then costs what a `Vec`'s does, and the
    /// kernels' innermost loops read these.)
    first: *mut T,
    len: usize,
}

// SAFETY: `first` points into `buf`, which the `Lines` owns as a `Vec` owns its buffer: it is
// sent and shared exactly as a `Vec<T>` would be.
unsafe impl<T: Send> Send for Lines<T> {}
// SAFETY: as above; `&Lines` gives only `&[T]`.
unsafe impl<T: Sync> Sync for Lines<T> {}

impl<T: Clone> Lines<T> {
    /// `len` copies of `value`, or an error on `flag` (shown as `shown`) when the allocation
    /// fails ([`vec_of`]).
    pub fn new(len: usize, value: T, flag: &str, shown: impl std::fmt::Display) -> Result<Self> {
        let per = Self::per_line();
        // Up to `per − 1` elements before the first line, and the last line filled out.
        let buf = vec_of(len.saturating_add(2 * per), value, flag, shown)?;
        Ok(Self::laid_out(buf, len))
    }

    /// [`Lines::new`] for a size known to be small (an allocation that fails aborts, as a
    /// `Vec`'s does).
    pub fn filled(len: usize, value: T) -> Self {
        let per = Self::per_line();
        Self::laid_out(vec![value; len + 2 * per], len)
    }

    /// `len` elements of `buf` (at least `len + 2 · per_line` long), from the first that
    /// starts a line pair.
    fn laid_out(mut buf: Vec<T>, len: usize) -> Self {
        let per = Self::per_line();
        assert!(buf.len() >= len + 2 * per, "room for the padding");
        let start = buf.as_ptr().align_offset(LINE).min(per - 1);
        // In bounds: `start < per` and `start + len <= buf.len()`.
        let first = buf[start..start + len].as_mut_ptr();
        Lines { buf, first, len }
    }

    /// Bytes of `len` elements laid out so.
    pub fn bytes(len: usize) -> u64 {
        ((len + 2 * Self::per_line()) * std::mem::size_of::<T>()) as u64
    }

    /// Elements a line pair holds.
    fn per_line() -> usize {
        let size = std::mem::size_of::<T>();
        assert!(
            size > 0 && LINE.is_multiple_of(size),
            "an element size that divides {LINE}"
        );
        LINE / size
    }
}

impl<T: Clone> Clone for Lines<T> {
    fn clone(&self) -> Self {
        // The buffer is never empty: it has a line pair's worth beyond the elements.
        let mut copy = Lines::filled(self.len, self.buf[0].clone());
        copy.clone_from_slice(self);
        copy
    }
}

// The elements are read in the kernels' innermost loops: without a bounds check at every
// access (`Lines::laid_out` checked the range once; `buf` never changes length).
impl<T> std::ops::Deref for Lines<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `first` and the `len` elements from it lie in `buf` ([`Lines::laid_out`]):
        // initialized elements, which never move (`buf` is never resized), borrowed as `self`
        // is.
        unsafe { std::slice::from_raw_parts(self.first, self.len) }
    }
}

impl<T> std::ops::DerefMut for Lines<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, borrowed mutably as `self` is (nothing else reaches `buf`).
        unsafe { std::slice::from_raw_parts_mut(self.first, self.len) }
    }
}

/// Asks the processor to bring the cache line of address `at` into its caches ahead of its
/// use (nothing where there is no such instruction). Only a hint: nothing is read, and a
/// value read later is read from wherever it is.
#[inline(always)]
pub fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch dereferences nothing and cannot fault, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

#[cfg(test)]
mod tests {
    use super::{LINE, Lines};

    /// The elements start a line pair and none of the pair that holds the last is another
    /// allocation's, whatever the allocator gave; a copy is a copy.
    #[test]
    fn lines_start_and_end_a_line_pair() {
        for len in [0, 1, 7, 8, 9, 16, 17, 100] {
            let mut words = Lines::new(len, 0u64, "inputs", len).unwrap();
            assert_eq!(words.len(), len);
            assert_eq!(words.as_ptr() as usize % LINE, 0, "{len} words");
            let end = words.as_ptr() as usize + 8 * len;
            let buf_end = words.buf.as_ptr() as usize + 8 * words.buf.len();
            assert!(end.next_multiple_of(LINE) <= buf_end, "{len} words");
            if len > 0 {
                words[len - 1] = 5;
            }
            let copy = words.clone();
            assert_eq!(&copy[..], &words[..]);
            assert_eq!(copy.as_ptr() as usize % LINE, 0);
        }
    }
}
