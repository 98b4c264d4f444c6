//! Graph checks of the pruned butterfly ([BB] §3.1) and of its load factors ([BB] §2).

use std::collections::{HashMap, HashSet};

use flitforge::topology::pruned::{PrunedButterfly, Vertex};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn graph(n: u32) -> PrunedButterfly {
    PrunedButterfly::new(n).unwrap()
}

fn v(level: u32, node: u32, index: u32) -> Vertex {
    Vertex { level, node, index }
}

fn each<T>(levels: std::ops::RangeInclusive<u32>, f: impl Fn(u32) -> T) -> Vec<T> {
    levels.map(f).collect()
}

/// `spread(k)`: bit `t` of `k` moves to bit `2t`.
fn spread(k: u32) -> u32 {
    (0..16).map(|t| ((k >> t) & 1) << (2 * t)).sum()
}

/// `interleave(ρ, κ)`: row bit first, the higher bit of each pair (interpretation: 'Mesh-of-trees
/// embedding', docs/interpretations.md).
fn interleave(row: u32, col: u32) -> u32 {
    (spread(row) << 1) | spread(col)
}

/// [BB] §3.1: E is the edge set (interpretation: 'Edge set', docs/interpretations.md),
/// `|V| = 4N − 3√N`, `|E| = 6N − 6√N`, and `|c(i,j)| = cap_i = √N·2^(−⌊(i−1)/2⌋)`.
#[test]
fn counts_and_channel_capacities() {
    for n in [16, 64, 256, 1024] {
        let g = graph(n);
        let (l, s) = (g.levels(), 1u32 << (n.trailing_zeros() / 2));
        assert_eq!(g.vertex_count(), 4 * n as usize - 3 * s as usize, "N = {n}");
        assert_eq!(g.edge_count(), 6 * n as usize - 6 * s as usize, "N = {n}");
        let sizes: usize = (0..=l).map(|i| g.level_vertices(i).count()).sum();
        assert_eq!(sizes, g.vertex_count());
        let mut expected = Vec::new(); // §1.2 literally, by child id then up-port
        for (i, j) in (1..=l).flat_map(|i| (0..1 << i).map(move |j| (i, j))) {
            for k in 0..s >> (i / 2) {
                expected.push((v(i, j, k), v(i - 1, j / 2, k)));
                if i.is_multiple_of(2) {
                    expected.push((v(i, j, k), v(i - 1, j / 2, k + (s >> (i / 2)))));
                }
            }
        }
        let edges = g.edges();
        assert_eq!(edges, expected, "N = {n}: E differs from the edge set");
        let mut channel: HashMap<(u32, u32), u32> = HashMap::new();
        for (c, _) in &edges {
            *channel.entry((c.level, c.node)).or_default() += 1;
        }
        assert_eq!(channel.len(), (1 << (l + 1)) - 2);
        for i in 1..=l {
            assert_eq!(g.capacity(i), s >> ((i - 1) / 2), "cap_{i}, N = {n}");
            for j in 0..1 << i {
                assert_eq!(channel[&(i, j)], g.capacity(i), "|c({i},{j})|, N = {n}");
            }
        }
    }
    // The §1.8 table for N = 64, and the N = 256 reference line.
    let g = graph(64);
    let edges = g.edges();
    let per_level = |i| edges.iter().filter(|(c, _)| c.level == i).count();
    assert_eq!(each(0..=6, |i| g.width(i)), [8, 8, 4, 4, 2, 2, 1]);
    let size = |i| g.level_vertices(i).count();
    assert_eq!(each(0..=6, size), [8, 16, 16, 32, 32, 64, 64]);
    assert_eq!(each(1..=6, |i| g.capacity(i)), [8, 8, 4, 4, 2, 2]);
    assert_eq!(each(1..=6, per_level), [16, 32, 32, 64, 64, 128]);
    assert_eq!((g.vertex_count(), g.edge_count()), (232, 336));
    let g = graph(256);
    assert_eq!((g.vertex_count(), g.edge_count()), (976, 1440));
    assert_eq!(each(1..=8, |i| g.capacity(i)), [16, 16, 8, 8, 4, 4, 2, 2]);
}

