//! Seeded random streams. Every consumer of randomness draws from its own stream derived from
//! the run seed, so adding draws in one place never shifts another, and runs are reproducible
//! from the seed alone. ChaCha8 is used because its output is fixed by its specification
//! (unlike `StdRng`, which may change between rand releases).

use rand::SeedableRng;
pub use rand_chacha::ChaCha8Rng as Rng;

/// Independent consumers of randomness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    Traffic = 1,
    Wiring = 2,
    Routing = 3,
    Retry = 4,
    Test = 5,
    /// A protocol's own draws (ranks, random delays), apart from the traffic's.
    Protocol = 6,
    /// Message lengths drawn at random ([SV] §3's variable-length worms).
    Lengths = 7,
}

/// The random stream `stream` of run `seed`.
pub fn stream(seed: u64, stream: Stream) -> Rng {
    let mixed = seed ^ (stream as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    Rng::seed_from_u64(mixed)
}

/// A seed for trial `trial` of the row keyed `row` in `table` of an experiment: SplitMix64
/// over the run seed and the indices, so a trial's seed does not depend on which other rows
/// or trials run, or where.
pub fn trial_seed(seed: u64, table: u64, row: u64, trial: u64) -> u64 {
    let mut z = seed
        ^ table.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ row.wrapping_mul(0xD1B5_4A32_D192_ED03)
        ^ trial.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
    for _ in 0..2 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
    }
    z
}
