//! Offline release schedules of [CMS] §2: the messages are split into colour classes and the
//! classes released one after another, L + D − 1 cycles apart, so that classes never meet.
//! A class whose *multiplex* (the most of its messages crossing one link) is at most B never
//! blocks: each of its worms finds a free VC on every link, and moves unobstructed. In the
//! switch model a source starts its worms through an injection port of B VCs, so the port
//! counts as one more link of every message starting there ([`Problem::resources_of`]); in
//! [CMS] §1.1 the source feeds the first link directly and the port does not exist.
//!
//! - [`greedy_colouring`]: [CMS] footnote 5 (A000-0), a greedy colouring of the conflict graph,
//!   at most D(C − 1) + 1 classes (here (D + 1)(C − 1) + 1, C counting injection ports too: a
//!   message also holds its source's port); with `per_link = B`, its B-VC generalisation.
//! - [`refine`]: [CMS] Lemma 2.1.5 and Theorem 2.1.6 (A000-1): starting from one class of
//!   multiplex C, each step splits every class into r sub-classes at random and re-samples
//!   the sub-classes of a link's messages while more than m_f of one class cross it (a
//!   Moser–Tardos search for the assignment the Lovász local lemma proves exists), until the
//!   multiplex is at most B. `r` is the paper's value or the smallest that works
//!   ([`RMode`]).

use super::Problem;
use crate::error::{Error, Result};
use crate::rng::{Rng, Stream, stream};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How a refinement step picks its number of sub-classes r.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RMode {
    /// The r of [CMS] Lemma 2.1.5 in each of its cases (large: the proof's constants).
    Paper,
    /// The smallest r from ⌈m_s/m_f⌉ up for which re-sampling reaches multiplex m_f within
    /// its budget.
    Adaptive,
}

impl RMode {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "paper" => Ok(RMode::Paper),
            "adaptive" => Ok(RMode::Adaptive),
            _ => Err(Error::invalid("r-mode", s, "paper or adaptive")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RMode::Paper => "paper",
            RMode::Adaptive => "adaptive",
        }
    }
}

/// One refinement step: classes of multiplex `from` split `r` ways to multiplex at most `to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The case of [CMS] Lemma 2.1.5: 3 (m_s > D), 2 (lg D < m_s ≤ D) or 1 (B < m_s ≤ lg D).
    pub case: u32,
    pub from: u32,
    pub to: u32,
    pub r: u64,
    /// Sub-class draws after the first (Moser–Tardos re-samplings).
    pub resamples: u64,
}

/// A release schedule: a class per message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// The class of each message, `0..classes`.
    pub class: Vec<u32>,
    pub classes: u32,
    /// The most messages of one class on one link.
    pub multiplex: u32,
    pub steps: Vec<Step>,
}

impl Schedule {
    /// Class `i` released at `i·(L + D − 1)`: a class is delivered before the next starts.
    pub fn releases(&self, flits: u32, dilation: u32) -> Vec<u64> {
        let gap = u64::from(flits + dilation.max(1) - 1);
        self.class.iter().map(|&c| u64::from(c) * gap).collect()
    }

    /// The makespan the schedule promises: classes × (L + D − 1).
    pub fn length(&self, flits: u32, dilation: u32) -> u64 {
        u64::from(self.classes) * u64::from(flits + dilation.max(1) - 1)
    }
}

/// The multiplex of `class` on `problem`: the most messages of one class crossing one link.
pub fn multiplex(users: &[Vec<u32>], class: &[u64]) -> u32 {
    let mut worst = 0;
    let mut colours = Vec::new();
    for u in users {
        colours.clear();
        colours.extend(u.iter().map(|&m| class[m as usize]));
        colours.sort_unstable();
        worst = worst.max(longest_run(&colours));
    }
    worst
}

fn longest_run(sorted: &[u64]) -> u32 {
    let mut best = 0;
    let mut run = 0;
    for (i, &c) in sorted.iter().enumerate() {
        run = if i > 0 && sorted[i - 1] == c {
            run + 1
        } else {
            1
        };
        best = best.max(run);
    }
    best
}

/// Renumbers classes densely, in increasing order of their values.
fn compact(class: &[u64]) -> (Vec<u32>, u32) {
    let mut values: Vec<u64> = class.to_vec();
    values.sort_unstable();
    values.dedup();
    let index: HashMap<u64, u32> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, i as u32))
        .collect();
    (
        class.iter().map(|c| index[c]).collect(),
        values.len() as u32,
    )
}

