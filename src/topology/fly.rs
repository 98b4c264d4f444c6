//! The k-ary n-fly: the butterfly as interconnection-network practice builds it (the delta
//! networks of the unbuffered-switch literature, BookSim's `fly`). k^n terminals, n stages of
//! k^(n−1) radix-k switches; first-stage switch c serves input terminals `c·k … c·k + k − 1`,
//! last-stage switch c delivers to output terminals `c·k + d` through its k output ports, which
//! worms contend for like any other link. The papers' node butterfly ([CMS] §1.2) is the other
//! form: one terminal per level-0 switch, everything delivered at the last level.
//!
//! Wiring (docs/interpretations.md, 'k-ary n-fly'): write a switch's column and port as one
//! n-digit base-k word `column·k + port`, the port the low digit. The link leaving stage s on
//! output d is the word `column·k + d` with digits 0 and n − 1 − s exchanged: its high n − 1
//! digits name the next stage's switch, its low digit the in port there. Stage s routes by the
//! destination's digit n − 1 − s (most significant first), so after the last stage the word is
//! the destination. The last stage's outputs enter a level of ejection switches (one per
//! last-stage switch, port d draining into terminal `column·k + d`), the model's ejection
//! registers, as in the node butterfly.

use super::{Link, Topology, TopologyKind, assemble_shaped, check_inputs};
use crate::error::{Error, Result};

/// Largest switch radix.
pub const MAX_RADIX: u32 = 16;

/// Checks a radix: a power of two in `2..=16`.
pub fn check_radix(k: u32) -> Result<u32> {
    if !(2..=MAX_RADIX).contains(&k) || !k.is_power_of_two() {
        return Err(Error::invalid(
            "radix",
            k,
            format!("a power of two from 2 to {MAX_RADIX}"),
        ));
    }
    Ok(k.trailing_zeros())
}

/// Checks a k-ary n-fly's size: `k` a radix ([`check_radix`]), `inputs` a power of `k` of at
/// most 2^20, at least `k`. Returns n, the number of stages.
pub fn check_kary_fly(inputs: u32, k: u32) -> Result<u32> {
    let digit = check_radix(k)?;
    let bits = check_inputs(inputs)?;
    if !bits.is_multiple_of(digit) || inputs < k {
        return Err(Error::invalid(
            "inputs",
            inputs,
            format!("a power of the radix {k} (k^n terminals, n ≥ 1 stages)"),
        ));
    }
    Ok(bits / digit)
}

/// The k-ary n-fly with `inputs` terminals (a power of `k`, at least `k`): n = log_k inputs
/// stages of `inputs / k` switches of radix `k`, then the ejection level.
pub fn kary_fly(inputs: u32, k: u32) -> Result<Topology> {
    let stages = check_kary_fly(inputs, k)?;
    let digit = k.trailing_zeros();
    let width = inputs / k;
    let mut links = Vec::with_capacity((stages * inputs) as usize);
    // The in port each link should get: the word's new low digit.
    let mut ports = Vec::with_capacity(links.capacity());
    for stage in 0..stages {
        // Exchanging digits 0 and `swap` of the word column·k + d.
        let shift = (stages - 1 - stage) * digit;
        for column in 0..width {
            for d in 0..k {
                let word = column * k + d;
                let high = (word >> shift) & (k - 1);
                let swapped = (word & !((k - 1) << shift) & !(k - 1)) | (d << shift) | high;
                links.push(Link {
                    tail: stage * width + column,
                    head: (stage + 1) * width + swapped / k,
                    direction: d as u8,
                    lane: 0,
                    head_port: 0,
                });
                ports.push(swapped % k);
            }
        }
    }
    // Links are generated in (tail, direction) order, the order `assemble_shaped` numbers head
    // ports in: the tails of a switch differ only in the digit that becomes its in port.
    let topo = assemble_shaped(TopologyKind::KaryFly, width, stages + 1, 1, k, k, links);
    debug_assert!(
        topo.links
            .iter()
            .zip(&ports)
            .all(|(l, &p)| u32::from(l.head_port) == p)
    );
    Ok(topo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyKind;

    #[test]
    fn counts_match_the_k_ary_n_fly() {
        for (inputs, k, stages) in [(2, 2, 1), (8, 2, 3), (16, 4, 2), (64, 4, 3), (256, 16, 2)] {
            let t = kary_fly(inputs, k).unwrap();
            assert_eq!(t.kind, TopologyKind::KaryFly);
            assert_eq!(t.terminals(), inputs);
            assert_eq!(t.n, inputs / k);
            assert_eq!(t.levels, stages + 1);
            assert_eq!(t.ports(), k);
            assert_eq!(t.links.len() as u32, stages * inputs);
        }
    }

    #[test]
    fn digit_routing_reaches_every_destination() {
        for (inputs, k) in [(8, 2), (32, 2), (16, 4), (64, 4), (64, 8)] {
            let t = kary_fly(inputs, k).unwrap();
            for src in 0..inputs {
                for dst in 0..inputs {
                    let (mut node, _) = t.injection_port(src);
                    let mut port = 0;
                    for level in 0..t.last_level() {
                        let dir = t.direction(level, dst, 0);
                        let link = t.links[t.out_link(node, dir, 0) as usize];
                        node = link.head;
                        port = u32::from(link.head_port);
                    }
                    assert_eq!(
                        t.ejection_terminal(node, port),
                        dst,
                        "{src} -> {dst}, k {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_stage_is_a_perfect_matching_of_ports() {
        let t = kary_fly(64, 4).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for l in &t.links {
            assert!(seen.insert((l.head, l.head_port)), "{l:?}");
        }
        assert_eq!(seen.len(), t.links.len());
    }

    #[test]
    fn bad_radix_or_size_is_refused() {
        assert!(kary_fly(16, 3).is_err());
        assert!(kary_fly(16, 32).is_err());
        assert!(kary_fly(32, 4).is_err());
        assert!(kary_fly(2, 4).is_err());
    }
}
