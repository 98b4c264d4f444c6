//! Bit vectors in hex, as a testbench's `$readmemh` file and a Verilog hex literal spell them:
//! the most significant digit first, bit 0 the lowest bit of the last digit.

/// The hex digits of the `len` bits `bit(0)..bit(len − 1)`, the most significant first (the
/// first digit, if it holds fewer than four bits, is padded with zeros above).
pub fn digits(len: usize, bit: impl Fn(usize) -> bool) -> String {
    (0..len.div_ceil(4))
        .rev()
        .map(|d| {
            let nibble = (0..4)
                .filter(|&k| d * 4 + k < len && bit(d * 4 + k))
                .fold(0u32, |a, k| a | 1 << k);
            char::from_digit(nibble, 16).unwrap_or('0')
        })
        .collect()
}

/// [`digits`] of a slice of bits, bit 0 first.
pub fn of_bits(bits: &[bool]) -> String {
    digits(bits.len(), |i| bits[i])
}

/// A testbench's inputs, one `$readmemh` line a cycle.
#[derive(Clone, Debug, Default)]
pub struct Lines {
    lines: Vec<String>,
}

impl Lines {
    /// Appends the next cycle's line.
    pub fn push(&mut self, line: String) {
        self.lines.push(line);
    }

    /// Cycles recorded.
    pub fn cycles(&self) -> u64 {
        self.lines.len() as u64
    }

    /// The `$readmemh` file: a line a cycle, each ended by a newline.
    pub fn to_hex(&self) -> String {
        let mut s = self.lines.join("\n");
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_zero_is_the_last_digits_lowest_and_a_short_top_digit_is_padded() {
        assert_eq!(of_bits(&[]), "");
        assert_eq!(of_bits(&[true]), "1");
        assert_eq!(of_bits(&[false, false, false, false, true]), "10");
        assert_eq!(of_bits(&[true, false, true, true, false, true]), "2d");
        assert_eq!(digits(9, |i| i == 8 || i < 4), "10f");
    }

    #[test]
    fn a_file_ends_every_line() {
        let mut lines = Lines::default();
        assert_eq!(lines.cycles(), 0);
        lines.push("0a".into());
        lines.push("ff".into());
        assert_eq!(
            (lines.cycles(), lines.to_hex()),
            (2, "0a\nff\n".to_string())
        );
    }
}