/// The vertex set of [BB] §3.1: ids run level by level and round-trip; N is a power of 4 ≤ 2^16.
#[test]
fn ids_and_constructor() {
    for n in [16, 64, 256, 1024] {
        let g = graph(n);
        let all = (0..=g.levels()).flat_map(|i| g.level_vertices(i));
        let ids: Vec<usize> = all.map(|x| g.id(x)).collect();
        assert_eq!(ids, (0..g.vertex_count()).collect::<Vec<_>>());
        assert!(ids.iter().all(|&id| g.id(g.vertex(id)) == id));
    }
    for bad in [0, 1, 4, 8, 32, 128, 1 << 17, 1 << 18, u32::MAX] {
        assert!(PrunedButterfly::new(bad).is_err(), "N = {bad} accepted");
    }
    assert_eq!(graph(1 << 16).roots(), 256);
}

const N16_EDGES: &str = "
    c(1,0): <1,0,0>-<0,0,0> <1,0,1>-<0,0,1> <1,0,2>-<0,0,2> <1,0,3>-<0,0,3>
    c(1,1): <1,1,0>-<0,0,0> <1,1,1>-<0,0,1> <1,1,2>-<0,0,2> <1,1,3>-<0,0,3>
    c(2,0): <2,0,0>-<1,0,0> <2,0,0>-<1,0,2> <2,0,1>-<1,0,1> <2,0,1>-<1,0,3>
    c(2,1): <2,1,0>-<1,0,0> <2,1,0>-<1,0,2> <2,1,1>-<1,0,1> <2,1,1>-<1,0,3>
    c(2,2): <2,2,0>-<1,1,0> <2,2,0>-<1,1,2> <2,2,1>-<1,1,1> <2,2,1>-<1,1,3>
    c(2,3): <2,3,0>-<1,1,0> <2,3,0>-<1,1,2> <2,3,1>-<1,1,1> <2,3,1>-<1,1,3>
    c(3,0): <3,0,0>-<2,0,0> <3,0,1>-<2,0,1>  c(3,1): <3,1,0>-<2,0,0> <3,1,1>-<2,0,1>
    c(3,2): <3,2,0>-<2,1,0> <3,2,1>-<2,1,1>  c(3,3): <3,3,0>-<2,1,0> <3,3,1>-<2,1,1>
    c(3,4): <3,4,0>-<2,2,0> <3,4,1>-<2,2,1>  c(3,5): <3,5,0>-<2,2,0> <3,5,1>-<2,2,1>
    c(3,6): <3,6,0>-<2,3,0> <3,6,1>-<2,3,1>  c(3,7): <3,7,0>-<2,3,0> <3,7,1>-<2,3,1>
    c(4,0): <4,0,0>-<3,0,0> <4,0,0>-<3,0,1>  c(4,1): <4,1,0>-<3,0,0> <4,1,0>-<3,0,1>
    c(4,2): <4,2,0>-<3,1,0> <4,2,0>-<3,1,1>  c(4,3): <4,3,0>-<3,1,0> <4,3,0>-<3,1,1>
    c(4,4): <4,4,0>-<3,2,0> <4,4,0>-<3,2,1>  c(4,5): <4,5,0>-<3,2,0> <4,5,0>-<3,2,1>
    c(4,6): <4,6,0>-<3,3,0> <4,6,0>-<3,3,1>  c(4,7): <4,7,0>-<3,3,0> <4,7,0>-<3,3,1>
    c(4,8): <4,8,0>-<3,4,0> <4,8,0>-<3,4,1>  c(4,9): <4,9,0>-<3,4,0> <4,9,0>-<3,4,1>
    c(4,10): <4,10,0>-<3,5,0> <4,10,0>-<3,5,1>  c(4,11): <4,11,0>-<3,5,0> <4,11,0>-<3,5,1>
    c(4,12): <4,12,0>-<3,6,0> <4,12,0>-<3,6,1>  c(4,13): <4,13,0>-<3,6,0> <4,13,0>-<3,6,1>
    c(4,14): <4,14,0>-<3,7,0> <4,14,0>-<3,7,1>  c(4,15): <4,15,0>-<3,7,0> <4,15,0>-<3,7,1>";

const N16_ROWS: &str = "
    <0,0,0>r0 <0,0,1>r1 <0,0,2>r4 <0,0,3>r5
    <1,0,0>r0 <1,0,1>r1 <1,0,2>r4 <1,0,3>r5  <1,1,0>r8 <1,1,1>r9 <1,1,2>r12 <1,1,3>r13
    <2,0,0>r0 <2,0,1>r1  <2,1,0>r4 <2,1,1>r5  <2,2,0>r8 <2,2,1>r9  <2,3,0>r12 <2,3,1>r13
    <3,0,0>r0 <3,0,1>r1  <3,1,0>r2 <3,1,1>r3  <3,2,0>r4 <3,2,1>r5  <3,3,0>r6 <3,3,1>r7
    <3,4,0>r8 <3,4,1>r9  <3,5,0>r10 <3,5,1>r11  <3,6,0>r12 <3,6,1>r13  <3,7,0>r14 <3,7,1>r15";

