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
}

/// The random stream `stream` of run `seed`.
pub fn stream(seed: u64, stream: Stream) -> Rng {
    let mixed = seed ^ (stream as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    Rng::seed_from_u64(mixed)
}
