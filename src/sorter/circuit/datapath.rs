//! The sorter's datapath units for one cycle, each computing its next registers from the
//! registered state: the bit-serial column sorter, the Omega network's stages and the in-ring
//! exchanges through the `X` registers ([BB] §4.1). The controller in the parent module
//! decides which of them run.

use super::*;

impl FlexibleSorter {
    /// The column sorter for one cycle (SORT): layer 0 reads the ring ports, layer `t` reads
    /// layer `t − 1`; every comparator latches its decision at the first differing bit.
    pub(super) fn column_sorter(&self, n: &mut SorterRegs, first_in: bool) {
        let (c, r, s) = (&self.controls, &self.regs, self.params().s);
        for (t, layer) in c.comparators.iter().enumerate() {
            let f = if t == 0 { first_in } else { r.sfirst[t - 1] };
            let prev = |line: u32| {
                if t == 0 {
                    self.port_out(line)
                } else {
                    r.sline[t - 1][line as usize]
                }
            };
            // Lines without a comparator in this layer pass straight through.
            for line in 0..s {
                n.sline[t][line as usize] = prev(line);
            }
            for (q, &(i, j)) in layer.iter().enumerate() {
                let (a, b) = (prev(i), prev(j));
                let (dec, sw) = if f {
                    (false, false)
                } else {
                    (r.sdec[t][q], r.sswap[t][q])
                };
                let (lo, hi) = if dec {
                    if sw { (b, a) } else { (a, b) }
                } else {
                    (a && b, a || b)
                };
                n.sline[t][i as usize] = lo;
                n.sline[t][j as usize] = hi;
                n.sdec[t][q] = dec || a != b;
                n.sswap[t][q] = if dec { sw } else { a && !b };
            }
            n.sfirst[t] = f;
        }
    }

    /// The Omega network for one cycle of a forward (shuffle, switch) or reverse (switch,
    /// unshuffle) pass; each stage's position advances at the end of every word it switched.
    pub(super) fn omega_stages(&self, n: &mut SorterRegs, fwd: bool) {
        let (r, p) = (&self.regs, self.params());
        let (s, word, lg_s) = (p.s, p.word(), p.lg_s());
        let w = 1u32 << r.lg_w;
        for k in 0..lg_s as usize {
            // Stage k sees slot-c words during [c·word + delay, …).
            let delay = if fwd { k as u32 } else { lg_s - 1 - k as u32 };
            let in_slot = r.count >= delay && r.count - delay < w * word;
            let cross = |m: u32| in_slot && self.cross(k, m as usize);
            // The stage reads the ring ports at its input end, else its neighbour stage.
            let ports_side = if fwd { k == 0 } else { k + 1 == lg_s as usize };
            let input = |pos: u32| {
                if ports_side {
                    self.port_out(pos)
                } else if fwd {
                    r.o[k - 1][pos as usize]
                } else {
                    r.o[k + 1][pos as usize]
                }
            };
            // Switch m exchanges the words at positions 2m and 2m + 1 of `at`.
            let switched = |at: &dyn Fn(u32) -> bool, pos: u32| {
                let m = pos / 2;
                at(if cross(m) { pos ^ 1 } else { pos })
            };
            for pos in 0..s {
                n.o[k][pos as usize] = if fwd {
                    // Shuffle (position rotl(x) takes input x), then switch.
                    switched(&|q| input(p.rotr(q)), pos)
                } else {
                    // Switch, then unshuffle (position rotr(y) takes switched y).
                    switched(&input, p.rotl(pos))
                };
            }
            if in_slot && (r.count - delay) % word == word - 1 {
                n.optr[k] = r.optr[k] + 1;
            }
        }
    }

    /// One cycle of in-ring stage `j` (sub-steps: copy D to X, rotate X down `2^j` cells,
    /// owners exchange, rotate X back, non-owners copy X to D); true when the sub-step ends.
    pub(super) fn inring_substep(
        &self,
        n: &mut SorterRegs,
        j: u32,
        count_next: u32,
        span: u32,
    ) -> bool {
        let (c, r, p) = (&self.controls, &self.regs, self.params());
        let (s, cells, word) = (p.s, p.cells(), p.word());
        let w = 1u32 << r.lg_w;
        let mask = (1u64 << word) - 1;
        let msb = |v: u64| (v >> (word - 1)) & 1;
        let idx = |rho: u32, col: u32| (rho * cells + col) as usize;
        let next_sub;
        match r.sub {
            0 => {
                for rho in 0..s {
                    for col in 0..w {
                        n.x[idx(rho, col)] = r.d[idx(rho, col)];
                    }
                }
                next_sub = true;
            }
            1 | 3 => {
                // Rotate X by one bit: down (towards cell 0) in sub-step 1, up in 3.
                for rho in 0..s {
                    for col in 0..w {
                        let v = r.x[idx(rho, col)];
                        n.x[idx(rho, col)] = if r.sub == 1 {
                            let from = r.x[idx(rho, (col + 1) % w)];
                            ((v << 1) | msb(from)) & mask
                        } else {
                            let from = r.x[idx(rho, (col + w - 1) % w)];
                            (v >> 1) | ((from & 1) << (word - 1))
                        };
                    }
                }
                n.count = count_next;
                next_sub = count_next == span;
            }
            2 => {
                for col in (0..w).filter(|col| col & (1 << j) == 0) {
                    for rho in 0..s {
                        let store = &c.cell[rho as usize][col as usize];
                        if store[r.cptr[col as usize] as usize] {
                            n.d[idx(rho, col)] = r.x[idx(rho, col)];
                            n.x[idx(rho, col)] = r.d[idx(rho, col)];
                        }
                    }
                    n.cptr[col as usize] = r.cptr[col as usize] + 1;
                }
                next_sub = true;
            }
            _ => {
                for col in (0..w).filter(|col| col & (1 << j) != 0) {
                    for rho in 0..s {
                        n.d[idx(rho, col)] = r.x[idx(rho, col)];
                    }
                }
                next_sub = true;
            }
        }
        next_sub
    }
}