/// [BB] §3.1, Figure 1: every N = 16 edge channel by channel, every
/// butterfly row `rX`, and the Figure 1 path from leaf 10 to root 2.
#[test]
fn n16_worked_example() {
    let g = graph(16);
    let (mut expected, mut chan) = (Vec::new(), "");
    for token in N16_EDGES.split_whitespace() {
        match token.strip_suffix(':') {
            Some(label) => chan = label,
            None => expected.push((chan.to_string(), token.to_string())),
        }
    }
    let named =
        |(c, p): (Vertex, Vertex)| (format!("c({},{})", c.level, c.node), format!("{c}-{p}"));
    let actual: Vec<_> = g.edges().into_iter().map(named).collect();
    assert_eq!((actual.len(), actual), (72, expected));
    let name = |id| (g.vertex(id).to_string(), g.vertex(id));
    let by_name: HashMap<String, Vertex> = (0..g.vertex_count()).map(name).collect();
    let tokens = N16_ROWS.split_whitespace();
    let rows: Vec<(&str, &str)> = tokens.filter_map(|t| t.split_once('r')).collect();
    assert_eq!(rows.len(), 36);
    for (name, row) in rows {
        assert_eq!(g.butterfly_row(by_name[name]).to_string(), row, "{name}");
    }
    assert!((0..16).all(|l| g.butterfly_row(g.leaf(l)) == l));
    let path = g.path_up(10, 0, 2);
    let figure_1 = [v(4, 10, 0), v(3, 5, 0), v(2, 2, 0), v(1, 1, 2), v(0, 0, 2)];
    let rows: Vec<u32> = path.iter().map(|&x| g.butterfly_row(x)).collect();
    assert_eq!((path, rows), (figure_1.to_vec(), vec![10, 10, 8, 12, 4]));
}

/// The unique leaf–root path of [BB] §3.1: for every leaf `l` and root `r` the path formula
/// uses edges of E, and exactly one monotone path leads from `l` to each vertex of each
/// ancestor.
#[test]
fn unique_leaf_root_paths() {
    for n in [16, 64, 256] {
        let g = graph(n);
        let l = g.levels();
        let edges: HashSet<(Vertex, Vertex)> = g.edges().into_iter().collect();
        let mut parents = vec![Vec::new(); g.vertex_count()];
        for &(c, p) in &edges {
            parents[g.id(c)].push(g.id(p));
        }
        for leaf in 0..n {
            // Count monotone paths from the leaf by dynamic programming, deepest level first.
            let mut count = vec![0u64; g.vertex_count()];
            count[g.id(g.leaf(leaf))] = 1;
            for id in (g.level_offset(1)..g.vertex_count()).rev() {
                for &p in &parents[id] {
                    count[p] += count[id];
                }
            }
            for (id, &paths) in count.iter().enumerate() {
                let x = g.vertex(id);
                let ancestor = x.node == leaf >> (l - x.level);
                assert_eq!(paths, u64::from(ancestor), "N = {n}, leaf {leaf} to {x}");
            }
            for r in 0..g.roots() {
                let path = g.path_up(leaf, 0, r);
                assert_eq!((path[0], path[l as usize]), (g.leaf(leaf), g.root(r)));
                let mut x = g.root(r); // going down, level i reads leaf bit L − i
                for i in 1..=l {
                    let (c, p) = (g.path_vertex(leaf, r, i), g.path_vertex(leaf, r, i - 1));
                    assert!(edges.contains(&(c, p)), "{leaf}->{r}: {c}-{p}");
                    assert_eq!(path[(l - i) as usize], c);
                    if i.is_multiple_of(2) {
                        // Going up, even levels consume the root index LSB first.
                        assert_eq!(g.up(c, (r >> (l / 2 - i / 2)) & 1), Some(p));
                    }
                    x = g.down(x, (leaf >> (l - i)) & 1).unwrap();
                    assert_eq!(x, c);
                }
            }
        }
        // down / up / up_port_towards agree with each other and with E.
        for x in (0..g.vertex_count()).map(|id| g.vertex(id)) {
            assert_eq!((g.up(x, g.up_degree(x.level)), g.down(x, 2)), (None, None));
            for o in (0..2).filter(|_| x.level < l) {
                let c = g.down(x, o).unwrap();
                assert_eq!((c.level, c.node), (x.level + 1, 2 * x.node + o));
                assert_eq!(g.up(c, g.up_port_towards(x)), Some(x), "{x}");
                assert!(edges.contains(&(c, x)));
            }
        }
        assert_eq!(g.down(g.leaf(0), 0), None);
        for &(c, p) in &edges {
            assert_eq!(g.down(p, c.node & 1), Some(c), "{c}-{p}");
        }
    }
}

