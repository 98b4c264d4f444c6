//! The bit-serial vertex switches at register level ([BB] §3.3): three batches from the root
//! of N = 16 traced by hand, the cycle timeline of their first conflict at vertex <2,1,0>, and
//! the head latency of three cycles per level.

use flitforge::pruned::frame::{FrameFormat, Record};
use flitforge::pruned::switch::{Inputs, PrunedNet};
use flitforge::topology::pruned::{PrunedButterfly, Vertex};

/// Injects one expansion at the root (stage 0, vertex `h` input 0 carries destination
/// `dests[h]` with key `h`) and returns, per message, (landing leaf, active, cycle its head
/// reached the leaf), plus a per-cycle trace of `watch`'s registers.
fn expand_from_root(
    net: &mut PrunedNet,
    dests: &[u32],
    watch: Vertex,
) -> (Vec<(u32, bool, u64)>, Vec<String>) {
    let g = net.graph.clone();
    let f = net.format;
    let frames: Vec<Vec<bool>> = dests
        .iter()
        .enumerate()
        .map(|(h, &d)| {
            f.expansion_frame(
                0,
                h as u32,
                Record {
                    destination: d,
                    body: h as u64,
                },
            )
        })
        .collect();
    let len = f.expansion_len(g.levels()) as usize;
    let mut rx: Vec<[Vec<bool>; 2]> = vec![[Vec::new(), Vec::new()]; g.leaves() as usize];
    let mut head_at = vec![[0u64; 2]; g.leaves() as usize];
    let mut landed = vec![(u32::MAX, false, 0); dests.len()];
    let mut trace = Vec::new();
    let start = net.cycle();
    for t in 0..200usize {
        let mut inputs: Inputs = net.idle_inputs(0);
        for (h, bits) in frames.iter().enumerate() {
            inputs.inject[g.id(g.root(h as u32))][0] = bits.get(t).copied().unwrap_or(false);
        }
        net.step(&inputs);
        let r = net.regs[g.id(watch)];
        trace.push(format!(
            "estate={} cbit={} sel={}{} dn={}{}",
            r.estate,
            u8::from(r.cbit),
            u8::from(r.sel[0]),
            u8::from(r.sel[1]),
            u8::from(r.dn[0]),
            u8::from(r.dn[1])
        ));
        for leaf in 0..g.leaves() {
            let wires = net.leaf_inputs(leaf);
            for x in 0..2 {
                let buf = &mut rx[leaf as usize][x];
                if buf.is_empty() && wires[x] {
                    head_at[leaf as usize][x] = net.cycle() - start;
                }
                if !buf.is_empty() || wires[x] {
                    buf.push(wires[x]);
                    if buf.len() == len {
                        let p = f.decode_landed(buf);
                        landed[p.record.body as usize] =
                            (leaf, p.active, head_at[leaf as usize][x]);
                        buf.clear();
                    }
                }
            }
        }
        if t > 10 && net.idle() {
            break;
        }
    }
    (landed, trace)
}

fn net16() -> PrunedNet {
    let g = PrunedButterfly::new(16).unwrap();
    let f = FrameFormat {
        log_n: 4,
        body_bits: 8,
    };
    PrunedNet::new(g, f)
}

/// Batches [5,5,5,7], [8,9,9,9], [9,9,9,9] from the root of N = 16 land where model B says,
/// with the direction bits carried from batch to batch.
#[test]
fn three_batches_from_the_root_of_16_land_as_model_b_says() {
    let mut net = net16();
    let watch = Vertex {
        level: 2,
        node: 1,
        index: 0,
    };
    let leaves = |v: &[(u32, bool, u64)]| v.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
    let (a, _) = expand_from_root(&mut net, &[5, 5, 5, 7], watch);
    assert_eq!(leaves(&a), [(5, true), (5, true), (6, false), (7, true)]);
    let v330 = net.graph.id(Vertex {
        level: 3,
        node: 3,
        index: 0,
    });
    assert!(net.regs[v330].dir, "<3,3,0> toggled to right");
    let (b, _) = expand_from_root(&mut net, &[8, 9, 9, 9], watch);
    assert_eq!(leaves(&b), [(8, true), (9, true), (10, false), (10, false)]);
    let (c, _) = expand_from_root(&mut net, &[9, 9, 9, 9], watch);
    assert_eq!(leaves(&c), [(9, true), (9, true), (11, false), (11, false)]);
    assert_eq!(net.errors(), (0, 0));
}

/// The first conflict's timeline at <2,1,0> (its t0 is cycle 6 = 3 levels × 2 below the root):
/// COMPARE on the equal first bit with the contested port left, identical bits down both
/// edges, and input 0 wins when the key bits differ at t0 + 4.
#[test]
fn conflict_timeline_at_vertex_2_1_0() {
    let mut net = net16();
    let watch = Vertex {
        level: 2,
        node: 1,
        index: 0,
    };
    let (landed, trace) = expand_from_root(&mut net, &[5, 5, 5, 7], watch);
    let t0 = 6; // trace[c] = registers after cycle c
    assert_eq!(
        trace[t0 + 2],
        "estate=3 cbit=0 sel=00 dn=11",
        "t0+2: V on both outputs"
    );
    assert_eq!(
        trace[t0 + 3],
        "estate=3 cbit=0 sel=00 dn=10",
        "t0+3: A = 1 left, 0 right"
    );
    assert_eq!(
        trace[t0 + 4],
        "estate=2 cbit=0 sel=01 dn=11",
        "t0+4: in0 wins left"
    );
    // Three cycles of head latency per level: heads reach the leaves 3·L cycles after
    // injection (counting the injection cycle as 1).
    for (leaf, _, head) in landed {
        assert_eq!(head, 3 * 4, "leaf {leaf}");
    }
}
