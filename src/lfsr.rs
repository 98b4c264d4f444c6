//! 16-bit linear-feedback shift registers, the hardware's random numbers: the lane-choice
//! register of a switch and the arrival and destination registers of an on-chip traffic
//! generator step the same way in the model and in the Verilog.
//!
//! Galois form of x^16 + x^14 + x^13 + x^11 + 1 (maximal length: every non-zero value once in
//! 65 535 steps), shifting right.

/// The feedback taps (XORed in when the bit shifted out is 1).
pub const TAPS: u16 = 0xB400;

/// One step.
pub fn next(v: u16) -> u16 {
    let shifted = v >> 1;
    if v & 1 == 1 { shifted ^ TAPS } else { shifted }
}

/// `k` steps.
pub fn leap(mut v: u16, k: u32) -> u16 {
    for _ in 0..k {
        v = next(v);
    }
    v
}

/// `bits` bits of `v` spaced `16 / bits` apart, bit `i` of the result from bit
/// `i * (16 / bits)` of `v`: stepping `v` once moves every sampled bit by one place, so draws
/// taken one step apart share no bit until the spacing is used up. `bits` ≤ 16.
pub fn spread(v: u16, bits: u32) -> u32 {
    let spacing = 16 / bits.max(1);
    (0..bits).fold(0, |d, i| d | (u32::from(v >> (i * spacing)) & 1) << i)
}

/// Which register a seed is for, so that registers seeded from one run seed differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A switch's lane choice.
    LaneChoice = 0,
    /// A traffic generator's arrivals (one draw per cycle).
    Arrivals = 1,
    /// A traffic generator's destinations (one draw per message).
    Destinations = 2,
}

/// A non-zero reset value for register `index` (a switch, an input) of `purpose`.
pub fn seed(seed: u64, purpose: Purpose, index: u64) -> u16 {
    let mut z = seed ^ index.wrapping_mul(0xD134_2543_DE82_EF95);
    z ^= (purpose as u64).wrapping_mul(0x2545_F491_4F6C_DD1D);
    z = (z ^ (z >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let v = (z >> 48) as u16;
    if v == 0 { 0xACE1 } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maximal_length() {
        let mut v = 1u16;
        for step in 1..=65535u32 {
            v = next(v);
            assert!(v != 1 || step == 65535, "period {step}");
        }
        assert_eq!(v, 1);
    }

    #[test]
    fn spread_samples_spaced_bits() {
        assert_eq!(spread(0b0000_0100_0010_0001, 3), 0b111);
        assert_eq!(spread(0b0000_0000_0010_0000, 3), 0b010);
        assert_eq!(spread(0xFFFF, 16), 0xFFFF);
    }

    #[test]
    fn seeds_are_non_zero_and_differ_by_purpose() {
        for i in 0..1000 {
            let a = seed(7, Purpose::Arrivals, i);
            let d = seed(7, Purpose::Destinations, i);
            assert!(a != 0 && d != 0);
            assert_ne!(a, d);
        }
    }
}
