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

/// `k` steps at once, for many registers: the step is linear over GF(2), so `k` steps are one
/// 16×16 bit matrix, found by repeated squaring (the simulator skips idle cycles with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leap {
    /// Column `i`: the image of bit `i`.
    columns: [u16; 16],
}

impl Leap {
    /// The matrix of `k` steps.
    pub fn new(k: u64) -> Self {
        // Every non-zero state recurs after 65 535 steps (and zero stays zero).
        let mut k = k % 65_535;
        let mut result = Leap {
            columns: std::array::from_fn(|i| 1 << i),
        };
        let mut power = Leap {
            columns: std::array::from_fn(|i| next(1 << i)),
        };
        while k > 0 {
            if k & 1 == 1 {
                result = power.after(&result);
            }
            power = power.after(&power);
            k >>= 1;
        }
        result
    }

    /// The register `v` after the steps.
    pub fn apply(&self, v: u16) -> u16 {
        (0..16)
            .filter(|&i| v >> i & 1 == 1)
            .fold(0, |acc, i| acc ^ self.columns[i])
    }

    /// `self` applied after `first`.
    fn after(&self, first: &Leap) -> Leap {
        Leap {
            columns: first.columns.map(|c| self.apply(c)),
        }
    }
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
    fn a_leap_is_that_many_steps() {
        for k in [0u64, 1, 2, 7, 100, 65_534, 65_535, 65_536, 1 << 40] {
            let leap = Leap::new(k);
            for v in [1u16, 0xACE1, 0x8000, 0xFFFF] {
                assert_eq!(leap.apply(v), leap_slow(v, k % 65_535), "k {k} v {v:04x}");
            }
        }
        assert_eq!(Leap::new(5).apply(0), 0);
    }

    fn leap_slow(v: u16, k: u64) -> u16 {
        (0..k).fold(v, |v, _| next(v))
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
