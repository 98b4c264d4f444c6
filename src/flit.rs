//! Flits and worms ([CMS] §1.1): a message of `L` flits, the first (header) carrying the
//! routing fields, the last marked as tail, each `W` bits wide.
//!
//! Switches never change a flit's bits, so the model stores a flit as `(message, index)` and
//! derives its `W` data bits on demand with [`HeaderLayout::flit_bits`]; the generated Verilog
//! stores the bits themselves. Both are the same register contents.

use crate::error::{Error, Result};
use bitvec::prelude::*;
use serde::{Deserialize, Serialize};

/// Largest flit width.
pub const MAX_FLIT_BITS: u32 = 256;

/// The `W` bits of one flit register, least significant bit first.
pub type FlitBits = BitVec<u64, Lsb0>;

/// One flit in a register: which message it belongs to and its index in the worm
/// (0 = header, `L - 1` = tail), and for a header the links it has crossed (a message on a
/// given path is routed by its position there; the bits do not change).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlitSlot {
    pub msg: u32,
    pub seq: u16,
    pub hop: u16,
}

/// One header field: name, offset of its least significant bit, width.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HeaderField {
    pub name: &'static str,
    pub offset: u32,
    pub width: u32,
}

/// Widths of the optional protocol fields a header carries ([CMS], [SV], [CMSV]: colour, rank,
/// birth time, copy index). All default to 0 bits (absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProtocolFields {
    pub color_bits: u32,
    pub rank_bits: u32,
    pub birth_bits: u32,
    pub copy_bits: u32,
}

/// Values of a message's header fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeaderValues {
    pub destination: u32,
    pub middle: u32,
    /// The index of the message's path (networks whose messages carry given paths).
    pub path: u32,
    pub id: u32,
    pub color: u32,
    pub rank: u32,
    pub birth: u64,
    pub copy: u32,
}

/// Bit layout of the header flit, LSB first: `dest`, then `mid` (Beneš only), `path` (the
/// index of a message's path, on networks whose messages carry given paths), the protocol
/// fields that are present, and `id` (the message id, truncated) in the bits that remain, up to
/// 32. The layout is computed once per configuration and drives the model, the waveform and the
/// Verilog alike.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HeaderLayout {
    pub flit_bits: u32,
    pub fields: Vec<HeaderField>,
}

impl HeaderLayout {
    /// Lays out a header for `address_bits`-bit columns in a `flit_bits`-wide flit. Fails if the
    /// routing and protocol fields do not fit.
    pub fn new(
        flit_bits: u32,
        address_bits: u32,
        needs_middle: bool,
        protocol: ProtocolFields,
        path_bits: u32,
    ) -> Result<Self> {
        let mut fields = Vec::new();
        let mut offset = 0;
        let mut push = |name, width| {
            if width > 0 {
                fields.push(HeaderField {
                    name,
                    offset,
                    width,
                });
                offset += width;
            }
        };
        push("dest", address_bits);
        if needs_middle {
            push("mid", address_bits);
        }
        push("path", path_bits);
        push("color", protocol.color_bits);
        push("rank", protocol.rank_bits);
        push("birth", protocol.birth_bits);
        push("copy", protocol.copy_bits);
        let needed = offset;
        if flit_bits < needed.max(1) || flit_bits > MAX_FLIT_BITS {
            let names: Vec<String> = fields
                .iter()
                .map(|f| format!("{} {}", f.name, f.width))
                .collect();
            return Err(Error::invalid(
                "flit-bits",
                flit_bits,
                format!(
                    "{}..={MAX_FLIT_BITS}: the header needs {needed} bits ({})",
                    needed.max(1),
                    names.join(" + ")
                ),
            ));
        }
        let id_bits = (flit_bits - needed).min(32);
        if id_bits > 0 {
            fields.push(HeaderField {
                name: "id",
                offset: needed,
                width: id_bits,
            });
        }
        Ok(HeaderLayout { flit_bits, fields })
    }

    /// The field called `name`, if present.
    pub fn field(&self, name: &str) -> Option<&HeaderField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Width of the message-id field (0 if the flit is too narrow to carry one).
    pub fn id_bits(&self) -> u32 {
        self.field("id").map_or(0, |f| f.width)
    }

