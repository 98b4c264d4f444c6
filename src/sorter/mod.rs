//! Software building blocks of the flexible sorter of seed 001 §4.1 (notes-001 §4.1–4.5):
//! the recursive Columnsort schedule with the fold shift ([`schedule`]), Beneš control bits by
//! the looping algorithm for its permuting steps ([`looping`]), and Batcher's odd–even merge
//! sort as a reference column sorter ([`batcher`]). All are pure functions; the cycle-level
//! circuit that uses them to precompute its control registers comes later.

pub mod batcher;
pub mod looping;
pub mod schedule;
