//! Bit-serial packet formats of the pruned butterfly ([BB] §3.3; interpretation: 'Packet
//! format', docs/interpretations.md).
//!
//! Expansion packet as it enters a vertex at level `m`:
//! `V A H K R` — `V` = 1 marks a packet (idle wires carry 0), `A` = active, `H` = the
//! `L − m` remaining destination bits MSB first, `K` = the tie-break key (rank at the
//! injecting node) in a fixed `L/2` bits MSB first, `R` = the record: the full destination
//! (`L` bits) and the body (`b` bits), both MSB first. Every vertex strips the first `H` bit,
//! so a frame is one bit shorter per level and the fields stay aligned.
//!
//! Compression packet as the leaf hands it to its up-port register: `V Hc R`, where `Hc` is
//! the target vertex index `h` LSB first in a fixed `L/2` bits minus the bit the leaf itself
//! consumed (bit 0 picks the leaf's up-port). Every even-level vertex strips the front bit.
//!
//! Fixing `K` and `Hc` at `L/2` bits (the widest any stage needs, `lg W_0`) makes every frame
//! length a per-level constant, so a vertex needs no stage-dependent length input.

/// Frame geometry of an `N`-leaf network with `b`-bit bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameFormat {
    /// `L = lg N`.
    pub log_n: u32,
    /// Body bits `b` (the paper assumes `Θ(log N)`; default `2L`).
    pub body_bits: u32,
}

/// A record as the leaves store and deliver it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Record {
    pub destination: u32,
    pub body: u64,
}

/// A decoded expansion packet as it lands on a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Landed {
    pub active: bool,
    pub key: u32,
    pub record: Record,
}

fn push_msb(bits: &mut Vec<bool>, value: u64, width: u32) {
    bits.extend((0..width).rev().map(|t| (value >> t) & 1 == 1));
}

fn read_msb(bits: &[bool]) -> u64 {
    bits.iter().fold(0, |a, &b| a << 1 | u64::from(b))
}

impl FrameFormat {
    /// Width of the `K` and `Hc` fields, `L/2`.
    pub fn key_bits(&self) -> u32 {
        self.log_n / 2
    }

    /// Record bits `L + b`.
    pub fn record_bits(&self) -> u32 {
        self.log_n + self.body_bits
    }

    /// Expansion frame length at the input of a level-`m` vertex: `2 + (L − m) + L/2 + L + b`.
    pub fn expansion_len(&self, level: u32) -> u32 {
        2 + (self.log_n - level) + self.key_bits() + self.record_bits()
    }

    /// Even levels in `[from, L]`: the `Hc` bits consumed by the time a compression packet
    /// leaves level `from` upwards.
    fn consumed(&self, from: u32) -> u32 {
        (from..=self.log_n).filter(|m| m % 2 == 0).count() as u32
    }

    /// Compression frame length on the up-wire leaving level `m` (`m = L`: the leaf's register).
    pub fn compression_len(&self, level: u32) -> u32 {
        1 + self.key_bits() - self.consumed(level) + self.record_bits()
    }

    /// The expansion packet injected at a level-`p` vertex.
    pub fn expansion_frame(&self, level: u32, key: u32, record: Record) -> Vec<bool> {
        let mut bits = vec![true, true];
        let remaining = self.log_n - level;
        push_msb(&mut bits, u64::from(record.destination), remaining);
        push_msb(&mut bits, u64::from(key), self.key_bits());
        push_msb(&mut bits, u64::from(record.destination), self.log_n);
        push_msb(&mut bits, record.body, self.body_bits);
        debug_assert_eq!(bits.len() as u32, self.expansion_len(level));
        bits
    }

    /// Decodes an expansion packet arriving at a leaf (`expansion_len(L)` bits).
    pub fn decode_landed(&self, bits: &[bool]) -> Landed {
        let k = self.key_bits() as usize;
        let l = self.log_n as usize;
        Landed {
            active: bits[1],
            key: read_msb(&bits[2..2 + k]) as u32,
            record: Record {
                destination: read_msb(&bits[2 + k..2 + k + l]) as u32,
                body: read_msb(&bits[2 + k + l..]),
            },
        }
    }

    /// The compression packet a leaf writes into up-port register `h & 1`.
    pub fn compression_frame(&self, h: u32, record: Record) -> Vec<bool> {
        let mut bits = vec![true];
        bits.extend((1..self.key_bits()).map(|t| (h >> t) & 1 == 1));
        push_msb(&mut bits, u64::from(record.destination), self.log_n);
        push_msb(&mut bits, record.body, self.body_bits);
        debug_assert_eq!(bits.len() as u32, self.compression_len(self.log_n));
        bits
    }

    /// Decodes a compression packet arriving at a vertex of the peak level `p`
    /// (`compression_len(p + 1)` bits): the record, and the unconsumed `Hc` bits, which must
    /// be zero (`h < W_p`).
    pub fn decode_arrived(&self, level: u32, bits: &[bool]) -> (Record, u32) {
        let pad = (self.key_bits() - self.consumed(level + 1)) as usize;
        let l = self.log_n as usize;
        let rest = &bits[1 + pad..];
        (
            Record {
                destination: read_msb(&rest[..l]) as u32,
                body: read_msb(&rest[l..]),
            },
            read_msb(&bits[1..1 + pad]) as u32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_shrink_one_bit_per_consuming_level() {
        let f = FrameFormat {
            log_n: 6,
            body_bits: 12,
        };
        assert_eq!(f.expansion_len(0), 2 + 6 + 3 + 18);
        assert_eq!(f.expansion_len(6), 2 + 3 + 18);
        // Leaf consumes bit 0; levels 4 and 2 consume bits 1 and 2; level 0 nothing further.
        assert_eq!(f.compression_len(6), 1 + 2 + 18);
        assert_eq!(f.compression_len(5), f.compression_len(6));
        assert_eq!(f.compression_len(2), 1 + 18);
        let r = Record {
            destination: 45,
            body: 0xabc,
        };
        let e = f.expansion_frame(6, 5, r);
        assert_eq!(
            f.decode_landed(&e),
            Landed {
                active: true,
                key: 5,
                record: r
            }
        );
        let c = f.compression_frame(6, r);
        assert_eq!(c[1..3], [true, true]);
    }
}
