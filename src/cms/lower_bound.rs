//! The lower-bound instance of [CMS] Theorem 2.2.1: a network and paths of congestion C and
//! dilation D on which every schedule of L-flit worms with B virtual channels needs at least
//! (L − D)·M/B flit steps, Ω(L·C·D^(1/B)/B).
//!
//! M' base messages; for every set S of B + 1 of them a *primary* link `a_S → b_S` that exactly
//! those B + 1 cross. Base message i visits the sets containing it in lexicographic order
//! S_1, …, S_K (K = binom(M' − 1, B)), joined by *secondary* links `b_{S_k} → a_{S_(k+1)}`
//! created as needed (the paper joins every primary end-point to every other; only the links
//! some path uses are built). M' is the largest base with 2K − 1 ≤ D, so paths have 2K − 1
//! links. Every base message is replicated C/(B + 1) times: M = C·M'/(B + 1) messages and
//! congestion C. The argument: a message *progresses* in a step when one of its first L − D
//! flits reaches its destination, which needs its whole path; any B + 1 messages share a
//! primary link, so at most B progress per step, and each needs L − D such steps.

use super::Problem;
use crate::error::{Error, Result};
use crate::topology::graph::{Graph, Paths};
use std::collections::HashMap;

/// Largest number of virtual channels the generator takes.
pub const MAX_B: u32 = 8;
/// Largest dilation the generator takes.
pub const MAX_D: u32 = 4096;
/// Largest congestion the generator takes.
pub const MAX_C: u32 = 4096;

/// A generated instance.
#[derive(Clone, Debug)]
pub struct LowerBound {
    pub problem: Problem,
    /// Base messages M'.
    pub base: u32,
    pub vcs: u32,
    /// Copies of each base message, C/(B + 1).
    pub copies: u32,
}