/// [CMS] footnote 5: messages in order, each given the smallest class in which every link of
/// its path (and its injection port) carries fewer than `per_link` messages of that class (1: a
/// proper colouring of the conflict graph, at most (D + 1)(C − 1) + 1 classes, C over links and
/// ports).
pub fn greedy_colouring(problem: &Problem, per_link: u32) -> Schedule {
    let per_link = per_link.max(1);
    let mut load: HashMap<(u32, u32), u32> = HashMap::new();
    let mut class = Vec::with_capacity(problem.messages());
    for m in 0..problem.messages() {
        let held: Vec<u32> = problem.resources_of(m).collect();
        let c = (0u32..)
            .find(|&c| {
                held.iter()
                    .all(|&l| load.get(&(l, c)).copied().unwrap_or(0) < per_link)
            })
            .expect("a class with room");
        for &l in &held {
            *load.entry((l, c)).or_insert(0) += 1;
        }
        class.push(c);
    }
    let wide: Vec<u64> = class.iter().map(|&c| u64::from(c)).collect();
    let (class, classes) = compact(&wide);
    Schedule {
        multiplex: multiplex(&problem.resource_users(), &wide),
        class,
        classes,
        steps: Vec::new(),
    }
}

/// Passes over all links a refinement step may make re-sampling before it gives up.
const PASSES: u32 = 64;
/// Values of r an adaptive step tries before it gives up.
const ADAPTIVE_TRIES: u64 = 4096;

/// One refinement: every class split `r` ways at random, then, while some link carries more
/// than `target` messages of one new class, those messages draw again. `None` if the passes
/// run out.
fn split(
    users: &[Vec<u32>],
    class: &[u64],
    r: u64,
    target: u32,
    rng: &mut Rng,
) -> Option<(Vec<u64>, u64)> {
    let mut new: Vec<u64> = class
        .iter()
        .map(|&c| c * r + rng.random_range(0..r))
        .collect();
    let mut resamples = 0u64;
    let mut members: Vec<(u64, u32)> = Vec::new();
    for _ in 0..PASSES {
        let mut violated = false;
        for u in users {
            if u.len() <= target as usize {
                continue;
            }
            members.clear();
            members.extend(u.iter().map(|&m| (new[m as usize], m)));
            members.sort_unstable();
            let mut i = 0;
            while i < members.len() {
                let j = (i..members.len())
                    .find(|&j| members[j].0 != members[i].0)
                    .unwrap_or(members.len());
                if j - i > target as usize {
                    violated = true;
                    for &(_, m) in &members[i..j] {
                        new[m as usize] = class[m as usize] * r + rng.random_range(0..r);
                        resamples += 1;
                    }
                }
                i = j;
            }
        }
        if !violated {
            return Some((new, resamples));
        }
    }
    None
}

/// [CMS] Lemma 2.1.5 and Theorem 2.1.6 (A000-1): a schedule of multiplex at most `b`.
pub fn refine(problem: &Problem, b: u32, r_mode: RMode, seed: u64) -> Result<Schedule> {
    let users = problem.resource_users();
    // Congestion over the resources: links and injection ports.
    let c = users.iter().map(|u| u.len() as u32).max().unwrap_or(0);
    let d = problem.dilation().max(2);
    let b = b.max(1);
    let mut class = vec![0u64; problem.messages()];
    let mut steps = Vec::new();
    let mut rng = stream(seed, Stream::Routing);
    let lg_d = (f64::from(d).log2().floor() as u32).max(1);
    let e = std::f64::consts::E;
    let mut m_s = c;
    let mut step = |case: u32, from: u32, to: u32, paper_r: u64, class: &mut Vec<u64>| {
        let tries: Box<dyn Iterator<Item = u64>> = match r_mode {
            RMode::Paper => Box::new(std::iter::once(paper_r.max(1))),
            RMode::Adaptive => {
                let least = u64::from(from).div_ceil(u64::from(to));
                Box::new(least..least + ADAPTIVE_TRIES)
            }
        };
        for r in tries {
            if let Some((new, resamples)) = split(&users, class, r, to, &mut rng) {
                *class = new;
                steps.push(Step {
                    case,
                    from,
                    to,
                    r,
                    resamples,
                });
                // Keep class numbers small for the next split.
                let (dense, _) = compact(class);
                *class = dense.into_iter().map(u64::from).collect();
                return Ok(());
            }
        }
        Err(Error::invalid(
            "refinement",
            format!("multiplex {from} to {to}"),
            format!("a split whose re-sampling converges within {PASSES} passes"),
        ))
    };
    if c > b {
        // Case 3 (m_s > D): progress only where 15 ln³ m_s < m_s, from m_s ≈ 12 636 up.
        while m_s > d {
            let ln = f64::from(m_s).ln();
            let m_f = (d as f64).max((15.0 * ln.powi(3)).floor()) as u32;
            if m_f >= m_s {
                break;
            }
            let r = (f64::from(m_s) / ((1.0 - 1.0 / ln) * f64::from(m_f))).ceil() as u64;
            step(3, m_s, m_f, r, &mut class)?;
            m_s = m_f;
        }
        // Case 2 (lg D < m_s): to lg D (or B, if that is larger).
        let m_f = lg_d.max(b);
        if m_s > m_f {
            let r = (32.0 * e * f64::from(m_s) / f64::from(lg_d)).ceil() as u64;
            step(2, m_s, m_f, r, &mut class)?;
            m_s = m_f;
        }
        // Case 1 (B < m_s ≤ lg D): to B.
        if m_s > b {
            let r = (3.0
                * e
                * (f64::from(d) * f64::from(m_s)).powf(1.0 / f64::from(b))
                * f64::from(m_s)
                / f64::from(b))
            .ceil() as u64;
            step(1, m_s, b, r, &mut class)?;
        }
    }
    let found = multiplex(&users, &class);
    debug_assert!(found <= b);
    let (class, classes) = compact(&class);
    Ok(Schedule {
        class,
        classes,
        multiplex: found,
        steps,
    })
}