    /// Packs a header.
    pub fn header_bits(&self, v: &HeaderValues) -> FlitBits {
        let mut bits = bitvec![u64, Lsb0; 0; self.flit_bits as usize];
        for f in &self.fields {
            let value: u64 = match f.name {
                "dest" => v.destination.into(),
                "mid" => v.middle.into(),
                "path" => v.path.into(),
                "id" => v.id.into(),
                "color" => v.color.into(),
                "rank" => v.rank.into(),
                "birth" => v.birth,
                _ => v.copy.into(),
            };
            let range = f.offset as usize..(f.offset + f.width) as usize;
            bits[range].store::<u64>(value & mask(f.width));
        }
        bits
    }

    /// Reads field `name` of a header.
    pub fn read(&self, bits: &BitSlice<u64, Lsb0>, name: &str) -> Option<u64> {
        let f = self.field(name)?;
        Some(bits[f.offset as usize..(f.offset + f.width) as usize].load::<u64>())
    }

    /// The data bits of body flit `seq` of the message whose header carries `id` (already
    /// truncated to the id field): bit `b` is `id[b mod I] ^ seq[b mod 16] ^ 0xA5C3[b mod 16]`
    /// with `I` the id field's width (no id term without one). Every bit is an XOR of two
    /// wires and a constant, so a hardware source can generate it and a checker at the
    /// destination verify it from the header's id and its own flit count; neighbouring flits of
    /// a worm always differ.
    pub fn body_bits(&self, id: u32, seq: u16) -> FlitBits {
        let id_bits = self.id_bits();
        let mut bits = bitvec![u64, Lsb0; 0; self.flit_bits as usize];
        for b in 0..self.flit_bits {
            let id_bit = id_bits > 0 && (id >> (b % id_bits)) & 1 == 1;
            let seq_bit = (seq >> (b % 16)) & 1 == 1;
            let pattern_bit = (BODY_PATTERN >> (b % 16)) & 1 == 1;
            bits.set(b as usize, id_bit ^ seq_bit ^ pattern_bit);
        }
        bits
    }
}

/// The constant mixed into every body flit ([`HeaderLayout::body_bits`]).
pub const BODY_PATTERN: u16 = 0xA5C3;

/// `width` low bits set.
pub fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Bits needed to encode `count` distinct values (at least 1).
pub fn clog2(count: u64) -> u32 {
    if count <= 2 {
        1
    } else {
        64 - (count - 1).leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields_round_trip() {
        let layout = HeaderLayout::new(32, 6, true, ProtocolFields::default(), 0).unwrap();
        let v = HeaderValues {
            destination: 45,
            middle: 17,
            id: 12345,
            ..Default::default()
        };
        let bits = layout.header_bits(&v);
        assert_eq!(layout.read(&bits, "dest"), Some(45));
        assert_eq!(layout.read(&bits, "mid"), Some(17));
        assert_eq!(layout.read(&bits, "id"), Some(12345 & mask(20)));
        assert_eq!(layout.id_bits(), 20);
    }

    #[test]
    fn too_narrow_flit_names_the_needed_width() {
        let err = HeaderLayout::new(4, 6, false, ProtocolFields::default(), 0).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("flit-bits = 4") && text.contains("6..=256"),
            "{text}"
        );
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn body_bits_fill_the_width_and_mix_id_and_index() {
        let layout = HeaderLayout::new(100, 3, false, ProtocolFields::default(), 0).unwrap();
        let a = layout.body_bits(1, 1);
        assert_eq!(a.len(), 100);
        assert_ne!(a, layout.body_bits(1, 2));
        assert_ne!(a, layout.body_bits(2, 1));
        // bit 0 = id[0] ^ seq[0] ^ pattern[0], with id[0] = seq[0] = 1
        assert_eq!(a[0], BODY_PATTERN & 1 == 1);
    }

    #[test]
    fn clog2_values() {
        assert_eq!([1, 2, 3, 4, 5, 8, 9].map(clog2), [1, 1, 2, 2, 3, 3, 4]);
    }
}