/// [BB] §3.1, Figure 2 (a subgraph of the butterfly, in [LM]'s labels): the row map is
/// injective per level, each edge between levels i−1 and i is straight or flips bit L−i,
/// leaves ↦ l, roots ↦ spread(r).
#[test]
fn butterfly_embedding() {
    for n in [16, 64, 256] {
        let g = graph(n);
        let l = g.levels();
        for i in 0..=l {
            let rows: HashSet<u32> = g.level_vertices(i).map(|x| g.butterfly_row(x)).collect();
            assert_eq!(rows.len(), g.level_vertices(i).count(), "level {i}");
            assert!(rows.iter().all(|&r| r < n));
        }
        for x in (0..g.vertex_count()).map(|id| g.vertex(id)) {
            let row = (x.node << (l - x.level)) + spread(x.index);
            assert_eq!(g.butterfly_row(x), row, "N = {n}: {x}");
        }
        for (c, p) in g.edges() {
            let (rc, rp) = (g.butterfly_row(c), g.butterfly_row(p));
            let flip = rp ^ (1 << (l - c.level));
            assert!(rc == rp || rc == flip, "N = {n}: {c}-{p} ↦ {rc}-{rp}");
        }
        assert!((0..n).all(|x| g.butterfly_row(g.leaf(x)) == x));
        assert!((0..g.roots()).all(|r| g.butterfly_row(g.root(r)) == spread(r)));
    }
}

/// [BB] §3.1 (the pruned butterfly embeds the mesh of trees with constant dilation and load):
/// the √N × √N mesh of trees embeds with dilation ≤ 2 and load ≤ 2.
#[test]
fn mesh_of_trees_embedding() {
    for n in [16, 64, 256] {
        let g = graph(n);
        let (l, s) = (g.levels(), g.roots());
        // Row tree of row ρ, node over columns [κ0, κ0 + 2^a); a = 0 is the MOT leaf (ρ, κ0).
        let row = |rho, a, k0: u32| v(l - 2 * a, interleave(rho >> a, k0 >> a), rho % (1u32 << a));
        // Column tree of column κ, node over rows [ρ0, ρ0 + 2^a).
        let col = |kap, a, r0: u32| v(l - 2 * a, interleave(r0 >> a, kap >> a), kap % (1u32 << a));
        let mut adj = vec![HashSet::new(); g.vertex_count()];
        for (c, p) in g.edges() {
            adj[g.id(c)].insert(g.id(p));
            adj[g.id(p)].insert(g.id(c));
        }
        let mut load: HashMap<Vertex, u32> = HashMap::new();
        for (rho, kap) in (0..s).flat_map(|rho| (0..s).map(move |kap| (rho, kap))) {
            assert_eq!(row(rho, 0, kap), col(kap, 0, rho));
            assert_eq!(row(rho, 0, kap), g.leaf(interleave(rho, kap)));
            *load.entry(row(rho, 0, kap)).or_default() += 1;
        }
        assert_eq!(load.len(), n as usize);
        for (t, a) in (0..s).flat_map(|t| (1..=l / 2).map(move |a| (t, a))) {
            for x0 in (0..s).step_by(1 << a) {
                let x1 = x0 + (1 << (a - 1));
                let row_edges = (row(t, a, x0), [row(t, a - 1, x0), row(t, a - 1, x1)]);
                let col_edges = (col(t, a, x0), [col(t, a - 1, x0), col(t, a - 1, x1)]);
                for (parent, children) in [row_edges, col_edges] {
                    assert_eq!(g.vertex(g.id(parent)), parent);
                    *load.entry(parent).or_default() += 1;
                    let up = &adj[g.id(parent)];
                    for child in children {
                        let (id, down) = (g.id(child), &adj[g.id(child)]);
                        let near = up.contains(&id) || !up.is_disjoint(down);
                        assert!(near, "N = {n}: MOT edge {parent}-{child} has dilation > 2");
                    }
                }
            }
        }
        let mot_nodes = n + 2 * s * (s - 1); // leaves + internal nodes of 2√N trees
        assert_eq!(load.values().sum::<u32>(), mot_nodes);
        assert_eq!(load.values().max(), Some(&2), "N = {n}: MOT load");
    }
}

