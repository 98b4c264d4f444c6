//! Switches of the universal protocols as hardware: register-level models whose registers are
//! declared once and drive the waveform and the Verilog (`templates/cmsv_*.v`,
//! `templates/rank_*.v`), each checked against the protocol's kernel and co-simulated.
//!
//! - [`algorithm1`]: [CMSV] Algorithm 1's bufferless discard-all switch (one forward pass);
//! - [`growing_rank`]: [SV] §2's store-and-forward switch with growing ranks.

pub mod algorithm1;
pub mod growing_rank;

/// Scope and Verilog instance of butterfly switch ⟨level, w⟩.
pub fn scope(level: u32, w: u32) -> String {
    format!("l{level}_c{w}")
}

/// One `$readmemh` line of `width` bits: each (value, bits) field in turn from bit 0.
pub fn hex_line(fields: &[(u64, u32)], width: usize) -> String {
    let mut bits = vec![false; width];
    let mut at = 0usize;
    for &(value, n) in fields {
        for k in 0..n as usize {
            if at + k < width {
                bits[at + k] = (value >> k) & 1 == 1;
            }
        }
        at += n as usize;
    }
    (0..width.div_ceil(4))
        .rev()
        .map(|d| {
            let nibble = (0..4).fold(0u32, |a, k| {
                a | u32::from(bits.get(d * 4 + k).copied().unwrap_or(false)) << k
            });
            char::from_digit(nibble, 16).unwrap_or('0')
        })
        .collect()
}
