//! A set of a switch's input VCs as bit words: how the next-state logic finds the VCs holding
//! a flit, the requesters of a direction and the VCs about to leave, and visits them in
//! round-robin order without a branch per VC.

/// A set of a switch's input VCs, in `W` words (one for the usual switch of at most 64).
#[derive(Clone, Copy)]
pub(super) struct VcSet<const W: usize>([u64; W]);

impl<const W: usize> Default for VcSet<W> {
    fn default() -> Self {
        VcSet([0; W])
    }
}

impl<const W: usize> VcSet<W> {
    #[inline]
    pub(super) fn insert(&mut self, j: usize) {
        self.0[j >> 6] |= 1 << (j & 63);
    }
    #[inline]
    pub(super) fn remove(&mut self, j: usize) {
        self.0[j >> 6] &= !(1 << (j & 63));
    }
    #[inline]
    pub(super) fn contains(&self, j: usize) -> bool {
        self.0[j >> 6] >> (j & 63) & 1 != 0
    }
    /// Adds `j` if `member`, without a branch.
    #[inline]
    pub(super) fn insert_if(&mut self, j: usize, member: bool) {
        self.0[j >> 6] |= u64::from(member) << (j & 63);
    }
    /// The members from `at` on, and those below it.
    #[inline]
    pub(super) fn split_at(&self, at: usize) -> (Self, Self) {
        let (mut from, mut below) = (*self, *self);
        for (w, (hi, lo)) in from.0.iter_mut().zip(&mut below.0).enumerate() {
            let keep = match at.checked_sub(w * 64) {
                None => !0,
                Some(k) if k >= 64 => 0,
                Some(k) => !0 << k,
            };
            *hi &= keep;
            *lo &= !keep;
        }
        (from, below)
    }
    /// Removes and returns the lowest member.
    #[inline]
    pub(super) fn pop_first(&mut self) -> Option<usize> {
        for (w, word) in self.0.iter_mut().enumerate() {
            if *word != 0 {
                let b = word.trailing_zeros() as usize;
                *word &= *word - 1;
                return Some(w * 64 + b);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::VcSet;

    /// The members of `set` in round-robin order from `start`, as allocation visits them.
    fn round_robin<const W: usize>(set: VcSet<W>, start: usize) -> Vec<usize> {
        let (from, below) = set.split_at(start);
        let mut order = Vec::new();
        for mut part in [from, below] {
            while let Some(j) = part.pop_first() {
                order.push(j);
            }
        }
        order
    }

    #[test]
    fn members_come_in_round_robin_order_across_words() {
        let mut set = VcSet::<4>::default();
        for j in [0, 5, 63, 64, 130, 255] {
            set.insert(j);
        }
        set.insert_if(7, false);
        assert_eq!(round_robin(set, 0), [0, 5, 63, 64, 130, 255]);
        assert_eq!(round_robin(set, 64), [64, 130, 255, 0, 5, 63]);
        assert_eq!(round_robin(set, 65), [130, 255, 0, 5, 63, 64]);
        assert_eq!(round_robin(set, 255), [255, 0, 5, 63, 64, 130]);
        let mut one = VcSet::<1>::default();
        one.insert_if(3, true);
        one.insert(1);
        assert_eq!(round_robin(one, 2), [3, 1]);
        assert_eq!(round_robin(one, 4), [1, 3]);
    }
}