/// Load factors by the literal definition of [BB] §2 over channel cuts (both directions).
fn reference_load(g: &PrunedButterfly, msgs: &[(u32, u32)]) -> (f64, f64) {
    let (l, mut cut, mut dir) = (g.levels(), 0.0f64, 0.0f64);
    for (i, j) in (1..=l).flat_map(|i| (0..1u32 << i).map(move |j| (i, j))) {
        let under = |t: u32| t >> (l - i) == j;
        let up = msgs.iter().filter(|&&(s, d)| under(s) && !under(d)).count() as f64;
        let down = msgs.iter().filter(|&&(s, d)| !under(s) && under(d)).count() as f64;
        cut = cut.max((up + down) / f64::from(g.capacity(i)));
        dir = dir.max(up.max(down) / f64::from(g.capacity(i)));
    }
    (cut, dir)
}

/// [BB] §2 (interpretation: 'Load factor', docs/interpretations.md): `load_factors` by hand for
/// N = 16 and against the literal definition on random sets, `λ_dir ≤ λ_cut ≤ 2·λ_dir`; `peak`
/// is the LCA level ([BB] §3.2).
#[test]
fn load_factors_small_and_random() {
    let g = graph(16);
    let lf = |m: &[(u32, u32)]| {
        let f = g.load_factors(m.iter().copied());
        (f.cut, f.dir)
    };
    assert_eq!((lf(&[]), lf(&[(3, 3)])), ((0.0, 0.0), (0.0, 0.0)));
    // 1 message on leaf and level-3 channels (cap 2), level-1/2 channels have cap 4.
    assert_eq!(lf(&[(0, 15)]), (0.5, 0.5));
    assert_eq!(lf(&[(0, 1)]), (0.5, 0.5));
    assert_eq!(lf(&[(0, 15), (15, 0)]), (1.0, 0.5));
    // Left half to right half: 8 messages up the cap-4 channel below the root.
    let halves: Vec<_> = (0..8).map(|x| (x, x + 8)).collect();
    assert_eq!(lf(&halves), (2.0, 2.0));
    // Reversal: both root channels carry 8 up and 8 down.
    let reversal: Vec<_> = (0..16).map(|x| (x, 15 - x)).collect();
    assert_eq!(lf(&reversal), (4.0, 2.0));
    // Four messages out of leaves 0–1: 4 on the cap-2 channel above node (3,0).
    assert_eq!(lf(&[(0, 8), (0, 9), (1, 10), (1, 11)]), (2.0, 2.0));

    let mut rng = ChaCha8Rng::seed_from_u64(31);
    for n in [16, 64, 256] {
        let g = graph(n);
        let l = g.levels();
        for (x, y) in (0..n).flat_map(|x| (0..n).map(move |y| (x, y))) {
            let p = (0..=l).rev().find(|&p| x >> (l - p) == y >> (l - p));
            assert_eq!(Some(g.peak(x, y)), p, "peak({x},{y}), N = {n}");
        }
        for _ in 0..50 {
            let len = rng.random_range(1..3 * n as usize);
            let mut end = || rng.random_range(0..n);
            let msgs: Vec<(u32, u32)> = (0..len).map(|_| (end(), end())).collect();
            let f = g.load_factors(msgs.iter().copied());
            assert_eq!((f.cut, f.dir), reference_load(&g, &msgs), "{msgs:?}");
            assert!(f.dir <= f.cut && f.cut <= 2.0 * f.dir, "N = {n}: {f:?}");
        }
    }
}

/// [BB] §1 (a random permutation's expected λ is Ω(√N)): over 100 random permutations, mean
/// `λ_cut ≥ 0.9·√N/2`.
#[test]
fn random_permutation_load_is_order_sqrt_n() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1e);
    for n in [64, 256] {
        let g = graph(n);
        let mut perm: Vec<u32> = (0..n).collect();
        let mut total = 0.0;
        for _ in 0..100 {
            perm.shuffle(&mut rng);
            let f = g.load_factors(perm.iter().enumerate().map(|(s, &d)| (s as u32, d)));
            assert!(f.dir <= f.cut && f.cut <= 2.0 * f.dir);
            total += f.cut;
        }
        let (mean, bound) = (total / 100.0, 0.9 * f64::from(g.roots()) / 2.0);
        assert!(mean >= bound, "N = {n}: mean λ_cut {mean} < {bound}");
    }
}