/// The number of classes [CMS] Theorem 2.1.6 bounds the schedule by, with the proof's
/// constants (1 when C ≤ B).
pub fn theorem_classes(c: u32, d: u32, b: u32) -> f64 {
    let (c, d, b) = (f64::from(c), f64::from(d.max(2)), f64::from(b.max(1)));
    let e = std::f64::consts::E;
    let lg_d = d.log2().floor().max(1.0);
    if c <= b {
        1.0
    } else if c <= lg_d {
        3.0 * e * (d * c).powf(1.0 / b) * c / b
    } else {
        (32.0 * e * c / lg_d) * (3.0 * e * lg_d * (d * lg_d).powf(1.0 / b) / b)
    }
}

/// The shape of [CMS] Theorem 2.1.6 without constants: (L + D)·C·(D·lg D)^(1/B)/B for
/// C > lg D, (L + D)·C·(D·C)^(1/B)/B below.
pub fn theorem_shape(c: u32, d: u32, flits: u32, b: u32) -> f64 {
    let (c, d, l, b) = (
        f64::from(c),
        f64::from(d.max(2)),
        f64::from(flits),
        f64::from(b.max(1)),
    );
    let lg_d = d.log2().floor().max(1.0);
    let inner = if c <= lg_d { d * c } else { d * lg_d };
    (l + d) * c * inner.powf(1.0 / b) / b
}

#[cfg(test)]
mod tests {
    use super::super::random_leveled;
    use super::*;

    #[test]
    fn classes_of_multiplex_b_never_block() {
        let p = random_leveled(6, 6, 2, 60, 4).unwrap();
        let (c, d) = (p.congestion(), p.dilation());
        assert!(c > 4, "congestion {c}");
        for b in [1, 2, 3] {
            for mode in [RMode::Adaptive, RMode::Paper] {
                let s = refine(&p, b, mode, 9).unwrap();
                assert!(s.multiplex <= b);
                let out = p.simulate(p.config(b, 5), &s.releases(5, d)).unwrap();
                assert_eq!((out.blocked, out.slowed), (0, 0), "B = {b}, {mode:?}");
                assert!(out.makespan <= s.length(5, d));
            }
            let naive = greedy_colouring(&p, 1);
            assert!(naive.multiplex <= 1);
            let c_ports = p.resource_users().iter().map(|u| u.len()).max().unwrap() as u64;
            assert!(u64::from(naive.classes) <= u64::from(d + 1) * (c_ports - 1) + 1);
            let naive = greedy_colouring(&p, b);
            assert!(naive.multiplex <= b);
            let out = p.simulate(p.config(b, 5), &naive.releases(5, d)).unwrap();
            assert_eq!(out.blocked, 0);
        }
    }

    #[test]
    fn paper_r_makes_more_classes_than_adaptive() {
        let p = random_leveled(6, 8, 2, 80, 5).unwrap();
        let paper = refine(&p, 2, RMode::Paper, 1).unwrap();
        let adaptive = refine(&p, 2, RMode::Adaptive, 1).unwrap();
        assert!(adaptive.classes < paper.classes);
        assert!(f64::from(paper.classes) <= theorem_classes(p.congestion(), p.dilation(), 2));
    }
}