fn binom(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// M' of [CMS] Theorem 2.2.1: the integer with 2·binom(M' − 1, B) − 1 ≤ D < 2·binom(M', B) − 1.
pub fn base_messages(b: u32, d: u32) -> u32 {
    let (b, d) = (u64::from(b), u64::from(d));
    let mut m = b + 1;
    while 2 * binom(m, b) - 1 <= d {
        m += 1;
    }
    m as u32
}

impl LowerBound {
    /// The bound (L − D)·M/B for `flits`-flit worms (0 when L ≤ D).
    pub fn bound(&self, flits: u32) -> f64 {
        let d = u64::from(self.problem.dilation());
        let l = u64::from(flits);
        l.saturating_sub(d) as f64 * self.problem.messages() as f64 / f64::from(self.vcs)
    }
}

/// The instance for `b` virtual channels, congestion `c` (a multiple of B + 1) and dilation at
/// most `d` (at least B + 1).
pub fn generate(b: u32, c: u32, d: u32) -> Result<LowerBound> {
    if !(1..=MAX_B).contains(&b) {
        return Err(Error::invalid("vcs", b, format!("1..={MAX_B}")));
    }
    if !(b + 1..=MAX_D).contains(&d) {
        return Err(Error::invalid(
            "dilation",
            d,
            format!("{}..={MAX_D} (at least B + 1: [CMS] Theorem 2.2.1)", b + 1),
        ));
    }
    if !(b + 1..=MAX_C).contains(&c) || !c.is_multiple_of(b + 1) {
        return Err(Error::invalid(
            "congestion",
            c,
            format!(
                "a multiple of B + 1 = {} in {}..={MAX_C} (each base message is copied C/(B + 1) times)",
                b + 1,
                b + 1
            ),
        ));
    }
    let base = base_messages(b, d);
    let k = b as usize + 1;
    let primaries = binom(u64::from(base), u64::from(b) + 1);
    let per_message = binom(u64::from(base) - 1, u64::from(b));
    let copies = c / (b + 1);
    // Sizes before anything is built: switches, messages and the links of all paths.
    let messages = u64::from(base) * u64::from(copies);
    let path_links = messages.saturating_mul(2 * per_message - 1);
    if 2 * primaries > u64::from(crate::topology::graph::MAX_NODES)
        || path_links > super::MAX_PATH_LINKS as u64
    {
        return Err(Error::invalid(
            "lower-bound instance",
            format!(
                "C = {c}, D = {d}, B = {b} ({} switches, {path_links} path links)",
                2 * primaries
            ),
            format!(
                "at most {} switches and {} path links in all (a smaller C or D)",
                crate::topology::graph::MAX_NODES,
                super::MAX_PATH_LINKS
            ),
        ));
    }
    // Every (B + 1)-subset of the base messages, in lexicographic order.
    let mut subsets: Vec<Vec<u32>> = Vec::with_capacity(primaries as usize);
    let mut s: Vec<u32> = (0..k as u32).collect();
    loop {
        subsets.push(s.clone());
        let Some(i) = (0..k).rev().find(|&i| s[i] < base - (k - i) as u32) else {
            break;
        };
        s[i] += 1;
        for j in i + 1..k {
            s[j] = s[j - 1] + 1;
        }
    }
    // Switch 2s is a_S, 2s + 1 is b_S; link s is the primary link of S.
    let mut links: Vec<(u32, u32)> = (0..subsets.len() as u32)
        .map(|s| (2 * s, 2 * s + 1))
        .collect();
    let mut secondary: HashMap<(u32, u32), u32> = HashMap::new();
    let mut base_paths: Vec<Vec<u32>> = Vec::with_capacity(base as usize);
    for i in 0..base {
        let visits: Vec<u32> = (0..subsets.len() as u32)
            .filter(|&s| subsets[s as usize].contains(&i))
            .collect();
        let mut path = Vec::with_capacity(2 * visits.len());
        for (j, &s) in visits.iter().enumerate() {
            if j > 0 {
                let from = 2 * visits[j - 1] + 1;
                let next = links.len() as u32;
                let l = *secondary.entry((from, 2 * s)).or_insert(next);
                if l == next {
                    links.push((from, 2 * s));
                }
                path.push(l);
            }
            path.push(s);
        }
        base_paths.push(path);
    }
    let labels: Vec<String> = (0..2 * subsets.len())
        .map(|n| format!("{}{}", if n % 2 == 0 { 'a' } else { 'b' }, n / 2))
        .collect();
    let graph = Graph::new(
        "lower-bound",
        2 * subsets.len() as u32,
        links.clone(),
        Some(labels),
    )?;
    // Graph::new sorts links by tail; map the ids built above onto its order.
    let mut paths = Paths::new();
    for _ in 0..copies {
        for p in &base_paths {
            let p: Vec<u32> = p.iter().map(|&l| graph.given[l as usize]).collect();
            paths.push(&p);
        }
    }
    Ok(LowerBound {
        problem: Problem::new(graph, &paths)?,
        base,
        vcs: b,
        copies,
    })
}

/// The release policies the lower-bound check runs: all at once, random releases, the naive
/// and refined schedules, and one message at a time.
pub fn policies(p: &Problem, b: u32, flits: u32, seed: u64) -> Result<Vec<(String, Vec<u64>)>> {
    use rand::RngExt;
    let m = p.messages();
    let d = p.dilation();
    let gap = u64::from(flits + d - 1);
    let mut rng = crate::rng::stream(seed, crate::rng::Stream::Traffic);
    let spread = (m as u64 * u64::from(flits)).div_ceil(u64::from(b)).max(1);
    let random: Vec<u64> = (0..m).map(|_| rng.random_range(0..spread)).collect();
    let naive = super::schedule::greedy_colouring(p, 1);
    let greedy_b = super::schedule::greedy_colouring(p, b);
    let refined = super::schedule::refine(p, b, super::schedule::RMode::Adaptive, seed)?;
    Ok(vec![
        ("online".into(), vec![0; m]),
        ("random releases".into(), random),
        ("naive colouring".into(), naive.releases(flits, d)),
        ("greedy-B colouring".into(), greedy_b.releases(flits, d)),
        ("refined schedule".into(), refined.releases(flits, d)),
        (
            "one at a time".into(),
            (0..m as u64).map(|i| i * gap).collect(),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_size_matches_the_theorem() {
        // B = 1: 2(M' - 1) - 1 <= D < 2M' - 1.
        assert_eq!(base_messages(1, 9), 6);
        assert_eq!(base_messages(1, 10), 6);
        // B = 2, D = 9: binom(3, 2) = 3 <= 5 < binom(4, 2) = 6.
        assert_eq!(base_messages(2, 9), 4);
        for b in 1..=4 {
            for d in b + 1..200 {
                let m = u64::from(base_messages(b, d));
                assert!(2 * binom(m - 1, u64::from(b)) - 1 <= u64::from(d));
                assert!(u64::from(d) < 2 * binom(m, u64::from(b)) - 1);
            }
        }
    }

    #[test]
    fn every_b_plus_1_messages_share_a_primary_link() {
        for (b, c, d) in [(1, 2, 9), (2, 6, 11), (3, 4, 20)] {
            let lb = generate(b, c, d).unwrap();
            let p = &lb.problem;
            assert_eq!(p.congestion(), c);
            assert!(p.dilation() <= d);
            let k = binom(u64::from(lb.base) - 1, u64::from(b)) as u32;
            assert_eq!(p.dilation(), 2 * k - 1);
            assert_eq!(p.messages() as u32, c * lb.base / (b + 1));
            assert!(!p.graph.is_cyclic());
            // Among the base messages, each (B + 1)-set has a link all of them cross.
            let users = p.link_users();
            let primaries = users
                .iter()
                .filter(|u| {
                    let mut base: Vec<u32> = u.iter().map(|&m| m % lb.base).collect();
                    base.dedup();
                    base.sort_unstable();
                    base.dedup();
                    base.len() == b as usize + 1
                })
                .count() as u64;
            assert_eq!(primaries, binom(u64::from(lb.base), u64::from(b) + 1));
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(generate(0, 2, 9).is_err());
        assert!(generate(2, 4, 9).is_err());
        assert!(generate(2, 3, 2).is_err());
    }
}
