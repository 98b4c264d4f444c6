//! Proper edge colourings of bipartite multigraphs (König's theorem): a message set of
//! degree d splits into d partial permutations. The sorting fat-tree routes its colour classes
//! one after the other ([BB] §4.3); Upfal's algorithm colours its splitters' links ([LM] §II-A).

/// A proper edge colouring of the bipartite multigraph sources → destinations with
/// `d` colours (König; alternating-path recolouring): each colour class is a partial
/// permutation.
pub fn colour(n: u32, messages: &[(u32, u32)]) -> Vec<u32> {
    let n = n as usize;
    let d = crate::traffic::degree(n as u32, messages.iter().copied()) as usize;
    // at[side][vertex][colour] = message using that colour there.
    let mut at = [vec![vec![usize::MAX; d]; n], vec![vec![usize::MAX; d]; n]];
    let mut colours = vec![u32::MAX; messages.len()];
    for (e, &(s, t)) in messages.iter().enumerate() {
        let (s, t) = (s as usize, t as usize);
        // With d colours and degree d, a new edge always finds a free colour at each end.
        let free = |v: &Vec<usize>| v.iter().position(|&x| x == usize::MAX).unwrap_or(d - 1);
        let a = free(&at[0][s]);
        let b = free(&at[1][t]);
        if at[1][t][a] != usize::MAX {
            // Swap colours a and b along the path from t that alternates a, b, a, …
            let mut path = Vec::new();
            let (mut side, mut v, mut c) = (1usize, t, a);
            while at[side][v][c] != usize::MAX {
                let m = at[side][v][c];
                path.push(m);
                let (ms, mt) = (messages[m].0 as usize, messages[m].1 as usize);
                let other = if side == 1 { ms } else { mt };
                side = 1 - side;
                v = other;
                c = if c == a { b } else { a };
            }
            for &m in &path {
                let (ms, mt) = (messages[m].0 as usize, messages[m].1 as usize);
                let old = colours[m] as usize;
                if at[0][ms][old] == m {
                    at[0][ms][old] = usize::MAX;
                }
                if at[1][mt][old] == m {
                    at[1][mt][old] = usize::MAX;
                }
            }
            for &m in &path {
                let (ms, mt) = (messages[m].0 as usize, messages[m].1 as usize);
                let new = if colours[m] as usize == a { b } else { a };
                colours[m] = new as u32;
                at[0][ms][new] = m;
                at[1][mt][new] = m;
            }
        }
        colours[e] = a as u32;
        at[0][s][a] = e;
        at[1][t][a] = e;
    }
    colours
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::Traffic;

    #[test]
    fn colouring_is_proper_with_d_colours() {
        for q in [1u32, 2, 4] {
            let m: Vec<(u32, u32)> = Traffic::Uniform { q }
                .messages(64, 0, u64::from(q))
                .unwrap()
                .iter()
                .map(|x| (x.source, x.destination))
                .collect();
            let c = colour(64, &m);
            let mut seen = std::collections::HashSet::new();
            for (e, &(s, t)) in m.iter().enumerate() {
                assert!(seen.insert((0, s, c[e])) && seen.insert((1, t, c[e])));
            }
        }
    }
}
